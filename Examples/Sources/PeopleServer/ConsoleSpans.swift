import Foundation
import InMemoryTracing
import Logging
import ServiceLifecycle
import Tracing

/// Spans to the console, when no OTLP collector is configured. swift-otel 1.6.0 has no
/// console span exporter (`OTEL_TRACES_EXPORTER=console` throws its `NotImplementedError`),
/// so the spans are recorded by swift-distributed-tracing's `InMemoryTracer` and this service
/// takes them every second: it logs one request's spans in full (the latest trace that
/// finished, as a tree in start order) and how many traces there were, so that the console
/// stays readable under load.
struct ConsoleSpans: Service {
    let tracer: InMemoryTracer
    let logger: Logger

    func run() async throws {
        // Ends at a graceful shutdown; what is left is printed by the last round.
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            printRecent()
        }
        printRecent()
    }

    /// Logs the spans finished since the last call: the newest whole trace, and a count.
    private func printRecent() {
        let spans = tracer.popFinishedSpans()
        guard !spans.isEmpty else { return }
        // A trace is whole once its root (no parent) has finished.
        let roots = spans.filter { $0.parentSpanID == nil }
        guard let root = roots.max(by: { $0.endInstant.nanosecondsSinceEpoch < $1.endInstant.nanosecondsSinceEpoch }) else { return }
        let trace = spans.filter { $0.traceID == root.traceID }
        logger.info("\(roots.count) traces, \(spans.count) spans in the last second; the latest trace \(root.traceID):")
        print(root, depth: 0, in: trace)
    }

    /// Logs `span` and, indented, its children in start order.
    private func print(_ span: FinishedInMemorySpan, depth: Int, in trace: [FinishedInMemorySpan]) {
        let micros = (span.endInstant.nanosecondsSinceEpoch - span.startInstant.nanosecondsSinceEpoch) / 1000
        var attributes: [String] = []
        span.attributes.forEach { name, value in attributes.append("\(name)=\(value)") }
        let failed = span.errors.isEmpty ? "" : " error: \(span.errors.map { "\($0.error)" }.joined(separator: "; "))"
        logger.info(
            "\(String(repeating: "  ", count: depth))\(span.operationName) [\(span.kind)] \(micros) µs \(attributes.sorted().joined(separator: " "))\(failed)")
        for child in trace.filter({ $0.parentSpanID == span.spanID })
            .sorted(by: { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch })
        {
            print(child, depth: depth + 1, in: trace)
        }
    }
}
