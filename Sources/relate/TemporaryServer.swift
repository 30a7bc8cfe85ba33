import Foundation

/// A throwaway PostgreSQL cluster from the system's packages: initdb in a temporary folder
/// (as the `postgres` user when run as root, since the server refuses root), a free port on
/// 127.0.0.1, trust authentication for that address only. Stopped and removed by `stop()`.
final class TemporaryServer: Sendable {
    private let directory: URL
    private let binaries: URL
    private let runAs: [String]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Finds the server's programs and makes the folder; ``start()`` makes the cluster.
    init() throws {
        guard let binaries = Self.findBinaries() else {
            throw Failure(description: """
                the PostgreSQL server is not installed, so no throwaway server can be started.
                Install it (Debian/Ubuntu: scripts/install-dependencies, or apt-get install postgresql) or pass a URL.
                """)
        }
        self.binaries = binaries
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("relate-demo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        runAs = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
        if getuid() == 0 { try Self.run(["/bin/chown", "postgres", directory.path], log: directory) }
    }

    /// Makes and starts the cluster; returns its URL.
    func start() throws -> String {
        let data = directory.appendingPathComponent("data").path
        try Self.run(runAs + [binaries.appendingPathComponent("initdb").path, "-D", data, "-U", "relate",
            "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"], log: directory)
        for _ in 0..<8 {
            let port = Int.random(in: 20000..<60000)
            let options = "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off"
            if (try? Self.run(runAs + [binaries.appendingPathComponent("pg_ctl").path, "-D", data, "-l",
                directory.appendingPathComponent("server.log").path, "-w", "-t", "60", "-o", options, "start"], log: directory)) != nil
            {
                return "postgresql://relate@127.0.0.1:\(port)/postgres"
            }
        }
        throw Failure(description: "could not start a throwaway PostgreSQL server (see \(directory.path)/server.log)")
    }

    /// Stops the server if the process is interrupted (Ctrl-C) or terminated, so no
    /// server is left running; returns what to cancel once the work is done.
    func stopOnInterrupt() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                Self.running.interrupt()
                stop()
                FileHandle.standardError.write(Data("\ninterrupted: the throwaway server is stopped and removed\n".utf8))
                exit(130)
            }
            source.resume()
            return source
        }
    }

    /// Stops the server, whatever state it reached, and removes its folder.
    func stop() {
        let data = directory.appendingPathComponent("data")
        if FileManager.default.fileExists(atPath: data.appendingPathComponent("postmaster.pid").path) {
            _ = try? Self.run(runAs + [binaries.appendingPathComponent("pg_ctl").path, "-D", data.path, "-m", "fast", "stop"], log: directory)
        }
        // A server still shutting down may write a last file while the folder goes.
        for _ in 0..<20 where FileManager.default.fileExists(atPath: directory.path) {
            if (try? FileManager.default.removeItem(at: directory)) == nil { usleep(100_000) }
        }
    }

    /// The newest `/usr/lib/postgresql/*/bin`, else the folder of `initdb` on the PATH.
    private static func findBinaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        if let newest = versions.compactMap(Int.init).max() {
            return root.appendingPathComponent("\(newest)/bin")
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent("initdb")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.deletingLastPathComponent() }
        }
        return nil
    }

    /// Runs a program and waits for it, its output in a file. `posix_spawn` with every
    /// descriptor above stderr closed, because the server that `pg_ctl start` leaves behind
    /// would otherwise hold the descriptors by which Foundation's `Process` sees its child end.
    /// The program being waited for, so an interruption can end it first.
    private static let running = RunningChild()

    @discardableResult
    private static func run(_ arguments: [String], log directory: URL) throws -> String {
        let log = directory.appendingPathComponent("command-\(UUID().uuidString.prefix(8)).log")
        defer { try? FileManager.default.removeItem(at: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        for descriptor in openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        // The server refuses a working directory it cannot enter, so start from `directory`.
        let command = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, directory.path] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        running.set(pid)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        running.set(nil)
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        // Exited normally with status 0: WIFEXITED and WEXITSTATUS, by hand (C macros).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let program = URL(fileURLWithPath: arguments.first { $0.contains("/bin/") && !$0.hasSuffix("runuser") } ?? arguments[0])
            throw Failure(description: "\(program.lastPathComponent) failed: \(text)")
        }
        return text
    }

    /// This process's open descriptors, from /proc (Linux) or /dev/fd (macOS).
    private static func openDescriptors() -> [Int32] {
        for folder in ["/proc/self/fd", "/dev/fd"] {
            if let names = try? FileManager.default.contentsOfDirectory(atPath: folder) {
                return names.compactMap { Int32($0) }
            }
        }
        return []
    }
}

/// The child process being waited for, shared with the signal handler.
private final class RunningChild: @unchecked Sendable {
    private let lock = NSLock()
    private var pid: pid_t?

    func set(_ pid: pid_t?) {
        lock.withLock { self.pid = pid }
    }

    /// Ends the child (initdb, pg_ctl) and gives it a moment to clean up after itself.
    func interrupt() {
        guard let pid = lock.withLock({ self.pid }) else { return }
        kill(pid, SIGTERM)
        for _ in 0..<50 where kill(pid, 0) == 0 { usleep(100_000) }
    }
}
