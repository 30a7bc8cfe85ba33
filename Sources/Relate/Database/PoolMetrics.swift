import CoreMetrics
import Foundation

/// What a pool reports through swift-metrics: connections in use and idle, tasks waiting
/// (gauges), the time a checkout took and the time each statement took (timers). Made
/// only when a metrics backend is set: without one the pool reads no clock and records
/// nothing.
///
/// Labels (each with the dimension `pool`: `primary`, or `replica0`, `replica1`, … in the
/// order of ``Configuration/replicas``, and ``Configuration/metricsDimensions``):
/// `relate.pool.connections.in_use`, `relate.pool.connections.idle`, `relate.pool.waiting`,
/// `relate.pool.checkout.duration`, `relate.statement.duration`.
final class PoolMetrics: Sendable {
    let inUse: Gauge
    let idle: Gauge
    let waiting: Gauge
    let checkout: CoreMetrics.Timer
    let statement: CoreMetrics.Timer

    /// Metrics for the pool `pool`, or `nil` when no backend is set (`factory` is `nil` and
    /// the global one is swift-metrics' no-op).
    static func make(pool: String, dimensions: [(String, String)], factory: (any MetricsFactory)?) -> PoolMetrics? {
        let factory = factory ?? MetricsSystem.factory
        if factory is NOOPMetricsHandler { return nil }
        return PoolMetrics(dimensions: [("pool", pool)] + dimensions, factory: factory)
    }

    private init(dimensions: [(String, String)], factory: any MetricsFactory) {
        inUse = Gauge(label: "relate.pool.connections.in_use", dimensions: dimensions, factory: factory)
        idle = Gauge(label: "relate.pool.connections.idle", dimensions: dimensions, factory: factory)
        waiting = Gauge(label: "relate.pool.waiting", dimensions: dimensions, factory: factory)
        checkout = CoreMetrics.Timer(label: "relate.pool.checkout.duration", dimensions: dimensions, factory: factory)
        statement = CoreMetrics.Timer(label: "relate.statement.duration", dimensions: dimensions, factory: factory)
    }

    /// Records the pool's counts.
    func record(inUse: Int, idle: Int, waiting: Int) {
        self.inUse.record(inUse)
        self.idle.record(idle)
        self.waiting.record(waiting)
    }

    /// Records one statement's time (a `Connection.statementTimer`).
    func recordStatement(_ duration: Duration) {
        statement.recordNanoseconds(Self.nanoseconds(duration))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
