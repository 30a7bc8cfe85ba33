import Foundation
import RelatePostgres
import Synchronization
import Testing

@testable import Relate

/// Sets beyond the short-scan size, deletes through helper tables, and one model's layout
/// shared by contexts on several threads.
@Suite struct LargeCollectionTests {
    static let manyEmails = """
        INSERT INTO person (firstname) VALUES ('Ada'), ('Grace');
        INSERT INTO email (address, person_id) SELECT 'e' || n, 1 FROM generate_series(1, 40) n;
        """

    @Test func removingManyMembersKeepsTheOthersInOrder() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.manyEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let all = emails.allObjects.sorted { try! $0.value(forKey: "id", as: Int.self)! < $1.value(forKey: "id", as: Int.self)! }
            #expect(all.count == 40)
            for email in all where try email.value(forKey: "id", as: Int.self)! % 2 == 0 {
                try emails.remove(email)
                #expect(!emails.contains(email))
            }
            #expect(emails.count == 20)
            let odd = all.filter { try! $0.value(forKey: "id", as: Int.self)! % 2 == 1 }
            let kept = emails.allObjects
            #expect(Set(kept.map(ObjectIdentifier.init)) == Set(odd.map(ObjectIdentifier.init)))
            // Put back, it comes last.
            try emails.insert(all[1])
            #expect(emails.allObjects.last === all[1] && emails.count == 21)
            // Replaced by ten: one statement takes the rest out.
            try ada.setValue(Array(odd.prefix(10)), forKey: "email")
            #expect(emails.count == 10 && emails.allObjects.allSatisfy { member in odd.prefix(10).contains { $0 === member } })
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aDeleteThroughAManyToManyLeavesEveryLoadedSet() throws {
        let schema = """
            CREATE TABLE post (id int PRIMARY KEY);
            CREATE TABLE tag (id int PRIMARY KEY);
            CREATE TABLE post_tag (post_id int REFERENCES post ON DELETE CASCADE, tag_id int REFERENCES tag ON DELETE CASCADE,
                                   PRIMARY KEY (post_id, tag_id));
            INSERT INTO post SELECT generate_series(1, 30);
            INSERT INTO tag SELECT generate_series(1, 20);
            INSERT INTO post_tag SELECT p, t FROM generate_series(1, 30) p, generate_series(1, 20) t WHERE (p + t) % 3 = 0;
            """
        try ObjectFixture.with("seed_person_email", extraSQL: schema) { fixture in
            let context = fixture.context
            let posts = try context.fetch("post")
            let tags = try context.fetch("tag", orderBy: "id")
            try context.prefetch(["tag"], for: posts)
            try context.prefetch(["post"], for: tags)
            let doomed = tags[2]
            let holders = posts.filter { try! $0.objects(forKey: "tag").contains(doomed) }
            #expect(holders.count == 10)
            try context.delete(doomed)
            #expect(posts.allSatisfy { try! !$0.objects(forKey: "tag").contains(doomed) })
            // The membership index is kept up to date once built: a later link and delete follow it.
            try posts[0].objects(forKey: "tag").insert(tags[3])
            try context.delete(tags[3])
            #expect(posts.allSatisfy { try! !$0.objects(forKey: "tag").contains(tags[3]) })
            try context.delete(posts[1])
            #expect(tags.filter { !$0.isDeleted }.allSatisfy { try! !$0.objects(forKey: "post").contains(posts[1]) })
            #expect(try fixture.disagreements() == [])
        }
    }

    /// One model's layout serves contexts on several threads: reads change no shared state
    /// (run under `scripts/test-sanitizers` for the thread sanitizer's word on it).
    @Test func contextsOfOneModelReadOnSeveralThreads() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.manyEmails) { fixture in
            let shared = fixture.context.layout
            let schema = fixture.schema
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                do {
                    let connection = try TestDatabase.connect()
                    try connection.execute("SET search_path TO \(schema)")
                    let context = DatabaseContext(connection: connection, layout: shared)
                    for _ in 0..<20 {
                        for email in try context.fetch("email") {
                            _ = try email.value(forKey: "id", as: Int.self)
                            _ = try email.value(forKey: "address", as: String.self)
                            _ = try email.value(forKey: "person_id")
                        }
                        context.reset()
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
        }
    }

    @Test func contextErrorsComeOutAsRelateErrors() throws {
        let error = #expect(throws: RelateError.self) {
            _ = try DatabaseContext(url: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
        }
        #expect(error?.kind == .database)
        #expect(error?.postgresError?.kind == .connectionFailed)
    }
}

/// A large set with removals not yet taken out, loaded again in a transaction that rolls
/// back: it holds what it held, and the removed members stay removed.
@Suite struct LargeSetRollbackTests {
    @Test func aRefillRolledBackKeepsRemovalsRemoved() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: LargeCollectionTests.manyEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let removed = emails.allObjects[0]
            try emails.remove(removed)
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try context.transaction {
                    try context.prefetch(["email"], for: [ada])
                    throw Stop()
                }
            }
            #expect(!emails.contains(removed))
            #expect(emails.count == 39 && emails.allObjects.count == 39)
            #expect(try fixture.disagreements() == [])
        }
    }
}
