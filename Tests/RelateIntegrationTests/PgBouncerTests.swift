import Foundation
import RelatePostgres
import Synchronization
import Testing

@testable import Relate

/// Through PgBouncer in transaction mode (Debian's `pgbouncer` 1.18, started for the test),
/// configured as the Production article says (`preparesStatements = false`: PgBouncer
/// before 1.21 does not keep a session's prepared statements): every statement, pipeline
/// and transaction of the object layer works, since none relies on the server connection
/// staying the same between transactions.
@Suite(.serialized) struct PgBouncerTests {
    @Test func objectsWorkThroughPgBouncerInTransactionMode() async throws {
        let servers = try TestServers("pgbouncer")
        let direct = try Connection(url: servers.url(port: servers.ports[0]))
        try TestDatabase.loadExample("seed_person_title", into: direct, schema: "public")
        try direct.executeScript(ObjectFixture.peopleWithTitles)

        // One context on one client connection: reads, a to-many fault, a pipeline, a
        // transaction that rolls back.
        let configuration = Configuration(schemas: ["public"], maxConnections: 4, preparesStatements: false)
        let context = try DatabaseContext(url: servers.url(port: servers.ports[1]), configuration: configuration)
        let ada = try #require(try context.object("person", primaryKey: 1))
        let titles = try ada.objects(forKey: "title")
        #expect(titles.count == 1)
        let all = try context.fetch("title", orderBy: "id")
        try ada.setValue(all, forKey: "title")
        #expect(titles.count == 3)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try context.transaction {
                try ada.setValue("Byron", forKey: "surname")
                throw Stop()
            }
        }
        #expect(try ada.value(forKey: "surname", as: String.self) == "Lovelace")
        let held = try direct.query("SELECT count(*) FROM person_title_rel WHERE person_id = 1")[0].decode(Int.self, at: 0)
        #expect(held == 3)

        // A pool of 4 client connections over PgBouncer's 4 server connections, 16 tasks.
        let database = try Database(url: servers.url(port: servers.ports[1]), configuration: configuration)
        defer { database.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for unit in 0..<20 {
                        try await database.write { context in
                            _ = try context.insert("title", values: ["name": "t\(task)-\(unit)"])
                        }
                        _ = try await database.read { try $0.object("person", primaryKey: 2)?.objects(forKey: "title").count }
                    }
                }
            }
            try await group.waitForAll()
        }
        let titlesNow = try direct.query("SELECT count(*) FROM title")[0].decode(Int.self, at: 0)
        #expect(titlesNow == 3 + 16 * 20)
    }
}
