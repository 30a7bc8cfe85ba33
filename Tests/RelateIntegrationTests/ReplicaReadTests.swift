import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// `read` units on streaming replicas that see the `Database`'s own writes (issue 27,
/// item 1), against a primary and two replicas that `scripts/test-servers replicas` starts
/// on loopback, the second applying commits a second late. A missing server fails the test.
@Suite(.serialized) struct ReplicaReadTests {
    /// `TestServers` for a closure another task runs.
    private struct Servers: @unchecked Sendable { let value: TestServers }

    /// The port of the server a context's connection reached.
    private static let serverPort: @Sendable (DatabaseContext) throws -> Int = {
        try $0.connection.query("SELECT inet_server_port()")[0].decode(Int.self, at: 0)
    }

    /// Starts the servers, with a table `counter` of `rows` rows (id, n = 0) on every one.
    private static func servers(rows: Int) throws -> TestServers {
        let servers = try TestServers("replicas")
        let setup = try Connection(url: servers.url(port: servers.ports[0]))
        try setup.executeScript(
            "CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL); INSERT INTO counter SELECT g, 0 FROM generate_series(1, \(rows)) g;")
        for port in servers.ports.dropFirst() {
            let replica = try Connection(url: servers.url(port: port))
            var seen = 0
            for _ in 0..<400 where seen != rows {
                seen = (try? replica.query("SELECT count(*) FROM counter")[0].decode(Int.self, at: 0)) ?? 0
                if seen != rows { Thread.sleep(forTimeInterval: 0.05) }
            }
            guard seen == rows else { throw TestFailure("replica on port \(port) did not replay the set-up") }
        }
        return servers
    }

    private static func database(_ servers: TestServers, replicas: [Int], wait: Duration = .milliseconds(500),
                                 retry: Duration = .seconds(5)) throws -> Database {
        var configuration = Configuration(schemas: ["public"], maxConnections: 4)
        configuration.replicas = replicas.map { servers.url(port: $0) }
        configuration.replicaWait = wait
        configuration.replicaRetry = retry
        return try Database(url: servers.url(port: servers.ports[0]), configuration: configuration)
    }

    /// A transaction's commit position comes with its `COMMIT`, in one pipeline: no round
    /// trip more, and `COMMIT` is the last statement traced.
    @Test func theCommitPositionRidesWithTheCommit() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("CREATE TABLE item (id int PRIMARY KEY)")
            let before = try #require(LSN(try connection.query("SELECT pg_current_wal_insert_lsn()::text")[0].decode(String.self, at: 0)))
            var traced: [String] = []
            connection.trace = { traced.append($0) }
            let trips = connection.roundTrips
            try connection.transaction(TransactionOptions(learnsCommitPosition: true)) { _ = try connection.execute("INSERT INTO item VALUES (1)") }
            // BEGIN rides with the insert, the position with the COMMIT.
            #expect(connection.roundTrips - trips == 2)
            #expect(traced == ["BEGIN", "INSERT INTO item VALUES (1)", "COMMIT"])
            let position = try #require(connection.lastCommitPosition)
            #expect(position > before)
            // Off: a plain COMMIT, no position.
            try connection.transaction { _ = try connection.execute("INSERT INTO item VALUES (2)") }
            #expect(connection.lastCommitPosition == position)
        }
    }

    /// A `write` whose `COMMIT` (sent with the position question, in one pipeline) loses its
    /// reply: the unit asks the server as without replicas, returns, and the position is
    /// still learnt (on the connection that asked), so reads wait for it. The "replica" here
    /// is the server itself, not in recovery: reads find it no replica and run on the primary.
    @Test func aLostCommitReplyWithReplicasStillCounts() async throws {
        let servers = try TestServers("single")
        let port = servers.ports[0]
        let setup = try Connection(url: servers.url(port: port))
        try setup.execute("CREATE TABLE item (id int PRIMARY KEY)")
        let proxy = try DroppingProxy(target: port)
        var configuration = Configuration(schemas: ["public"], maxConnections: 2)
        configuration.replicas = [servers.url(port: port)]
        let database = try Database(url: proxy.url(), configuration: configuration)
        defer { database.close() }

        proxy.arm(.afterCommitReply)
        let answer = try await database.write { context in
            _ = try context.insert("item", values: ["id": 1])
            return 7
        }
        #expect(answer == 7)
        #expect(proxy.drops == 1)
        let position = try #require(database.replicaSet?.lastWrite)
        let now = try #require(LSN(try setup.query("SELECT pg_current_wal_insert_lsn()::text")[0].decode(String.self, at: 0)))
        #expect(position <= now)
        let count = try await database.read { try $0.count("item") }
        #expect(count == 1)
    }

    /// One set of servers for every case: each set costs an `initdb` and two base backups.
    @Test func readsOnReplicas() async throws {
        let servers = try Self.servers(rows: 8)
        try await aReadAfterAWriteSeesItOnAReplicaEveryTime(servers)
        try await aReplicaThatLagsIsWaitedForAtMostTheBound(servers)
        try await aKilledReplicaCostsNoFailedUnit(servers)
    }

    /// Reads right after writes, thousands of times, see the writes; reads reach every replica.
    private func aReadAfterAWriteSeesItOnAReplicaEveryTime(_ servers: TestServers) async throws {
        let (primary, replica, delayed) = (servers.ports[0], servers.ports[1], servers.ports[2])
        let database = try Self.database(servers, replicas: [replica, delayed])
        defer { database.close() }

        // Before any write, reads spread over both replicas and never reach the primary.
        var ports: [Int: Int] = [:]
        for _ in 0..<40 { ports[try await database.read(Self.serverPort), default: 0] += 1 }
        #expect(Set(ports.keys) == [replica, delayed])

        // Four tasks write a row each, over and over; after each write another task reads
        // the row, and sees the write, on whichever server it runs.
        let rounds = 600
        let served = try await withThrowingTaskGroup(of: [Int: Int].self) { group in
            for id in 1...4 {
                group.addTask { try await Self.writeAndRead(row: id, rounds: rounds, database: database) }
            }
            var all: [Int: Int] = [:]
            for try await ports in group { all.merge(ports, uniquingKeysWith: +) }
            return all
        }
        print("replica reads after writes, by port (primary \(primary), replica \(replica), delayed \(delayed)): \(served)")
        #expect(served.values.reduce(0, +) == 4 * rounds)
        // Most reads found a replica that had replayed the write; the delayed one is
        // waited on at most once per `replicaRetry`, and the reads that it kept waiting went to the primary.
        #expect((served[replica] ?? 0) > 4 * rounds / 2, "served: \(served)")
        #expect((served[primary] ?? 0) < 4 * rounds / 10, "served: \(served)")
    }

    /// Adds one to `row`'s `n`, then reads it in another task, `rounds` times; answers how
    /// many reads each server served. Every other write is a unit without a transaction.
    private static func writeAndRead(row id: Int, rounds: Int, database: Database) async throws -> [Int: Int] {
        var ports: [Int: Int] = [:]
        for round in 1...rounds {
            let write: @Sendable (DatabaseContext) throws -> Int = { context in
                try context.connection.query("UPDATE counter SET n = n + 1 WHERE id = $1 RETURNING n", [id])[0].decode(Int.self, at: 0)
            }
            let written = try await round.isMultiple(of: 2) ? database.writeWithoutTransaction(write) : database.write(write)
            #expect(written == round)
            let reader = Task { try await database.read { context in try Self.counterAndPort(context, row: id) } }
            let read = try await reader.value
            #expect(read.n >= written, "round \(round) of row \(id): read \(read.n) on port \(read.port)")
            ports[read.port, default: 0] += 1
        }
        return ports
    }

    private struct CounterRead: Sendable {
        var n: Int
        var port: Int
    }

    private static func counterAndPort(_ context: DatabaseContext, row id: Int) throws -> CounterRead {
        let n = try context.connection.query("SELECT n FROM counter WHERE id = $1", [id])[0].decode(Int.self, at: 0)
        return CounterRead(n: n, port: try serverPort(context))
    }

    /// A replica that lags is waited on at most `replicaWait`, then the primary serves.
    private func aReplicaThatLagsIsWaitedForAtMostTheBound(_ servers: TestServers) async throws {
        let (primary, delayed) = (servers.ports[0], servers.ports[2])

        // Waiting 100 ms for a replica a second behind: the read runs on the primary.
        let impatient = try Self.database(servers, replicas: [delayed], wait: .milliseconds(100))
        defer { impatient.close() }
        try await impatient.write { _ = try $0.connection.execute("UPDATE counter SET n = -1 WHERE id = 1") }
        let clock = ContinuousClock()
        let start = clock.now
        let first = try await impatient.read { try Self.counterAndPort($0, row: 1) }
        #expect(first.n == -1)
        #expect(first.port == primary)
        // The port says it: the read did not wait for the replica. The time is a loose
        // check only (the whole suite at once can hold a task back for seconds).
        #expect(clock.now - start < .seconds(5))

        // Waiting 5 s: the replica serves the read once it has applied the commit.
        let patient = try Self.database(servers, replicas: [delayed], wait: .seconds(5))
        defer { patient.close() }
        try await patient.write { _ = try $0.connection.execute("UPDATE counter SET n = -2 WHERE id = 1") }
        let waited = clock.now
        let late = try await patient.read { try Self.counterAndPort($0, row: 1) }
        #expect(late.n == -2)
        #expect(late.port == delayed)
        #expect(clock.now - waited > .milliseconds(500))

        // A write without a transaction whose connection died after its write (its own
        // backend ended): a new connection tells where the log ends, and the read waits for
        // the replica, a second behind, to replay it.
        let lost = try Self.database(servers, replicas: [delayed], wait: .seconds(5))
        defer { lost.close() }
        await #expect(throws: RelateError.self) {
            try await lost.writeWithoutTransaction { context in
                _ = try context.connection.execute("UPDATE counter SET n = -3 WHERE id = 2")
                _ = try context.connection.execute("SELECT pg_terminate_backend(pg_backend_pid())")
            }
        }
        let seen = try await lost.read { try Self.counterAndPort($0, row: 2) }
        #expect(seen.n == -3)
    }

    /// A replica killed under load costs no unit, and serves again once back.
    private func aKilledReplicaCostsNoFailedUnit(_ servers: TestServers) async throws {
        let (replica, delayed) = (servers.ports[1], servers.ports[2])
        let database = try Self.database(servers, replicas: [replica, delayed], retry: .milliseconds(500))
        defer { database.close() }

        // Eight tasks read (and now and then write) for three seconds; the replica dies
        // after one, and comes back after two.
        let failures = Locked<[String]>([])
        let clock = ContinuousClock()
        let end = clock.now + .seconds(3)
        let reads = try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 1...8 {
                group.addTask {
                    var count = 0
                    while clock.now < end {
                        do {
                            if count % 10 == 0 {
                                try await database.write { _ = try $0.connection.execute("UPDATE counter SET n = n + 1 WHERE id = $1", [id]) }
                            }
                            _ = try await database.read { try $0.connection.query("SELECT n FROM counter WHERE id = $1", [id]) .count }
                            count += 1
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                    return count
                }
            }
            let box = Servers(value: servers)
            group.addTask {
                try await Task.sleep(for: .seconds(1))
                try box.value.run("stop-replica1")
                try await Task.sleep(for: .seconds(1))
                try box.value.run("start-replica1")
                return 0
            }
            return try await group.reduce(0, +)
        }
        #expect(failures.withLock { $0 } == [])
        #expect(reads > 100)

        // Once `replicaRetry` has passed, the replica serves again (given up to 15 s: a
        // restarted replica took longer than 4 s to serve under the whole suite's load).
        var ports: Set<Int> = []
        for _ in 0..<750 where !ports.contains(replica) {
            ports.insert(try await database.read(Self.serverPort))
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(ports.contains(replica))
        _ = delayed
    }
}
