import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// A primary and its streaming replica, started for a test by `scripts/replica-pair`
/// (PostgreSQL from the system's packages, loopback only) and removed after it.
final class ReplicaPair {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relate-replica-\(UUID().uuidString.prefix(8))").path
    private(set) var primaryPort = 0
    private(set) var replicaPort = 0

    init() throws {
        let ports = try run("start").split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard ports.count == 2 else { throw TestFailure("scripts/replica-pair start printed no ports") }
        (primaryPort, replicaPort) = (ports[0], ports[1])
    }

    deinit { _ = try? run("remove") }

    func url(port: Int) -> String { "postgresql://relate@127.0.0.1:\(port)/postgres?connect_timeout=5" }

    /// Both servers, the one that accepts writes first, as libpq's multi-host conninfo.
    var failoverURL: String {
        "postgresql://relate@127.0.0.1:\(primaryPort),127.0.0.1:\(replicaPort)/postgres?target_session_attrs=read-write&connect_timeout=5"
    }

    /// Runs `scripts/replica-pair COMMAND DIR` and answers what it printed. `posix_spawn`
    /// with every descriptor above stderr closed, and `waitpid`: the servers the script
    /// leaves behind would otherwise hold the descriptors by which Foundation's `Process`
    /// sees its child end (its `waitUntilExit` then never returns).
    @discardableResult
    func run(_ command: String) throws -> String {
        let log = directory + "-\(command).log"
        defer { unlink(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int32($0) } ?? []
        for descriptor in open where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        let script = TestDatabase.repository.appendingPathComponent("scripts/replica-pair").path
        let arguments: [UnsafeMutablePointer<CChar>?] = [script, command, directory].map { (text: String) in strdup(text) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, script, &actions, nil, arguments, environ)
        guard spawned == 0 else { throw TestFailure("cannot run \(script): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // Exited normally with status 0 (WIFEXITED and WEXITSTATUS, by hand: C macros).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw TestFailure("scripts/replica-pair \(command) failed: \(printed)")
        }
        return printed
    }

    /// Waits until the replica has replayed what `sql` counts to `expected`.
    func waitForReplica(_ sql: String, toCount expected: Int) throws {
        let replica = try Connection(url: url(port: replicaPort))
        for _ in 0..<200 {
            if let count = try? replica.query(sql)[0].decode(Int.self, at: 0), count == expected { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestFailure("the replica did not catch up")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// libpq's multi-host conninfo across a primary switch, with a real streaming replica.
@Suite(.serialized) struct FailoverTests {
    @Test func unitsOfWorkFollowThePrimaryAcrossASwitch() async throws {
        let pair = try ReplicaPair()
        let setup = try Connection(url: pair.url(port: pair.primaryPort))
        try setup.executeScript("CREATE TABLE item (id int PRIMARY KEY, note text); INSERT INTO item VALUES (1, 'before');")
        try pair.waitForReplica("SELECT count(*) FROM item", toCount: 1)

        let database = try Database(url: pair.failoverURL, schemas: ["public"], maxConnections: 2)
        defer { database.close() }
        let serverPort: @Sendable (DatabaseContext) throws -> Int = { try $0.connection.query("SELECT inet_server_port()")[0].decode(Int.self, at: 0) }
        let before = try await database.read(serverPort)
        #expect(before == pair.primaryPort)

        // A unit in flight when the primary dies fails with a connection error…
        let inFlight = Task {
            try await database.write { context in
                _ = try context.insert("item", values: ["id": 2, "note": "in flight"])
                try context.connection.execute("SELECT pg_sleep(30)")
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        try pair.run("stop-primary")
        let error = await #expect(throws: RelateError.self) { try await inFlight.value }
        #expect(error?.postgresError?.kind == .connectionClosed)

        // …and once the replica is promoted, new units run there, the pool having dropped
        // the connections to the old primary; the unit in flight left nothing behind.
        try pair.run("promote")
        try await database.write { _ = try $0.insert("item", values: ["id": 3, "note": "after"]) }
        let after = try await database.read(serverPort)
        #expect(after == pair.replicaPort)
        let ids = try await database.read { context in
            try context.fetch("item", orderBy: "id").map { try $0.value(forKey: "id", as: Int.self) ?? 0 }
        }
        #expect(ids == [1, 3])
    }
}
