import Foundation
import RelatePostgres
import Testing

/// The examples of RelatePostgres's "Running queries" article
/// (`Sources/RelatePostgres/RelatePostgres.docc/RunningQueries.md`), in the article's order
/// and as it prints them, run against the test server: an example that stops compiling or
/// working fails here. Change the two together.
@Suite struct RunningQueriesArticleTests {
    @Test func theArticlesExamplesRun() throws {
        let url = try TestDatabase.url()

        // Connecting (the article's strings name other servers; these are the test server).
        let connection = try Connection(url: url)
        let withDefaults = try Connection(conninfo: url, defaults: ["connect_timeout": "10", "application_name": "importer"])
        #expect(withDefaults.parameterStatus("application_name") == "importer")
        #expect(connection.serverVersion > 0)

        // Bound parameters
        try connection.execute("CREATE TEMPORARY TABLE person (id int PRIMARY KEY, name text, born date)")
        let inserted = try connection.execute(
            "INSERT INTO person (id, name, born) VALUES ($1, $2, $3), ($4, $5, $6)",
            [1, "Ada", Date(timeIntervalSince1970: 0), 2, "Grace", nil])
        #expect(inserted == 2)

        let some = try connection.query("SELECT name FROM person WHERE id = ANY($1) ORDER BY id", [[1, 2, 3]])
        #expect(try some.map { try $0.decode(String.self, at: 0) } == ["Ada", "Grace"])

        // Results and decoding
        let rows = try connection.query("SELECT id, name, born FROM person ORDER BY id", format: .binary)
        var seen: [String] = []
        for row in rows {
            let id = try row.decode(Int.self, at: 0)
            let name = try row.decode(String.self, column: "name")
            let born = try row.decode(Date?.self, column: "born")      // Grace's is NULL
            print(id, name, born.map(String.init(describing:)) ?? "unknown")
            seen.append("\(id) \(name) \(born == nil ? "unknown" : "known")")
        }
        #expect(seen == ["1 Ada known", "2 Grace unknown"])

        // Errors and SQLSTATE
        var constraint: String?
        do {
            try connection.execute("INSERT INTO person (id, name) VALUES ($1, $2)", [1, "Ada again"])
        } catch let error as PostgresError where error.sqlState == .uniqueViolation {
            print("taken:", error.constraint ?? "?")          // person_pkey
            constraint = error.constraint
            #expect(!error.description.contains("Ada again"))
            #expect(error.debugDescription.contains("Key (id)=(1) already exists."))
        }
        #expect(constraint == "person_pkey")

        // Transactions and savepoints
        var caught = false
        try connection.transaction {
            try connection.execute("UPDATE person SET name = $1 WHERE id = $2", ["Ada Lovelace", 1])
            do {
                try connection.transaction {                                      // SAVEPOINT
                    try connection.execute("INSERT INTO person (id, name) VALUES ($1, $2)", [1, "duplicate"])
                }
            } catch let error as PostgresError where error.sqlState == .uniqueViolation {
                // ROLLBACK TO SAVEPOINT: the update above stands
                caught = true
            }
        }
        #expect(caught)
        #expect(try connection.query("SELECT name FROM person WHERE id = 1")[0].decode(String.self, at: 0) == "Ada Lovelace")

        // Pipelines
        let results = try connection.pipeline([
            PostgresStatement("UPDATE person SET name = $1 WHERE id = $2", ["Grace Hopper", 2]),
            PostgresStatement("SELECT count(*) FROM person", format: .binary),
        ])
        let count = try results[1][0].decode(Int.self, at: 0)
        #expect(count == 2)
        #expect(results[0].affectedRows == 1)

        // Notifications
        let listener = try Connection(url: url)
        var payloads: [String] = []
        try listener.execute("LISTEN person_changed")
        try connection.execute("SELECT pg_notify('person_changed', $1)", ["2"])
        if try listener.waitForInput(timeout: .seconds(5)) {
            for notification in try listener.notifications() {
                print(notification.channel, notification.payload)       // person_changed 2
                payloads.append(notification.payload)
            }
        }
        #expect(payloads == ["2"])

        // Cancelling
        let cancel = try connection.makeCancelRequest()
        Thread.detachNewThread { Thread.sleep(forTimeInterval: 0.2); try? cancel.send() }
        var cancelled = false
        do {
            try connection.execute("SELECT pg_sleep(30)")
        } catch let error as PostgresError where error.sqlState == SQLState("57014") {
            // cancelled; the connection is still usable
            cancelled = true
        }
        #expect(cancelled)
        #expect(try connection.query("SELECT 1")[0].decode(Int.self, at: 0) == 1)
    }
}
