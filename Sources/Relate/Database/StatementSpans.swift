import RelatePostgres
import Tracing

/// Makes every round trip of one connection a span of kind `client`, with OpenTelemetry's
/// database attributes: the ``RoundTripObserver`` a ``Database`` gives each connection it
/// opens when a tracer is set. Used on the connection's thread only, as the connection is.
///
/// libpq runs on the pool's threads, where the caller's task-local `ServiceContext` is not
/// to be found: the unit carries it over (``context``), and each span is a child of it.
final class StatementSpans: RoundTripObserver {
    private let tracer: any Tracer
    /// `db.namespace`, `server.address`, `server.port`: what the connection reached.
    private let namespace: String?
    private let address: String?
    private let port: Int?
    /// The context of the unit running on the connection now (its span); `nil` between
    /// units, when spans are roots (a change feed's reads).
    var context: ServiceContext?
    /// Summaries of the statements seen, by SQL: a program repeats few statements, so each
    /// is read once (at most `capacity` kept).
    private var summaries: [String: StatementSummary] = [:]
    private static let capacity = 512

    init(tracer: any Tracer, connection: Connection) {
        self.tracer = tracer
        namespace = connection.databaseName
        address = connection.host
        port = connection.port
    }

    func observe<Result>(_ roundTrip: RoundTrip, _ exchange: () throws -> Result) rethrows -> Result {
        // Named after what the caller asked for, not what the connection added (a
        // transaction's id asked in the same pipeline); the query text holds all that was sent.
        let statements = roundTrip.requestedStatements.map(summary)
        let first = statements.first ?? StatementSummary(operation: nil, collection: nil)
        var name = first.spanName
        var operation = first.operation
        var collection = first.collection
        if statements.count > 1 {
            // A pipeline: one round trip, one span, named as OpenTelemetry names a batch.
            let same = statements.allSatisfy { $0.operation == first.operation }
            operation = same ? first.operation.map { "BATCH \($0)" } : "BATCH"
            collection = statements.allSatisfy({ $0.collection == first.collection }) ? first.collection : nil
            name = collection.map { "\(operation!) \($0)" } ?? operation!
        }
        let span = tracer.startSpan(name, context: context ?? .topLevel, ofKind: .client)
        defer { span.end() }
        span.updateAttributes { attributes in
            attributes["db.system.name"] = "postgresql"
            attributes["db.namespace"] = namespace
            attributes["server.address"] = address
            attributes["server.port"] = port
            attributes["db.operation.name"] = operation
            attributes["db.collection.name"] = collection
            // The SQL with its placeholders; a script's is left out (no placeholders: it may
            // hold values as literals).
            if roundTrip.kind != .script { attributes["db.query.text"] = roundTrip.statements.joined(separator: "; ") }
            if statements.count > 1 { attributes["db.operation.batch.size"] = statements.count }
        }
        do {
            return try exchange()
        } catch {
            if let state = (error as? PostgresError)?.sqlState?.rawValue {
                span.updateAttributes { $0["db.response.status_code"] = state }
            }
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    private func summary(of sql: String) -> StatementSummary {
        if let known = summaries[sql] { return known }
        if summaries.count >= Self.capacity { summaries.removeAll(keepingCapacity: true) }
        let summary = StatementSummary(sql: sql)
        summaries[sql] = summary
        return summary
    }
}
