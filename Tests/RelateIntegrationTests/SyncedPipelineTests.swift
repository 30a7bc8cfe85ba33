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
