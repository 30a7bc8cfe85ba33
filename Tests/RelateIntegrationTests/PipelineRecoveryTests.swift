import Foundation
import RelatePostgres
import Testing

/// However a pipeline fails, the connection leaves pipeline mode: it answers the next plain
/// query, or (when the server is gone) says so at once, never hangs or answers wrongly.
@Suite struct PipelineRecoveryTests {
    private func answersAPlainQuery(_ connection: Connection) throws -> Bool {
        try connection.query("SELECT 41 + 1")[0].decode(Int.self, at: 0) == 42
    }

    @Test func aFailedStatementLeavesTheConnectionUsable() throws {
        let connection = try TestDatabase.connect()
        let error = #expect(throws: PostgresError.self) {
            try connection.pipeline([
                PostgresStatement("SELECT 1"), PostgresStatement("SELECT 1 / 0"), PostgresStatement("SELECT 3"),
            ])
        }
        #expect(error?.statementIndex == 1 && error?.sqlState?.rawValue == "22012")
        #expect(try answersAPlainQuery(connection))
    }

    @Test func aCopyInAPipelineIsRefusedAndTheConnectionStaysUsable() throws {
        let connection = try TestDatabase.connect()
        #expect(throws: PostgresError.self) {
            try connection.pipeline([PostgresStatement("SELECT 1"), PostgresStatement("COPY (SELECT 1) TO STDOUT")])
        }
        #expect(try answersAPlainQuery(connection))
    }

    @Test func aStatementThatEndsTheSessionGivesAConnectionError() throws {
        let connection = try TestDatabase.connect()
        let error = #expect(throws: PostgresError.self) {
            try connection.pipeline([
                PostgresStatement("SELECT 1"), PostgresStatement("SELECT pg_terminate_backend(pg_backend_pid())"),
                PostgresStatement("SELECT 3"),
            ])
        }
        #expect(error?.kind == .connectionClosed)
        let next = #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(next?.kind == .connectionClosed)
    }

    /// The server ended the session before the pipeline was sent (the client has not
    /// noticed yet): sending or syncing fails, and the drain must not wait for a sync point
    /// that will never come.
    @Test func aSessionEndedByAnotherClientFailsWithoutHanging() throws {
        let connection = try TestDatabase.connect()
        let pid = try connection.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0)
        let other = try TestDatabase.connect()
        try other.execute("SELECT pg_terminate_backend($1::int)", [pid])
        // Give the server time to close the socket.
        for _ in 0..<50 where try other.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int", [pid])[0].decode(Int.self, at: 0) > 0 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let error = #expect(throws: PostgresError.self) {
            try connection.pipeline((0..<100).map { PostgresStatement("SELECT $1::int", [$0]) })
        }
        #expect(error?.kind == .connectionClosed)
        let next = #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(next?.kind == .connectionClosed)
    }

    /// A transaction begun by other means is the outer one: `transaction` makes a
    /// savepoint in it rather than a second BEGIN (which the server would only warn about,
    /// and whose COMMIT would end the caller's transaction).
    @Test func aTransactionInsideOneBegunByHandUsesASavepoint() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("CREATE TABLE item (id int PRIMARY KEY)")
            var sent: [String] = []
            connection.trace = { sent.append($0) }
            try connection.execute("BEGIN")
            try connection.transaction { try connection.execute("INSERT INTO item VALUES (1)") }
            #expect(connection.isInTransaction)
            try connection.execute("ROLLBACK")
            #expect(sent == ["BEGIN", "SAVEPOINT relate_savepoint_1", "INSERT INTO item VALUES (1)", "RELEASE SAVEPOINT relate_savepoint_1", "ROLLBACK"])
            #expect(try connection.query("SELECT count(*) FROM item")[0].decode(Int.self, at: 0) == 0)
        }
    }

    /// Raw cell access is scoped: the bytes are read inside the closure, while the result lives.
    @Test func cellsAreReadInsideAScope() throws {
        let connection = try TestDatabase.connect()
        let bytes = try connection.query("SELECT 'abc'::text, NULL::text")[0].withCell(at: 0) { $0.map(Array.init) }
        #expect(bytes == Array("abc".utf8))
        #expect(try connection.query("SELECT NULL::text")[0].withCell(at: 0) { $0 == nil })
    }
}
