import Foundation
import RelatePostgres
import Testing

@Suite struct TransactionAndPipelineTests {
    /// Each value reaches its placeholder, whatever comes before it: NULLs (no bytes),
    /// empty texts (a NUL alone), binary values (no NUL), through a query and a pipeline.
    @Test func everyParameterLandsInItsPlace() throws {
        let connection = try TestDatabase.connect()
        let sql = "SELECT $1::int8, $2::text IS NULL, $3::text, $4::text, $5::float8, $6::int8 IS NULL, $7::text"
        let parameters: [(any PostgresEncodable)?] = [7, nil, "", "after", 2.5, nil, "last"]
        func check(_ row: PostgresRow) throws {
            #expect(try row.decode(Int.self, at: 0) == 7)
            #expect(try row.decode(Bool.self, at: 1))
            #expect(try row.decode(String.self, at: 2) == "")
            #expect(try row.decode(String.self, at: 3) == "after")
            #expect(try row.decode(Double.self, at: 4) == 2.5)
            #expect(try row.decode(Bool.self, at: 5))
            #expect(try row.decode(String.self, at: 6) == "last")
        }
        try check(try connection.query(sql, parameters, format: .binary)[0])
        let results = try connection.pipeline([PostgresStatement(sql, parameters), PostgresStatement("SELECT $1::text", [nil])])
        try check(results[0][0])
        #expect(try results[1][0].decode(String?.self, at: 0) == nil)
        #expect(try connection.query("SELECT 1")[0].decode(Int.self, at: 0) == 1)
    }

    struct Boom: Error {}

    @Test func throwingBodyLeavesNothingBehind() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("CREATE TABLE item (id int PRIMARY KEY)")
            #expect(throws: Boom.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO item VALUES (1), (2)")
                    throw Boom()
                }
            }
            #expect(try connection.query("SELECT count(*) FROM item")[0].decode(Int.self, at: 0) == 0)
            #expect(!connection.isInTransaction)
            try connection.transaction { try connection.execute("INSERT INTO item VALUES (3)") }
            #expect(try connection.query("SELECT count(*) FROM item")[0].decode(Int.self, at: 0) == 1)
        }
    }

    @Test func nestedTransactionsUseSavepoints() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("CREATE TABLE item (id int PRIMARY KEY)")
            try connection.transaction {
                try connection.execute("INSERT INTO item VALUES (1)")
                // A failing inner block (a constraint violation) is undone alone.
                #expect(throws: PostgresError.self) {
                    try connection.transaction {
                        try connection.execute("INSERT INTO item VALUES (2)")
                        try connection.execute("INSERT INTO item VALUES (1)")
                    }
                }
                try connection.transaction { try connection.execute("INSERT INTO item VALUES (4)") }
            }
            let ids = try connection.query("SELECT id FROM item ORDER BY id").map { try $0.decode(Int.self, at: 0) }
            #expect(ids == [1, 4])
        }
    }

    @Test func pipelineOfAThousandInsertsIsOneRoundTrip() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("CREATE TABLE item (id int PRIMARY KEY, label text)")
            let statements = (1...1000).map { (id: Int) in
                PostgresStatement("INSERT INTO item VALUES ($1, $2)", [id, "item \(id)"])
            }
            let before = connection.roundTrips
            let results = try connection.pipeline(statements)
            #expect(connection.roundTrips - before == 1)
            #expect(results.count == 1000)
            #expect(results.allSatisfy { $0.affectedRows == 1 })
            let check = try connection.query("SELECT count(*), sum(id) FROM item")[0]
            #expect(try check.decode(Int.self, at: 0) == 1000)
            #expect(try check.decode(Int.self, at: 1) == 500_500)
        }
    }

    @Test func pipelineReturnsRowsOfEachStatement() throws {
        let connection = try TestDatabase.connect()
        let results = try connection.pipeline([
            PostgresStatement("SELECT $1::int + 1", [1], format: .binary),
            PostgresStatement("SELECT $1::text || '!'", ["hi"]),
            PostgresStatement("SELECT generate_series(1, $1::int)", [3]),
        ])
        #expect(try results[0][0].decode(Int.self, at: 0) == 2)
        #expect(try results[1][0].decode(String.self, at: 0) == "hi!")
        #expect(results[2].count == 3)
    }

    @Test func pipelineWithAFailingStatementNamesItAndAppliesNothing() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("CREATE TABLE item (id int PRIMARY KEY)")
            let statements = [1, 2, 3, 2, 5].map { PostgresStatement("INSERT INTO item VALUES ($1)", [$0]) }
            let error = #expect(throws: PostgresError.self) { try connection.pipeline(statements) }
            #expect(error?.statementIndex == 3)
            #expect(error?.sqlState == .uniqueViolation)
            #expect("\(error!)".contains("statement #3"))
            #expect(try connection.query("SELECT count(*) FROM item")[0].decode(Int.self, at: 0) == 0)
            // The connection is usable afterwards, in and out of pipelines.
            try connection.pipeline([PostgresStatement("INSERT INTO item VALUES (9)")])
            #expect(try connection.query("SELECT count(*) FROM item")[0].decode(Int.self, at: 0) == 1)
        }
    }

    @Test func pipelineRefusesUnsendableParameterBeforeSending() throws {
        let connection = try TestDatabase.connect()
        let before = connection.roundTrips
        let error = #expect(throws: PostgresError.self) {
            try connection.pipeline([PostgresStatement("SELECT 1"), PostgresStatement("SELECT $1::text", ["a\u{0}"])])
        }
        #expect(error?.statementIndex == 1)
        #expect(connection.roundTrips == before)
    }

    @Test func roundTripsAreCounted() throws {
        let connection = try TestDatabase.connect()
        let before = connection.roundTrips
        try connection.query("SELECT 1")
        try connection.execute("SELECT 2")
        try connection.transaction { try connection.execute("SELECT 3") }
        // BEGIN goes with the transaction's first statement; a transaction that sends
        // nothing sends neither BEGIN nor COMMIT.
        #expect(connection.roundTrips - before == 4)
        try connection.transaction {}
        #expect(connection.roundTrips - before == 4)
    }
}
