import Foundation
import Testing

@testable import Relate

/// One ``Configuration`` for contexts and `Database`: what it sets on the connections
/// Relate opens, and what it leaves alone.
@Suite struct ConfigurationTests {
    @Test func aContextOpenedFromAURLTakesTheConfigurationsSchemasRuleAndTimeout() throws {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample("seed_person_title", into: connection, schema: schema)
            let configuration = Configuration(schemas: [schema], manyToMany: .strict, statementTimeout: .milliseconds(300))
            let context = try DatabaseContext(url: try TestDatabase.url(), configuration: configuration)
            #expect(context.model.manyToManyRule == .strict)
            #expect(context.model.entities.map(\.name).sorted() == ["person", "person_title_rel", "title"])
            let timeout = try context.connection.query("SHOW statement_timeout")[0].decode(String.self, at: 0)
            #expect(timeout == "300ms")
            let error = #expect(throws: PostgresError.self) { try context.connection.execute("SELECT pg_sleep(3)") }
            #expect(error?.sqlState?.rawValue == "57014")
        }
    }

    @Test func aConnectionHandedToAContextIsLeftAsItIs() throws {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample("seed_person_email", into: connection, schema: schema)
            let before = try connection.query("SHOW statement_timeout")[0].decode(String.self, at: 0)
            let context = try DatabaseContext(connection: connection, configuration: Configuration(statementTimeout: .seconds(1)))
            #expect(try connection.query("SHOW statement_timeout")[0].decode(String.self, at: 0) == before)
            #expect(context.model.entities.count == 2)
        }
    }

    @Test func aPoolOfNoConnectionsIsAnInvalidRequestNamingTheOption() throws {
        let error = #expect(throws: RelateError.self) {
            try Database(url: try TestDatabase.url(), configuration: Configuration(maxConnections: 0))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.key == "maxConnections")
    }
}
