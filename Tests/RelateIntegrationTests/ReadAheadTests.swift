import CLibPQ
import Foundation
import RelatePostgres
import Testing

/// A statement sent ahead: its result waits for whoever asks, and statements sent meanwhile
/// run in order after it.
@Suite struct ReadAheadTests {
    @Test func aStatementSentMeanwhileReadsTheResultAheadFirst() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.executeScript("CREATE TABLE item (id int PRIMARY KEY); INSERT INTO item SELECT generate_series(1, 5)")
            try connection.transaction {
                try connection.execute("DECLARE walk NO SCROLL CURSOR FOR SELECT id FROM item ORDER BY id")
                try connection.sendAhead("FETCH FORWARD 2 FROM walk", format: .binary)
                // Sent after the FETCH: it sees the cursor moved by it.
                let next = try connection.query("FETCH FORWARD 1 FROM walk", format: .binary)
                #expect(try next[0].decode(Int.self, at: 0) == 3)
                let ahead = try connection.resultSentAhead()
                #expect(try ahead.map { try $0.decode(Int.self, at: 0) } == [1, 2])
            }
        }
    }

    @Test func anErrorAheadIsTheResultsNotTheNextStatements() throws {
        let connection = try TestDatabase.connect()
        try connection.sendAhead("SELECT 1/0")
        #expect(try connection.query("SELECT 2")[0].decode(Int.self, at: 0) == 2)
        let error = #expect(throws: PostgresError.self) { try connection.resultSentAhead() }
        #expect(error?.sqlState?.rawValue == "22012")
        // Asked twice, or never sent: an error that says so.
        let none = #expect(throws: PostgresError.self) { try connection.resultSentAhead() }
        #expect(none?.message.contains("no statement was sent ahead") == true)
        // Discarded while in flight: the connection is free again.
        try connection.sendAhead("SELECT pg_sleep(0.05)")
        connection.discardSentAhead()
        #expect(try connection.query("SELECT 3")[0].decode(Int.self, at: 0) == 3)
    }

    /// libpq's handle is lent free: a statement sent ahead is read first (its result kept),
    /// and a closed connection lends none.
    @Test func theHandleIsLentFreeOfAStatementSentAhead() throws {
        let connection = try TestDatabase.connect()
        let backend = try connection.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0)
        try connection.sendAhead("SELECT 41 + 1")
        let (pid, busy) = try connection.withUnsafeHandle { handle in (Int(PQbackendPID(handle)), PQisBusy(handle)) }
        #expect(pid == backend)
        #expect(busy == 0)
        #expect(try connection.resultSentAhead()[0].decode(Int.self, at: 0) == 42)
        connection.close()
        let error = #expect(throws: PostgresError.self) { try connection.withUnsafeHandle { _ in } }
        #expect(error?.kind == .connectionClosed)
    }
}
