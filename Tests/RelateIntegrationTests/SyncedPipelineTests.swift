import Foundation
import RelatePostgres
import Testing

/// `pipeline(groups:)`: many transactions in one round trip, each failing alone, none
/// leaving its settings or an aborted transaction to the next.
@Suite struct SyncedPipelineTests {
    @Test func aFailedGroupFailsAloneAndItsTransactionEndsWithTheNextGroup() throws {
        let connection = try TestDatabase.connect()
        let roundTrips = connection.roundTrips
        let answers = try connection.pipeline(groups: [
            [
                PostgresStatement("BEGIN READ ONLY"), PostgresStatement("SELECT set_config($1, $2, true)", ["app.tenant", "1"]),
                PostgresStatement("SELECT current_setting('app.tenant')"),
            ],
            [PostgresStatement("COMMIT")],
            [
                PostgresStatement("BEGIN READ ONLY"), PostgresStatement("SELECT set_config($1, $2, true)", ["app.tenant", "2"]),
                PostgresStatement("SELECT 1 / 0"), PostgresStatement("SELECT 'never'"),
            ],
            [PostgresStatement("COMMIT")],
            [PostgresStatement("BEGIN READ ONLY"), PostgresStatement("SELECT coalesce(current_setting('app.tenant', true), '')")],
            [PostgresStatement("COMMIT")],
        ])
        #expect(connection.roundTrips == roundTrips + 1)
        #expect(answers.count == 6)
        #expect(try answers[0].get().last?[0].decode(String.self, at: 0) == "1")
        guard case .failure(let error) = answers[2] else {
            Issue.record("the division by zero did not fail its group")
            return
        }
        #expect(error.sqlState?.rawValue == "22012" && error.statementIndex == 6)
        // COMMIT of the aborted transaction rolled it back; the next began afresh, without
        // the settings of either transaction before it.
        #expect((try? answers[3].get()) != nil)
        #expect(try answers[4].get().last?[0].decode(String.self, at: 0) == "")
        #expect(!connection.isInTransaction)
        #expect(try connection.query("SELECT 41 + 1")[0].decode(Int.self, at: 0) == 42)
    }

    /// A statement that asks to be prepared is prepared in the pipeline that first sends it
    /// and run by name afterwards, generic plan and all; a session that lost its statements
    /// fails that group alone, and the next pipeline prepares it again; a statement whose
    /// prepare fails fails its group, and no name is kept for it.
    @Test func aStatementThatPreparesIsPreparedOnceAndRunByName() throws {
        let connection = try TestDatabase.connect()
        func tests(_ value: Int) -> [[PostgresStatement]] {
            var test = PostgresStatement("SELECT $1::int4 * 2 AS doubled, current_setting('plan_cache_mode')", [value])
            test.prepares = true
            return [
                [PostgresStatement("BEGIN READ ONLY"), PostgresStatement("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"), test],
                [PostgresStatement("COMMIT")], [test],
            ]
        }
        func prepared() throws -> Int {
            try connection.query("SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql")[0].decode(Int.self, at: 0)
        }
        for value in [1, 2] {
            let answers = try connection.pipeline(groups: tests(value))
            #expect(try answers[0].get().last?[0].decode(Int.self, at: 0) == 2 * value)
            #expect(try answers[0].get().last?[0].decode(String.self, at: 1) == "force_generic_plan")
            #expect(try answers[2].get().last?[0].decode(Int.self, at: 0) == 2 * value)
            #expect(try prepared() == 1)
        }
        // The session loses its statements (a pooler's restart does so): that group fails
        // with the server's word, and the next pipeline prepares it again.
        try connection.query("DEALLOCATE ALL")
        let lost = try connection.pipeline(groups: [tests(3)[2]])
        guard case .failure(let error) = lost[0] else {
            Issue.record("a statement the session lost ran")
            return
        }
        #expect(error.sqlState == .invalidSQLStatementName)
        #expect(try connection.pipeline(groups: [tests(4)[2]])[0].get().last?[0].decode(Int.self, at: 0) == 8)
        #expect(try prepared() == 1)

        var broken = PostgresStatement("SELEC 1")
        broken.prepares = true
        let answers = try connection.pipeline(groups: [[broken], [PostgresStatement("SELECT 7")]])
        guard case .failure(let syntax) = answers[0] else {
            Issue.record("a statement that cannot be prepared ran")
            return
        }
        #expect(syntax.sqlState?.rawValue == "42601")
        #expect(try answers[1].get().last?[0].decode(Int.self, at: 0) == 7)
        #expect(try prepared() == 1)
        #expect(try connection.pipeline(groups: [[broken]]).first.map { if case .failure = $0 { true } else { false } } == true)

        // Lost a second time (a pooler in transaction mode loses them every transaction):
        // the connection stops preparing, and the statement goes as it is from then on.
        try connection.query("DEALLOCATE ALL")
        #expect(try connection.pipeline(groups: [tests(5)[2]]).first.map { if case .failure = $0 { true } else { false } } == true)
        #expect(!connection.preparesStatements)
        #expect(try connection.pipeline(groups: [tests(6)[2]])[0].get().last?[0].decode(Int.self, at: 0) == 12)
        #expect(try prepared() == 0)
    }

    @Test func noGroupsSendNothing() throws {
        let connection = try TestDatabase.connect()
        let roundTrips = connection.roundTrips
        #expect(try connection.pipeline(groups: [[], []]).count == 2)
        #expect(connection.roundTrips == roundTrips)
    }

    @Test func aLostConnectionThrowsAndClosesIt() throws {
        let connection = try TestDatabase.connect()
        let error = #expect(throws: PostgresError.self) {
            try connection.pipeline(groups: [[PostgresStatement("SELECT 1")], [PostgresStatement("SELECT pg_terminate_backend(pg_backend_pid())")], [PostgresStatement("SELECT 3")]])
        }
        #expect(error?.kind == .connectionClosed)
        let next = #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(next?.kind == .connectionClosed)
    }
}
