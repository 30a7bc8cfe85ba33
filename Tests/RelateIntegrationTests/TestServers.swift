import Foundation
import RelatePostgres
import Testing

/// Servers started for one test by `scripts/test-servers` (PostgreSQL and PgBouncer from
/// the system's packages, loopback only, trust authentication) and removed after it:
/// `single` (one server), `replica-pair` (a primary and its streaming replica) or `pgbouncer` (a server and
/// PgBouncer in transaction mode in front of it). `ports` are the ports the script printed.
/// `options`: more server settings (`-c name=value …`, the script's `extra_options`).
final class TestServers {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relate-servers-\(UUID().uuidString.prefix(8))").path
    private(set) var ports: [Int] = []
    private let options: String

    init(_ kind: String, options: String = "") throws {
        self.options = options
        ports = try run(kind).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard !ports.isEmpty else { throw TestFailure("scripts/test-servers \(kind) printed no ports") }
    }

    deinit { _ = try? run("remove") }

    func url(port: Int) -> String { "postgresql://relate@127.0.0.1:\(port)/postgres?connect_timeout=5" }

    /// Both servers, the one that accepts writes first, as libpq's multi-host conninfo.
    var failoverURL: String {
        "postgresql://relate@127.0.0.1:\(ports[0]),127.0.0.1:\(ports[1])/postgres?target_session_attrs=read-write&connect_timeout=5"
    }

    /// Runs `scripts/test-servers COMMAND DIR` and answers what it printed. `posix_spawn`
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
        let script = TestDatabase.repository.appendingPathComponent("scripts/test-servers").path
        let arguments: [UnsafeMutablePointer<CChar>?] = [script, command, directory].map { (text: String) in strdup(text) } + [nil]
        defer { arguments.forEach { free($0) } }
        var environment: [UnsafeMutablePointer<CChar>?] = [strdup("extra_options=\(options)")]
        var variable = environ
        while let entry = variable.pointee {
            if !String(cString: entry).hasPrefix("extra_options=") { environment.append(strdup(entry)) }
            variable += 1
        }
        environment.append(nil)
        defer { environment.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, script, &actions, nil, arguments, environment)
        guard spawned == 0 else { throw TestFailure("cannot run \(script): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // Exited normally with status 0 (WIFEXITED and WEXITSTATUS, by hand: C macros).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw TestFailure("scripts/test-servers \(command) failed: \(printed)")
        }
        return printed
    }

    /// Waits until the replica has replayed what `sql` counts to `expected`.
    func waitForReplica(_ sql: String, toCount expected: Int) throws {
        let replica = try Connection(url: url(port: ports[1]))
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

