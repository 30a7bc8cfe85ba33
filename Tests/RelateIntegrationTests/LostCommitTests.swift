import Foundation
import RelatePostgres
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

    /// `url` (of RELATE_TEST_URL's server) reached through `proxy`.
    static func url(_ url: String, through proxy: DroppingProxy) throws -> String {
        guard var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true else {
            throw TestFailure("LostCommitTests need RELATE_TEST_URL as a postgresql:// URL")
        }
        components.host = "127.0.0.1"
        components.port = proxy.port
        components.queryItems = (components.queryItems ?? []).filter { !["sslmode", "gssencmode", "host", "hostaddr", "port"].contains($0.name) }
            + [URLQueryItem(name: "sslmode", value: "disable"), URLQueryItem(name: "gssencmode", value: "disable")]
        return components.string ?? url
    }

    /// The fault matrix's cell for a lost COMMIT: every unit of work of ``FaultMatrixTests``
    /// run as a `write` unit whose connection is dropped right after the server's COMMIT
    /// reply (the unit returns, and the database holds all of it) or right before its COMMIT
    /// reaches the server (connectionClosed, and the database holds none of it). A unit that
    /// writes nothing (prefetch) throws connectionClosed either way.
    @Test(arguments: FaultMatrixTests.units)
    func aCommitReplyLostInEveryUnitOfWork(_ unit: FaultMatrixTests.Unit) async throws {
        try await TestDatabase.withDatabase { url in
            guard let port = URLComponents(string: url)?.port else { throw TestFailure("RELATE_TEST_URL has no port") }
            let setup = try Connection(url: url)
            func contents() throws -> String { try setup.query(FaultMatrixTests.contents)[0].decode(String.self, at: 0) }
            try setup.executeScript(FaultMatrixTests.schema)
            let before = try contents()
            // What the unit leaves when nothing goes wrong.
            try unit.run(try DatabaseContext(url: url))
            let after = try contents()
            let writes = after != before

            let proxy = try DroppingProxy(target: port)
            let database = try Database(url: try Self.url(url, through: proxy), maxConnections: 1)
            defer { database.close() }
            for fault in [DroppingProxy.Fault.afterCommitReply, .beforeCommit] {
                try setup.executeScript(FaultMatrixTests.schema)
                proxy.arm(fault)
                var failure: (any Error)?
                do {
                    try await database.write { context in try unit.run(context) }
                } catch {
                    failure = error
                }
                let committed = writes && fault == .afterCommitReply
                #expect(proxy.drops > 0, "\(unit.name), \(fault): the proxy saw no COMMIT")
                #expect(try contents() == (committed ? after : before), "\(unit.name), \(fault)")
                if committed {
                    #expect(failure == nil, "\(unit.name), \(fault): \(String(describing: failure))")
                } else {
                    let error = failure as? RelateError
                    #expect(error?.postgresError?.kind == .connectionClosed, "\(unit.name), \(fault): \(String(describing: failure))")
                    #expect(error?.kind != .commitOutcomeUnknown, "\(unit.name), \(fault): \(String(describing: failure))")
                }
            }
        }
    }

    /// Learning the transaction's id costs a write unit no round trip: the same unit sends as
    /// many with it as without, and the id learnt is the server's.
    @Test func learningTheTransactionIDAddsNoRoundTrip() throws {
        try TestDatabase.withDatabase { url in
            let connection = try Connection(url: url)
            try connection.executeScript(FaultMatrixTests.schema)
            let context = try DatabaseContext(url: url)
            var trips: [Bool: Int] = [:]
            // Twice without: the first run prepares the update by key (a round trip, once).
            for learning in [false, false, true] {
                let start = context.connection.roundTrips
                var learnt: Int?
                var server: Int?
                try context.transaction(options: TransactionOptions(learnsTransactionID: learning)) {
                    let people = try context.fetch("person")
                    #expect(context.connection.transactionID == nil, "a read assigns no transaction id")
                    try people[0].setValue("Byron \(learning)", forKey: "surname")
                    try context.prefetch(["email"], for: people)
                    learnt = context.connection.transactionID
                    server = try connection.query(
                        "SELECT backend_xid::text::int8 FROM pg_stat_activity WHERE pid = $1", [context.connection.backendProcessID]
                    )[0].decode(Int?.self, at: 0)
                }
                trips[learning] = context.connection.roundTrips - start
                #expect(learning ? learnt != nil : learnt == nil)
                if learning { #expect(learnt.map { $0 & 0xFFFF_FFFF } == server) }
                #expect(context.connection.transactionID == nil)
                context.reset()
            }
            #expect(trips[true] == trips[false])
        }
    }
}
