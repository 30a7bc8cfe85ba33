import Foundation
import InMemoryTracing
import RelatePostgres
import Testing
import Tracing

@testable import Relate

/// Units of work and statements as spans (issue 40, item 2), checked with
/// swift-distributed-tracing's `InMemoryTracer` handed to the configuration (nothing global).
@Suite struct TracingTests {
    static func database(_ url: String, tracer: InMemoryTracer) throws -> Database {
        var configuration = Configuration(maxConnections: 1)
        configuration.tracer = tracer
        return try Database(url: url, configuration: configuration)
    }

    static func string(_ span: FinishedInMemorySpan, _ key: String) -> String? {
        if case .string(let value) = span.attributes.get(key) { return value }
        return nil
    }

    static func int(_ span: FinishedInMemorySpan, _ key: String) -> Int? {
        switch span.attributes.get(key) {
        case .int64(let value): Int(value)
        case .int32(let value): Int(value)
        default: nil
        }
    }

    @Test func statementsAreClientSpansInTheUnitsSpanUnderTheCallersSpan() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.execute("CREATE TABLE person (id serial PRIMARY KEY, surname text)")
            try setup.execute("INSERT INTO person (surname) VALUES ('Hopper')")
            let tracer = InMemoryTracer()
            let database = try Self.database(url, tracer: tracer)
            defer { database.close() }
            tracer.clearAll()
            let names = try await tracer.withSpan("GET /people") { _ in
                try await database.read { context in
                    try context.fetch("person", where: Key("surname") == "Hopper").map { try $0.value(forKey: "surname", as: String.self) }
                }
            }
            #expect(names == ["Hopper"])
            let spans = tracer.finishedSpans
            let request = try #require(spans.first { $0.operationName == "GET /people" })
            let unit = try #require(spans.first { $0.operationName == "relate.read" })
            #expect(unit.parentSpanID == request.spanID && unit.traceID == request.traceID)
            let statements = spans.filter { $0.parentSpanID == unit.spanID }
            let select = try #require(statements.first { $0.operationName == "SELECT public.person" })
            #expect(select.kind == .client)
            #expect(select.traceID == request.traceID)
            #expect(Self.string(select, "db.system.name") == "postgresql")
            #expect(Self.string(select, "db.namespace") == setup.databaseName)
            #expect(Self.string(select, "db.operation.name") == "SELECT")
            #expect(Self.string(select, "db.collection.name") == "public.person")
            #expect(Self.string(select, "server.address") == setup.host)
            #expect(Self.int(select, "server.port") == setup.port)
            // The SQL with its placeholder, never the value.
            let text = try #require(Self.string(select, "db.query.text"))
            #expect(text.contains("$1") && !text.contains("Hopper"))
            #expect(select.errors.isEmpty && select.attributes.get("db.response.status_code") == nil)
        }
    }

    @Test func aRefusedStatementRecordsItsSQLSTATEAndTheError() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.execute("CREATE TABLE person (id int PRIMARY KEY)")
            try setup.execute("INSERT INTO person VALUES (1)")
            let tracer = InMemoryTracer()
            let database = try Self.database(url, tracer: tracer)
            defer { database.close() }
            tracer.clearAll()
            await #expect(throws: RelateError.self) {
                try await database.write { context in _ = try context.insert("person", values: ["id": 1]) }
            }
            let spans = tracer.finishedSpans
            let insert = try #require(spans.first { $0.operationName.hasPrefix("INSERT") || $0.operationName.hasPrefix("BATCH INSERT") })
            #expect(Self.string(insert, "db.response.status_code") == "23505")
            #expect(insert.errors.count == 1)
            #expect(insert.status?.code == .error)
            let unit = try #require(spans.first { $0.operationName == "relate.write" })
            #expect(unit.errors.count == 1 && unit.status?.code == .error)
            // BEGIN with the insert (one round trip, named after the insert, the BEGIN in its
            // query text), then ROLLBACK: each round trip a span of the unit.
            #expect(spans.filter { $0.parentSpanID == unit.spanID }.count == 2)
            #expect(Self.string(insert, "db.query.text")?.hasPrefix("BEGIN; INSERT") == true)
        }
    }

    @Test func aPipelineIsOneSpanNamedAsABatch() async throws {
        let tracer = InMemoryTracer()
        let database = try Self.database(TestDatabase.url(), tracer: tracer)
        defer { database.close() }
        tracer.clearAll()
        try await database.read { context in
            _ = try context.connection.pipeline([PostgresStatement("SELECT $1::int", [1]), PostgresStatement("SELECT $1::int", [2])])
        }
        let batch = try #require(tracer.finishedSpans.first { $0.operationName == "BATCH SELECT" })
        #expect(Self.int(batch, "db.operation.batch.size") == 2)
        #expect(Self.string(batch, "db.query.text") == "SELECT $1::int; SELECT $1::int")
    }

    @Test func withoutATracerNoSpanIsMade() async throws {
        // No tracer in the configuration, none bootstrapped: the global one is the no-op one.
        let database = try Database(url: TestDatabase.url(), maxConnections: 1)
        defer { database.close() }
        #expect(database.tracer == nil)
        #expect(try await database.read { $0.connection.roundTripObserver == nil })
    }
}
