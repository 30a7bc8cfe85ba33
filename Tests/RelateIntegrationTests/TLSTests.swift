import Foundation
import Testing

@testable import Relate

/// A server of the test's own that takes TLS connections only (`scripts/test-servers tls`:
/// `hostssl` lines alone in pg_hba.conf, a CA and certificates made by openssl now, SCRAM
/// for `relate`, client certificates for `relate_cert`, wal_level=logical). Without openssl
/// or PostgreSQL the script fails, and so does the test: it never skips.
final class TLSServer {
    let servers: TestServers
    let port: Int
    let password: String
    /// The folder of ca.crt, other-ca.crt, client.crt and client.key.
    let tls: String

    init() throws {
        servers = try TestServers("tls")
        port = servers.ports[0]
        password = try String(contentsOfFile: servers.directory + "/password", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        tls = servers.directory + "/tls"
    }

    /// `relate` with its password, `sslmode=verify-full` against `root` for the name `host`
    /// (reached at 127.0.0.1), `channel_binding=require`.
    func url(host: String = "localhost", root: String = "ca.crt", _ extra: String = "") -> String {
        "postgresql://relate:\(password)@\(host):\(port)/postgres?hostaddr=127.0.0.1&sslmode=verify-full"
            + "&sslrootcert=\(tls)/\(root)&channel_binding=require&connect_timeout=5\(extra)"
    }

    /// `relate_cert`, authenticated by its client certificate alone (no password).
    var certificateURL: String {
        "postgresql://relate_cert@localhost:\(port)/postgres?hostaddr=127.0.0.1&sslmode=verify-full"
            + "&sslrootcert=\(tls)/ca.crt&sslcert=\(tls)/client.crt&sslkey=\(tls)/client.key&connect_timeout=5"
    }

    /// Connections to the server without TLS (none can exist: pg_hba.conf has no entry for them).
    func connectionsWithoutTLS(_ connection: Connection) throws -> Int {
        try connection.query(
            """
            SELECT count(*) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
             WHERE a.backend_type IN ('client backend', 'walsender') AND NOT s.ssl
            """)[0].decode(Int.self, at: 0)
    }
}

/// TLS end to end (issue 26, item 3): everything Relate connects with — a context, the pool,
/// both change feeds (whose connections are derived from the context's through libpq's
/// `PQconninfo`), `relate inspect` — against a server that refuses anything but TLS, with
/// `sslmode=verify-full` and `channel_binding=require`; and the failures say libpq's reason.
@Suite struct TLSTests {
    @Test func verifyFullReachesEveryConnectionRelateOpens() async throws {
        let server = try TLSServer()
        let url = server.url()
        let setup = try Connection(url: url)
        #expect(try setup.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")[0].decode(Bool.self, at: 0))
        try setup.executeScript(ChangeTrackingTests.schema)
        try ChangeTracking.enable(on: setup)
        try ChangeTracking.enable(logicalDecodingOn: setup)

        // A context and each of its feeds.
        for mechanism in ChangeTracking.Mechanism.allCases {
            let observer = try ChangeTrackingTests.Observer(url: url, mechanism: mechanism)
            try setup.execute("UPDATE person SET surname = 'By \(mechanism.rawValue)' WHERE id = 1")
            #expect(try observer.settle().map(\.description) == ["update person (surname)"], "\(mechanism)")
            #expect(try observer.context.object("person", primaryKey: 1)?.value(forKey: "surname") as? String == "By \(mechanism.rawValue)")
        }

        // The pool, and its change stream.
        let database = try Database(url: url, maxConnections: 2)
        defer { database.close() }
        let changes = try await database.changes(using: .triggers)
        try await database.write { context in
            try context.object("person", primaryKey: 2)?.setValue("Pooled", forKey: "surname")
        }
        let surname = try await database.read { context in
            try context.object("person", primaryKey: 2)?.value(forKey: "surname") as? String
        }
        #expect(surname == "Pooled")
        for try await committed in changes {
            #expect(committed.changes.map(\.description) == ["update person"])
            break
        }

        // The command line.
        let inspected = try InspectCommandTests.relate(["inspect", url])
        #expect(inspected.status == 0, "\(inspected.errors)")
        #expect(inspected.output.contains("person"))
        #expect(try server.connectionsWithoutTLS(setup) == 0)
    }

    /// A wrong host name, an unknown CA and no TLS at all: each fails with libpq's reason,
    /// for a context, the pool and `relate inspect`, and the password is nowhere in it.
    @Test func tlsFailuresSayLibpqsReasonWithoutThePassword() async throws {
        let server = try TLSServer()
        let cases: [(String, String)] = [
            // 127.0.0.1 is not among the certificate's names (localhost is).
            ("postgresql://relate:\(server.password)@127.0.0.1:\(server.port)/postgres?sslmode=verify-full&sslrootcert=\(server.tls)/ca.crt",
             #"does not match host name "127.0.0.1""#),
            (server.url(root: "other-ca.crt"), "certificate verify failed"),
            (server.url(root: "ca.crt", "&sslmode=disable").replacingOccurrences(of: "&channel_binding=require", with: ""),
             "no encryption"),
        ]
        for (url, reason) in cases {
            let context = #expect(throws: RelateError.self, "\(reason)") { try DatabaseContext(url: url) }
            let pool = #expect(throws: RelateError.self, "\(reason)") { try Database(url: url) }
            for error in [context, pool].compactMap({ $0 }) {
                let shown = "\(error) \(error.message) \(String(reflecting: error))"
                #expect(shown.contains(reason), "\(shown)")
                #expect(!shown.contains(server.password), "\(reason)")
                #expect(error.postgresError?.kind == .connectionFailed, "\(reason)")
            }
            let inspected = try InspectCommandTests.relate(["inspect", url])
            #expect(inspected.status != 0)
            #expect(inspected.errors.contains(reason), "\(inspected.errors)")
            #expect(!(inspected.errors + inspected.output).contains(server.password), "\(reason)")
        }
    }

    /// A role authenticated by its client certificate: a context, and its change feed, whose
    /// connection must carry the certificate and key too (the server takes nothing else).
    @Test func clientCertificatesReachTheFeedsConnectionToo() throws {
        let server = try TLSServer()
        let setup = try Connection(url: server.url())
        try setup.executeScript(ChangeTrackingTests.schema)
        try setup.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO relate_cert")
        try ChangeTracking.enable(on: setup)
        try ChangeTracking.grant(readingTo: "relate_cert", on: setup)

        let context = try DatabaseContext(url: server.certificateURL)
        #expect(try context.connection.query("SELECT current_user::text")[0].decode(String.self, at: 0) == "relate_cert")
        try context.startTrackingChanges(using: .triggers)
        let ada = try #require(try context.object("person", primaryKey: 1))
        try setup.execute("UPDATE person SET surname = 'Certified' WHERE id = 1")
        #expect(try context.waitForChanges(timeout: .seconds(5)).map(\.description) == ["update person (surname)"])
        #expect(try ada.value(forKey: "surname") as? String == "Certified")
        // The feed's own connection is the certificate's role's too, over TLS.
        let listeners = try setup.query(
            """
            SELECT count(*) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
             WHERE a.usename = 'relate_cert' AND s.ssl AND s.client_dn = '/CN=relate_cert'
            """)[0].decode(Int.self, at: 0)
        #expect(listeners == 2)
        #expect(try server.connectionsWithoutTLS(setup) == 0)
    }

    /// The feeds' connections verify the server as the context's did: once the context is
    /// connected, its root certificate file is swapped for a CA that signed nothing, and
    /// each feed's new connection then fails verification (a feed that dropped `sslmode` or
    /// `sslrootcert` would have connected without checking).
    @Test func derivedConnectionsStillVerifyTheServer() throws {
        let server = try TLSServer()
        let setup = try Connection(url: server.url())
        try setup.executeScript(ChangeTrackingTests.schema)
        try ChangeTracking.enable(on: setup)
        try ChangeTracking.enable(logicalDecodingOn: setup)
        for mechanism in ChangeTracking.Mechanism.allCases {
            let root = "root-\(mechanism.rawValue).crt"
            try? FileManager.default.removeItem(atPath: "\(server.tls)/\(root)")
            try FileManager.default.copyItem(atPath: "\(server.tls)/ca.crt", toPath: "\(server.tls)/\(root)")
            let context = try DatabaseContext(url: server.url(root: root))
            try FileManager.default.removeItem(atPath: "\(server.tls)/\(root)")
            try FileManager.default.copyItem(atPath: "\(server.tls)/other-ca.crt", toPath: "\(server.tls)/\(root)")
            let error = #expect(throws: RelateError.self, "\(mechanism)") { try context.startTrackingChanges(using: mechanism) }
            #expect(error?.message.contains("certificate verify failed") == true, "\(mechanism): \(String(describing: error))")
            #expect(error.map { "\($0)".contains(server.password) } == false)
        }
    }
}
