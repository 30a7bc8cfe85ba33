import Foundation
import Testing

@testable import Relate

/// A `write` unit whose connection is lost during `COMMIT` (issue 26, item 4): a proxy of
/// the test's own (``DroppingProxy``) drops the connection right after the server's
/// `COMMIT` reply, or before the `COMMIT` reaches the server, and the unit answers what the
/// server says of its transaction (`txid_status`, asked on a new connection).
@Suite struct LostCommitTests {
    /// `TestServers` for a closure the proxy's thread runs.
    private struct Servers: @unchecked Sendable { let value: TestServers }

    @Test func aLostCommitReplyIsAskedOfTheServer() async throws {
        let servers = try TestServers("single")
        let port = servers.ports[0]
        let setup = try Connection(url: servers.url(port: port))
        try setup.execute("CREATE TABLE item (id int PRIMARY KEY, label text)")
        func stored(_ id: Int, on connection: Connection) throws -> Int {
            try connection.query("SELECT count(*) FROM item WHERE id = $1", [id])[0].decode(Int.self, at: 0)
        }
        let proxy = try DroppingProxy(target: port)
        let database = try Database(url: proxy.url(), maxConnections: 2)
        defer { database.close() }

        // The server committed and its reply was lost: the unit returns its result.
        proxy.arm(.afterCommitReply)
        let answer = try await database.write { context in
            _ = try context.insert("item", values: ["id": 1, "label": "committed"])
            return 42
        }
        #expect(answer == 42)
        #expect(proxy.drops == 1)
        #expect(try stored(1, on: setup) == 1)

        // The COMMIT never reached the server: connectionClosed, as for any lost connection.
        proxy.arm(.beforeCommit)
        let aborted = await #expect(throws: RelateError.self) {
            try await database.write { context in
                _ = try context.insert("item", values: ["id": 2, "label": "aborted"])
                return 0
            }
        }
        #expect(proxy.drops == 2)
        #expect(aborted?.postgresError?.kind == .connectionClosed)
        #expect(aborted?.kind != .commitOutcomeUnknown)
        #expect(try stored(2, on: setup) == 0)

        // A unit that wrote nothing had nothing to commit: connectionClosed, nothing asked.
        proxy.arm(.afterCommitReply)
        let readOnly = await #expect(throws: RelateError.self) {
            try await database.write { context in try context.count("item") }
        }
        #expect(proxy.drops == 3)
        #expect(readOnly?.postgresError?.kind == .connectionClosed)

        // The server stops (-m immediate) once it has committed: nobody can say.
        let box = Servers(value: servers)
        proxy.arm(.afterCommitReply) { _ = try? box.value.run("stop-primary") }
        let unknown = await #expect(throws: RelateError.self) {
            try await database.write { context in
                _ = try context.insert("item", values: ["id": 3, "label": "unknown"])
                return 0
            }
        }
        #expect(unknown?.kind == .commitOutcomeUnknown)
        #expect(unknown?.message.contains("whether it committed is unknown") == true, "\(String(describing: unknown))")
        #expect(unknown?.postgresError?.kind == .connectionClosed)
        // It had committed: the server says so once it is back.
        try servers.run("restart-primary")
        #expect(try stored(3, on: try Connection(url: servers.url(port: port))) == 1)
        // And the pool serves again.
        #expect(try await database.read { context in try context.count("item") } == 2)
    }
}
