import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// `Connection.queryPrepared`: a statement prepared on the server once per connection and
/// run by name after, and what happens when the server no longer holds it.
@Suite struct PreparedStatementTests {
    /// This connection's prepared statements, as the server lists them.
    private func preparedOnServer(_ connection: Connection) throws -> [String] {
        try connection.query("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'relate\\_%' ORDER BY prepare_time")
            .map { try $0.decode(String.self, at: 0) }
    }

    @Test func aStatementIsPreparedOnceThenRunByName() throws {
        let connection = try TestDatabase.connect()
        let sql = "SELECT $1::int8 * 2"
        var trips = connection.roundTrips
        // The prepare and the first run go in one pipeline: one round trip from the first use.
        #expect(try connection.queryPrepared(sql, [21])[0].decode(Int.self, at: 0) == 42)
        #expect(connection.roundTrips == trips + 1)
        trips = connection.roundTrips
        #expect(try connection.queryPrepared(sql, [4], format: .binary)[0].decode(Int.self, at: 0) == 8)
        #expect(connection.roundTrips == trips + 1)
        #expect(try preparedOnServer(connection) == [sql])
        // Other parameter types make another statement ($1 was declared int8); a String and
        // a NULL go untyped alike, and the server gives $1 the type the statement needs.
        #expect(try connection.queryPrepared(sql, ["5"])[0].decode(Int.self, at: 0) == 10)
        #expect(try connection.queryPrepared(sql, [nil])[0].decode(Int?.self, at: 0) == nil)
        #expect(try preparedOnServer(connection).count == 2)
        // A statement the server refuses is not kept.
        let error = #expect(throws: PostgresError.self) { try connection.queryPrepared("SELEC $1", [1]) }
        #expect(error?.sqlState == .syntaxError)
        #expect(try preparedOnServer(connection).count == 2)
    }

    /// Statements are told apart by their bytes, as the server parses them: with a literal
    /// in a composed `é` and in a decomposed one (one string to Swift's `==`), the second
    /// ran the first's statement, and answered the first's literal. In a pipeline too.
    @Test func statementsThatDifferOnlyInTheirBytesAreTwo() throws {
        let connection = try TestDatabase.connect()
        let (composed, decomposed) = ("SELECT 'caf\u{E9}' WHERE $1", "SELECT 'cafe\u{301}' WHERE $1")
        #expect(composed == decomposed)
        func bytes(_ result: PostgresResult) throws -> [UInt8] { Array(try result[0].decode(String.self, at: 0).utf8) }
        #expect(try bytes(connection.queryPrepared(composed, [true])) == Array("caf\u{E9}".utf8))
        #expect(try bytes(connection.queryPrepared(decomposed, [true])) == Array("cafe\u{301}".utf8))
        #expect(try preparedOnServer(connection).count == 2)
        // Prepared in one pipeline, on a connection that holds neither yet.
        let fresh = try TestDatabase.connect()
        var statements = [PostgresStatement(composed, [true]), PostgresStatement(decomposed, [true])]
        for index in statements.indices { statements[index].prepares = true }
        let results = try fresh.pipeline(groups: [statements])[0].get()
        #expect(try results.map(bytes) == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
        #expect(try preparedOnServer(fresh).count == 2)
    }

    @Test func offItRunsAsAQuery() throws {
        let connection = try TestDatabase.connect()
        connection.preparesStatements = false
        let trips = connection.roundTrips
        #expect(try connection.queryPrepared("SELECT $1::text", ["a"])[0].decode(String.self, at: 0) == "a")
        #expect(connection.roundTrips == trips + 1)
        #expect(try preparedOnServer(connection).isEmpty)
    }

    /// Statements lost by the session (here `DEALLOCATE ALL`; a pooler restarted): outside a
    /// transaction the statement is prepared again and run, in one round trip; a second loss
    /// turns preparing off (a pooler lending sessions would lose them for ever). Inside a
    /// transaction the error names the setting.
    @Test func lostStatementsArePreparedAgainOutsideATransaction() throws {
        let connection = try TestDatabase.connect()
        let sql = "SELECT $1::int8 + 1"
        #expect(try connection.queryPrepared(sql, [1])[0].decode(Int.self, at: 0) == 2)
        try connection.execute("DEALLOCATE ALL")
        var trips = connection.roundTrips
        #expect(try connection.queryPrepared(sql, [2])[0].decode(Int.self, at: 0) == 3)
        #expect(connection.roundTrips == trips + 2)
        #expect(connection.preparesStatements)
        #expect(try preparedOnServer(connection) == [sql])
        trips = connection.roundTrips
        #expect(try connection.queryPrepared(sql, [3])[0].decode(Int.self, at: 0) == 4)
        #expect(connection.roundTrips == trips + 1)

        try connection.execute("DEALLOCATE ALL")
        #expect(try connection.queryPrepared(sql, [4])[0].decode(Int.self, at: 0) == 5)
        #expect(!connection.preparesStatements)
        #expect(try preparedOnServer(connection).isEmpty)

        let inside = try TestDatabase.connect()
        #expect(try inside.queryPrepared(sql, [1])[0].decode(Int.self, at: 0) == 2)
        try inside.execute("DEALLOCATE ALL")
        let error = #expect(throws: PostgresError.self) {
            try inside.transaction {
                // Not the first statement: that one carries the transaction's BEGIN, unprepared.
                try inside.execute("SELECT 1")
                _ = try inside.queryPrepared(sql, [5])
            }
        }
        #expect(error?.sqlState == .invalidSQLStatementName)
        #expect(error?.message.contains("preparesStatements") == true)
        // The transaction rolled back; the connection goes on, preparing afresh.
        #expect(try inside.queryPrepared(sql, [5])[0].decode(Int.self, at: 0) == 6)
        #expect(inside.preparesStatements)
        #expect(try preparedOnServer(inside) == [sql])
    }

    /// A table's column changed type under a prepared `SELECT *`: the server refuses the
    /// old plan's shape; the statement is prepared afresh and run, and the old one
    /// deallocated, in one round trip.
    @Test func aResultThatChangedShapeIsPreparedAgain() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("CREATE TABLE thing (id int PRIMARY KEY, size int)")
            try connection.execute("INSERT INTO thing VALUES (1, 7)")
            let sql = "SELECT * FROM thing WHERE id = $1"
            #expect(try connection.queryPrepared(sql, [1], format: .binary)[0].decode(Int.self, at: 1) == 7)
            try connection.execute("ALTER TABLE thing ALTER COLUMN size TYPE text")
            var trips = connection.roundTrips
            #expect(try connection.queryPrepared(sql, [1], format: .binary)[0].decode(String.self, at: 1) == "7")
            #expect(connection.roundTrips == trips + 2)
            #expect(connection.preparesStatements)
            #expect(try preparedOnServer(connection) == [sql])
            trips = connection.roundTrips
            #expect(try connection.queryPrepared(sql, [1], format: .binary)[0].decode(String.self, at: 1) == "7")
            #expect(connection.roundTrips == trips + 1)

            // Inside a transaction the refusal aborted it: thrown, and prepared afresh after.
            try connection.execute("ALTER TABLE thing ALTER COLUMN size TYPE int USING size::int")
            let error = #expect(throws: PostgresError.self) {
                try connection.transaction {
                    try connection.execute("SELECT 1")
                    _ = try connection.queryPrepared(sql, [1], format: .binary)
                }
            }
            #expect(error?.sqlState == .featureNotSupported)
            #expect(try connection.queryPrepared(sql, [1], format: .binary)[0].decode(Int.self, at: 1) == 7)
            #expect(try preparedOnServer(connection) == [sql])
        }
    }

    /// A column's type changed under a warm pool: every pooled connection had the object
    /// layer's by-key read prepared; each prepares it afresh at its next use (the refused
    /// run, then the prepare and run in one round trip), and no unit sees an error.
    @Test func aWarmPoolSurvivesAColumnTypeChange() async throws {
        try await TestDatabase.withDatabase { url in
            let admin = try Connection(url: url)
            try admin.executeScript("""
                CREATE TABLE thing (id int PRIMARY KEY, name varchar(20));
                INSERT INTO thing VALUES (1, 'one'), (2, 'two'), (3, 'three');
                """)
            let database = try Database(url: url, maxConnections: 3)
            struct Read: Sendable { var connection: Int, name: String?, roundTrips: Int }
            // Three units at once, each holding its connection a moment: all three are used.
            func everyConnection() async throws -> [Int: Read] {
                try await withThrowingTaskGroup(of: (Int, Read).self) { group in
                    for id in 1...3 {
                        group.addTask {
                            try await database.read { context in
                                let start = context.connection.roundTrips
                                let thing = try #require(try context.object("thing", primaryKey: id))
                                let trips = context.connection.roundTrips - start
                                Thread.sleep(forTimeInterval: 0.3)
                                let name = try thing.value(forKey: "name") as? String
                                return (id, Read(connection: context.connection.backendProcessID, name: name, roundTrips: trips))
                            }
                        }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
            }
            _ = try await everyConnection()
            let warm = try await everyConnection()
            #expect(Set(warm.values.map(\.connection)).count == 3)
            #expect(warm.values.allSatisfy { $0.roundTrips == 1 })
            try admin.execute("ALTER TABLE thing ALTER COLUMN name TYPE varchar(40)")
            let after = try await everyConnection()
            #expect(Set(after.values.map(\.connection)) == Set(warm.values.map(\.connection)))
            #expect(after.values.allSatisfy { $0.roundTrips == 2 })
            #expect(after.mapValues(\.name) == [1: "one", 2: "two", 3: "three"])
        }
    }

    /// The same SQLSTATE raised while the statement runs (a trigger refusing the write) is
    /// the statement's error: thrown, the statement not run again, kept prepared.
    @Test func aTriggersFeatureNotSupportedIsTheStatementsError() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE SEQUENCE fired;
                CREATE TABLE thing (id int PRIMARY KEY, size int);
                INSERT INTO thing VALUES (1, 7);
                CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM nextval('fired');
                    IF NEW.size > 100 THEN RAISE EXCEPTION 'too big' USING ERRCODE = 'feature_not_supported'; END IF;
                    RETURN NEW;
                END $$;
                CREATE TRIGGER refuse BEFORE UPDATE ON thing FOR EACH ROW EXECUTE FUNCTION refuse();
                """)
            let sql = "UPDATE thing SET size = $1 WHERE id = $2"
            try connection.queryPrepared(sql, [8, 1])
            let error = #expect(throws: PostgresError.self) { try connection.queryPrepared(sql, [500, 1]) }
            #expect(error?.sqlState == .featureNotSupported)
            #expect(try connection.query("SELECT last_value FROM fired")[0].decode(Int.self, at: 0) == 2)
            #expect(try preparedOnServer(connection) == [sql])
            #expect(connection.preparesStatements)
        }
    }

    @Test func aNewSessionPreparesAgain() throws {
        let connection = try TestDatabase.connect()
        let sql = "SELECT $1::int8"
        _ = try connection.queryPrepared(sql, [1])
        try connection.reconnect()
        let trips = connection.roundTrips
        #expect(try connection.queryPrepared(sql, [3])[0].decode(Int.self, at: 0) == 3)
        #expect(connection.roundTrips == trips + 1)
    }

    @Test func aConnectionKeepsAtMost256() throws {
        let connection = try TestDatabase.connect()
        for n in 0..<300 {
            #expect(try connection.queryPrepared("SELECT $1::int8 + \(n)", [1])[0].decode(Int.self, at: 0) == n + 1)
        }
        #expect(try preparedOnServer(connection).count == 256)
    }

    /// The object layer prepares its by-key statements: each is parsed once per connection,
    /// and a context configured not to prepares none.
    @Test func theObjectLayerPreparesItsByKeyStatements() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            for id in [1, 2, 1] {
                context.reset()
                _ = try context.object("person", primaryKey: id)
                _ = try context.update("person", primaryKey: id, values: ["surname": "S\(id)"])
            }
            #expect(try context.delete("email", primaryKey: 3))
            let statements = try preparedOnServer(context.connection)
            #expect(statements.count == 3)
            #expect(statements.allSatisfy { $0.hasPrefix("SELECT") || $0.hasPrefix("UPDATE") || $0.hasPrefix("DELETE") })
            #expect(try fixture.disagreements() == [])
        }
        let url = try TestDatabase.url()
        var configuration = Configuration()
        configuration.preparesStatements = false
        let unprepared = try DatabaseContext(url: url, configuration: configuration)
        #expect(!unprepared.connection.preparesStatements)
    }
}
