import CLibPQRaw
import Foundation
import InMemoryTracing
import Relate
import RelatePostgres
import Synchronization

/// The concurrency issue's benchmarks: `bench_pool.person (id int4 PRIMARY KEY, firstname
/// text, surname text)`, 1,000 rows, read one row by primary key at a time.
///
/// - Relate: `database.read { context.object("person", primaryKey:)…firstname }` through
///   the pool (checkout, a job on the pool's thread, a fresh context, the query, the object).
/// - Raw: the same `SELECT` with one text parameter by `PQexecParams` on a kept connection,
///   the first column of the row read.
package final class PoolState: Sendable {
    package static let rows = 1_000
    package static let connections = 4
    package static let select = "SELECT id, firstname, surname FROM bench_pool.person WHERE id = $1"

    package let database: Database
    /// One raw connection per pool connection, each used by one thread at a time.
    private nonisolated(unsafe) let raw: [RawConnection]

    /// - Parameter traced: Whether the database traces every unit and statement (an
    ///   `InMemoryTracer`, which keeps each span: the cost of tracing on, against the
    ///   default, no tracer, which makes no span).
    package init(traced: Bool = false) throws {
        let url = try Fixture.url()
        let setup = try Connection(url: url)
        try setup.executeScript("""
            CREATE SCHEMA IF NOT EXISTS bench_pool;
            CREATE TABLE IF NOT EXISTS bench_pool.person (id int4 PRIMARY KEY, firstname text, surname text);
            TRUNCATE bench_pool.person;
            INSERT INTO bench_pool.person SELECT g, 'first ' || g, 'last ' || g FROM generate_series(1, \(Self.rows)) AS g
            """)
        var configuration = Configuration(schemas: ["bench_pool"], maxConnections: Self.connections)
        if traced { configuration.tracer = InMemoryTracer() }
        database = try Database(url: url, configuration: configuration)
        raw = try (0..<Self.connections).map { _ in try RawConnection(url: url) }
    }

    /// One row by primary key, through the pool.
    package func readThroughPool(id: Int) async throws -> String? {
        try await database.read { context in
            try context.object("person", primaryKey: id)?.value(forKey: "firstname", as: String.self)
        }
    }

    /// The same row by one raw round trip on kept connection `connection`.
    package func readRaw(id: Int, connection: Int = 0) throws -> String? {
        try Self.readRaw(id: id, on: raw[connection].handle)
    }

    /// `ids` read raw as `readRaw` does, on the pool's own connection: inside one unit (one
    /// hop for them all), on the thread and server process the units use, so that where the
    /// scheduler puts two server processes does not weigh on the comparison.
    package func readRawOnPoolConnection(ids: ClosedRange<Int>) async throws -> Int {
        try await database.read { context in
            try context.connection.withUnsafeHandle { handle in
                try ids.reduce(0) { count, id in count + (try Self.readRaw(id: id, on: handle) != nil ? 1 : 0) }
            }
        }
    }

    private static func readRaw(id: Int, on handle: OpaquePointer) throws -> String? {
        let text = String(id)
        let result: OpaquePointer? = text.withCString { parameter in
            var values: [UnsafePointer<CChar>?] = [parameter]
            return PQexecParams(handle, Self.select, 1, nil, &values, nil, nil, 0)
        }
        guard let result else { throw RawConnection.Failure(description: String(cString: PQerrorMessage(handle))) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            throw RawConnection.Failure(description: String(cString: PQresultErrorMessage(result)))
        }
        guard PQntuples(result) == 1 else { return nil }
        return String(cString: PQgetvalue(result, 0, 1))
    }

    /// `tasks` concurrent tasks, `units` reads each, through the pool.
    package func concurrentReads(tasks: Int, units: Int) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var found = 0
                    for unit in 0..<units where try await self.readThroughPool(id: 1 + (task * units + unit) % Self.rows) != nil {
                        found += 1
                    }
                    return found
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// The same reads raw: one thread per connection, each doing its share.
    package func concurrentReadsRaw(tasks: Int, units: Int) throws -> Int {
        let total = tasks * units
        let share = total / Self.connections
        let found = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: Self.connections) { connection in
            var count = 0
            for unit in 0..<share where (try? readRaw(id: 1 + (connection * share + unit) % Self.rows, connection: connection)) != nil {
                count += 1
            }
            found.wrappingAdd(count, ordering: .relaxed)
        }
        return found.load(ordering: .relaxed)
    }

    /// A context from the shared model on a kept connection, as a unit of work makes one.
    package func makeContext() async throws -> Int {
        try await database.read { context in
            var made = 0
            for _ in 0..<100 {
                let fresh = try DatabaseContext(connection: context.connection, model: context.model)
                made += fresh.model.entities.count
            }
            return made
        }
    }
}

/// Where a read through the pool spends its time, taken apart by clocks read on both sides
/// of the hop (`RelateProfile pool-hops`): from the caller to the body's first line on the
/// pool's thread (checkout, the job handed over, a fresh context), the body (the query and
/// the object), and from the body's last line back to the caller (the context reset, the
/// continuation resumed, the connection given back). Raw reads on a kept connection run
/// in turns with them, on the same thread as the caller.
package enum PoolHops {
    package static func run(reads: Int) async throws -> [String] {
        let state = try PoolState()
        var toBody: [Duration] = [], body: [Duration] = [], back: [Duration] = [], raw: [Duration] = [], empty: [Duration] = [], rawOnWorker: [Duration] = []
        let clock = ContinuousClock()
        for id in (1...reads).map({ 1 + $0 % PoolState.rows }) {
            let start = clock.now
            let (bodyStart, bodyEnd) = try await state.database.read { context in
                let bodyStart = clock.now
                _ = try context.object("person", primaryKey: id)?.value(forKey: "firstname", as: String.self)
                return (bodyStart, clock.now)
            }
            let end = clock.now
            toBody.append(bodyStart - start)
            body.append(bodyEnd - bodyStart)
            back.append(end - bodyEnd)
            let rawStart = clock.now
            _ = try state.readRaw(id: id)
            raw.append(clock.now - rawStart)
            let emptyStart = clock.now
            _ = try await state.database.read { _ in id }
            empty.append(clock.now - emptyStart)
            rawOnWorker.append(try await state.database.read { _ in
                let start = clock.now
                _ = try state.readRaw(id: id)
                return clock.now - start
            })
        }
        func median(_ values: [Duration]) -> String {
            let sorted = values.sorted()
            let micros = { (duration: Duration) in Double(duration.components.attoseconds) / 1e12 + Double(duration.components.seconds) * 1e6 }
            return String(format: "%.1f µs (p10 %.1f, p90 %.1f)", micros(sorted[sorted.count / 2]),
                          micros(sorted[sorted.count / 10]), micros(sorted[sorted.count * 9 / 10]))
        }
        let totals = zip(zip(toBody, body), back).map { $0.0 + $0.1 + $1 }
        return [
            "\(reads) reads through database.read, each followed by the same read raw and an empty unit:",
            "  to the body on the pool's thread: \(median(toBody))",
            "  the body (query and object):      \(median(body))",
            "  back to the caller:               \(median(back))",
            "  whole read:                       \(median(totals))",
            "  raw round trip (caller's thread): \(median(raw))",
            "  raw round trip on the pool's thread: \(median(rawOnWorker))",
            "  empty unit (database.read { _ in }): \(median(empty))",
        ]
    }
}
