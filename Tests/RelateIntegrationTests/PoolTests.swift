import Foundation
import MetricsTestKit
import RelatePostgres
import Testing

@testable import Relate

/// The pool's production options (issue 27, item 3): connections opened ahead, an idle
/// timeout, a checkout timeout that says how busy the pool was, and metrics through
/// swift-metrics (its test backend, handed to the configuration: nothing global).
@Suite struct PoolTests {
    private static func database(_ adjust: (inout Configuration) -> Void) throws -> Database {
        var configuration = Configuration(maxConnections: 4)
        adjust(&configuration)
        return try Database(url: TestDatabase.url(), configuration: configuration)
    }

    /// Polls `condition` every 20 ms for at most `seconds`.
    private static func eventually(within seconds: Double = 5, _ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<Int(seconds * 50) {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test func idleConnectionsAreOpenedAhead() async throws {
        let database = try Self.database { $0.minIdleConnections = 3 }
        defer { database.close() }
        #expect(try await Self.eventually(within: 10) { database.idleConnections == 3 })
        #expect(database.openConnections == 3)
        // A unit takes one: another opens in its place, so three stay idle (four open).
        try await database.read { _ = try $0.connection.query("SELECT pg_sleep(0.3)") }
        #expect(try await Self.eventually(within: 10) { database.openConnections == 4 })
        #expect(database.idleConnections == 4)
    }

    @Test func idleConnectionsCloseAfterTheTimeout() async throws {
        let database = try Self.database {
            $0.minIdleConnections = 1
            $0.idleTimeout = .milliseconds(500)
        }
        defer { database.close() }
        // Four units at once open four connections (seen while they sleep)…
        let units = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Long enough to overlap however late a loaded machine starts them.
                for _ in 0..<4 { group.addTask { try await database.read { _ = try $0.connection.query("SELECT pg_sleep(3)") } } }
                try await group.waitForAll()
            }
        }
        #expect(try await Self.eventually(within: 10) { database.openConnections == 4 })
        try await units.value
        // …and, idle past the timeout, all but the minimum close.
        #expect(try await Self.eventually(within: 10) { database.openConnections == 1 })
        #expect(database.idleConnections == 1)
        // Still serves.
        #expect(try await database.read { try $0.connection.query("SELECT 1")[0].decode(Int.self, at: 0) } == 1)
    }

    @Test func aCheckoutTimeoutSaysHowBusyThePoolWas() async throws {
        let database = try Self.database {
            $0.maxConnections = 1
            $0.checkoutTimeout = .milliseconds(200)
        }
        defer { database.close() }
        let holder = Task { try await database.read { _ = try $0.connection.query("SELECT pg_sleep(40)") } }
        try await Task.sleep(for: .milliseconds(200))
        let clock = ContinuousClock()
        let start = clock.now
        let errors = await withTaskGroup(of: RelateError?.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    do {
                        try await database.read { _ = try $0.connection.query("SELECT 1") }
                        return nil
                    } catch {
                        return error as? RelateError
                    }
                }
            }
            return await group.reduce(into: [RelateError?]()) { $0.append($1) }
        }
        // 200 ms, with room for a loaded machine (the whole suite at once on 2 cores kept
        // these tasks from resuming for over 8 s, once for 22 s: synchronous tests hold the
        // cooperative threads); well before the holder's 40 s.
        #expect(clock.now - start < .seconds(35))
        #expect(errors.allSatisfy { $0?.kind == .checkoutTimeout })
        let messages = errors.compactMap { $0?.message }
        #expect(messages.allSatisfy { $0.contains("1 of 1 connections busy") }, "\(messages)")
        // The first to give up saw the two others still waiting.
        #expect(messages.contains { $0.contains("2 other tasks waiting") }, "\(messages)")
        try await holder.value
        // The pool serves again once the connection is given back.
        #expect(try await database.read { try $0.connection.query("SELECT 1")[0].decode(Int.self, at: 0) } == 1)
    }

    @Test func poolAndStatementMetricsReachTheBackend() async throws {
        let metrics = TestMetrics()
        let dimensions = [("pool", "primary"), ("database", "metrics-test")]
        let database = try Self.database {
            $0.maxConnections = 2
            $0.metricsFactory = metrics
            $0.metricsDimensions = [("database", "metrics-test")]
        }
        defer { database.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Units long enough to overlap even when a loaded machine is slow to start tasks.
            for _ in 0..<6 { group.addTask { try await database.read { _ = try $0.connection.query("SELECT pg_sleep(0.3)") } } }
            try await group.waitForAll()
        }
        let statements = try metrics.expectTimer("relate.statement.duration", dimensions)
        #expect(statements.values.count >= 6)
        #expect(statements.values.contains { $0 >= 50_000_000 })
        let checkouts = try metrics.expectTimer("relate.pool.checkout.duration", dimensions)
        #expect(checkouts.values.count == 6)
        // Six units on two connections: some waited, and a checkout took as long as a unit.
        #expect(checkouts.values.contains { $0 >= 40_000_000 })
        let waiting = try metrics.expectGauge("relate.pool.waiting", dimensions)
        #expect(waiting.values.contains { $0 >= 1 })
        #expect(waiting.lastValue == 0)
        let inUse = try metrics.expectGauge("relate.pool.connections.in_use", dimensions)
        #expect(inUse.values.contains(2))
        #expect(inUse.lastValue == 0)
        let idle = try metrics.expectGauge("relate.pool.connections.idle", dimensions)
        #expect(idle.lastValue == 2)
    }

    @Test func withoutABackendNothingIsMeasured() throws {
        // No factory given and none bootstrapped: no metrics object, so no clock is read.
        #expect(PoolMetrics.make(pool: "primary", dimensions: [], factory: nil) == nil)
        let connection = try TestDatabase.connect()
        let database = try Self.database { _ in }
        defer { database.close() }
        #expect(connection.statementTimer == nil)
        #expect(PoolMetrics.make(pool: "primary", dimensions: [], factory: TestMetrics()) != nil)
    }
}
