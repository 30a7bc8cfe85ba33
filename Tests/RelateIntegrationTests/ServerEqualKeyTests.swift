import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Relationships over keys the server takes for equal where their bytes differ: a
/// case-insensitive collation's `ADA@x` and `ada@x`, `citext`, `numeric`'s 1.0 and 1.00,
/// an `interval`'s day and 24 hours. Memory pairs rows with their targets as the server
/// does, and keeps them paired through writes, deletes and key changes.
@Suite struct ServerEqualKeyTests {
    /// Accounts keyed by a case-insensitive e-mail, posts and tags referring to them in
    /// other cases; `onDelete`/`onUpdate` are the posts' rules.
    static func schema(onDelete: String = "CASCADE", onUpdate: String = "CASCADE") -> String {
        """
        CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
        CREATE TABLE account (email text COLLATE ci PRIMARY KEY, name text);
        CREATE TABLE post (id int PRIMARY KEY, author text COLLATE ci REFERENCES account ON DELETE \(onDelete) ON UPDATE \(onUpdate));
        CREATE TABLE tag (name text COLLATE ci PRIMARY KEY);
        CREATE TABLE account_tag (account_email text COLLATE ci REFERENCES account ON UPDATE CASCADE ON DELETE CASCADE,
            tag_name text COLLATE ci REFERENCES tag, PRIMARY KEY (account_email, tag_name));
        INSERT INTO account VALUES ('ada@example.com', 'Ada'), ('bob@example.com', 'Bob');
        INSERT INTO post VALUES (1, 'ADA@example.com'), (2, 'ada@example.com'), (3, 'Bob@Example.com');
        INSERT INTO tag VALUES ('math'), ('Poetry');
        INSERT INTO account_tag VALUES ('Ada@Example.com', 'MATH'), ('ada@example.com', 'poetry');
        """
    }

    static func ids(_ set: RelationshipSet) throws -> [Int] {
        try set.allObjects.map { try #require($0.value(forKey: "id") as? Int) }.sorted()
    }

    @Test func loadsPairRowsAsTheServerDoes() throws {
        try ObjectFixture.inSchema(made: Self.schema()) { f in
            let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
            #expect(try ada.count(forKey: "post") == 2)
            #expect(try ada.count(forKey: "tag") == 2)
            #expect(try Self.ids(ada.objects(forKey: "post")) == [1, 2])
            #expect(try ada.objects(forKey: "tag").allObjects.count == 2)
            let first = try #require(try f.context.object("post", primaryKey: 1))
            #expect(try first.object(forKey: "account") === ada)
            // A prefetch of the to-one for every post, and of the sets for every account.
            let context = try f.freshContext()
            let posts = try context.fetch(FetchRequest("post"))
            try context.prefetch(["account"], for: posts)
            let accounts = try context.fetch(FetchRequest("account"))
            try context.prefetch(["post", "tag"], for: accounts)
            for post in posts {
                let author = try #require(try post.object(forKey: "account"))
                #expect(try author.objects(forKey: "post").contains(post))
            }
            #expect(try f.disagreements().isEmpty)
        }
    }

    @Test func writesKeepSetsPairedAsTheServerDoes() throws {
        try ObjectFixture.inSchema(made: Self.schema()) { f in
            let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
            let bob = try #require(try f.context.object("account", primaryKey: "bob@example.com"))
            let adas = try ada.objects(forKey: "post")
            let bobs = try bob.objects(forKey: "post")
            // A new post naming Ada in other bytes joins her loaded set.
            let fourth = try f.context.insert("post", values: ["id": 4, "author": "ADA@EXAMPLE.COM"])
            #expect(adas.contains(fourth))
            // Her own post written in other bytes stays hers.
            let second = try #require(try f.context.object("post", primaryKey: 2))
            try second.setValue("Ada@Example.Com", forKey: "author")
            #expect(try Self.ids(adas) == [1, 2, 4])
            // A post moved to Bob, in other bytes, leaves hers and joins his.
            let first = try #require(try f.context.object("post", primaryKey: 1))
            try first.setValue("BOB@example.com", forKey: "author")
            #expect(try Self.ids(adas) == [2, 4])
            #expect(try Self.ids(bobs) == [1, 3])
            #expect(try first.object(forKey: "account") === bob)
            // Deleted, a post memory paired by other bytes leaves the set.
            try f.context.delete(fourth)
            #expect(try Self.ids(adas) == [2])
            #expect(try f.disagreements().isEmpty)
        }
    }

    @Test(arguments: ["CASCADE", "SET NULL"])
    func deletesFollowTheRulesThroughOtherBytes(rule: String) throws {
        try ObjectFixture.inSchema(made: Self.schema(onDelete: rule)) { f in
            let posts = try f.context.fetch(FetchRequest("post"))
            let first = try #require(posts.first { try $0.value(forKey: "id") as? Int == 1 })
            let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
            // Her set not loaded: memory cannot tell which posts are hers by their bytes.
            try f.context.delete(ada)
            if rule == "CASCADE" {
                #expect(first.isDeleted)
            } else {
                #expect(try first.value(forKey: "author") == nil)
            }
            #expect(try f.disagreements().isEmpty)
        }
    }

    @Test func keyChangesFollowTheRulesThroughOtherBytes() throws {
        try ObjectFixture.inSchema(made: Self.schema()) { f in
            let posts = try f.context.fetch(FetchRequest("post"))
            let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
            try ada.setValue("ada@example.org", forKey: "email")
            for post in posts where try post.value(forKey: "id") as? Int != 3 {
                #expect(try post.value(forKey: "author") as? String == "ada@example.org")
            }
            #expect(try Self.ids(ada.objects(forKey: "post")) == [1, 2])
            #expect(try f.disagreements().isEmpty)
        }
    }
}
