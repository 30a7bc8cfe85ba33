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

    /// Which columns memory may tell apart by bytes: the catalog's B-tree `equalimage`
    /// support, with a deterministic collation; an array by its element, a domain by its base.
    @Test func catalogTellsWhichEqualityIsByImage() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
                CREATE TYPE mood AS ENUM ('happy', 'sad');
                CREATE DOMAIN price AS numeric(10, 2);
                CREATE DOMAIN code AS varchar(8);
                CREATE TYPE record_pair AS (a int, b int);
                CREATE TABLE t (i int, b bigint, s text, v varchar(5), c char(3), ci text COLLATE ci, u uuid, ts timestamptz,
                    m mood, ms mood[], ia int[], cd code, x xml,
                    n numeric, p price, na numeric[], iv interval, f float8, j jsonb, r int4range, pair record_pair);
                """)
            let catalog = try Catalog.introspect(connection, schemas: [schema])
            let table = try #require(catalog.tables.first { $0.name == "t" })
            let byImage = Dictionary(uniqueKeysWithValues: table.columns.map { ($0.name, $0.equalityIsByImage) })
            for name in ["i", "b", "s", "v", "c", "u", "ts", "m", "ms", "ia", "cd", "x"] { #expect(byImage[name] == true, "\(name)") }
            for name in ["ci", "n", "p", "na", "iv", "f", "j", "r", "pair"] { #expect(byImage[name] == false, "\(name)") }
        }
    }

    /// Ada and Bob of ``schema(onDelete:onUpdate:)``, and their posts, loaded.
    static func adaAndBob(_ f: ObjectFixture) throws -> (ada: DatabaseObject, bob: DatabaseObject, adas: RelationshipSet, bobs: RelationshipSet) {
        let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
        let bob = try #require(try f.context.object("account", primaryKey: "bob@example.com"))
        return (ada, bob, try ada.objects(forKey: "post"), try bob.objects(forKey: "post"))
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
            let (ada, bob, adas, bobs) = try Self.adaAndBob(f)
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

extension ServerEqualKeyTests {
    /// `citext` (an extension, so a database of its own), tracked by either mechanism:
    /// another client's post naming an account in other case joins the account's loaded set.
    @Test(arguments: [ChangeTracking.Mechanism.triggers, .logicalDecoding])
    func citextKeysThroughTheChangeFeed(mechanism: ChangeTracking.Mechanism) throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE EXTENSION citext;
                CREATE TABLE account (email citext PRIMARY KEY);
                CREATE TABLE post (id int PRIMARY KEY, author citext REFERENCES account);
                INSERT INTO account VALUES ('ada@example.com');
                INSERT INTO post VALUES (1, 'Ada@Example.com');
                """)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let context = try DatabaseContext(url: url)
            try context.startTrackingChanges(using: mechanism)
            let ada = try #require(try context.object("account", primaryKey: "ada@example.com"))
            let posts = try ada.objects(forKey: "post")
            #expect(try Self.ids(posts) == [1])
            try setup.execute("INSERT INTO post VALUES (2, 'ADA@EXAMPLE.COM')")
            var waited = 0
            while try Self.ids(posts) != [1, 2], waited < 50 {
                _ = try context.waitForChanges(timeout: .milliseconds(100))
                waited += 1
            }
            #expect(try Self.ids(posts) == [1, 2])
            #expect(try ObjectFixture.disagreements(of: context, with: try DatabaseContext(url: url)).isEmpty)
        }
    }

    /// `numeric` keys stored at other scales (1.0 and 1.00) and `interval` keys the server
    /// takes for one (a day and 24 hours) pair as the server pairs them.
    @Test func numericAndIntervalKeys() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE grade (score numeric PRIMARY KEY);
            CREATE TABLE exam (id int PRIMARY KEY, score numeric REFERENCES grade);
            CREATE TABLE span (length interval PRIMARY KEY);
            CREATE TABLE shift (id int PRIMARY KEY, length interval REFERENCES span);
            INSERT INTO grade VALUES (1.0), (2);
            INSERT INTO exam VALUES (1, 1.00), (2, 1), (3, 2.000);
            INSERT INTO span VALUES ('1 day'), ('1 hour');
            INSERT INTO shift VALUES (1, '24 hours'), (2, '1 day'), (3, '60 minutes');
            """) { f in
            let grades = try f.context.fetch(FetchRequest("grade"))
            try f.context.prefetch(["exam"], for: grades)
            #expect(try grades.map { try Self.ids($0.objects(forKey: "exam")) }.sorted { $0.count > $1.count } == [[1, 2], [3]])
            for exam in try f.context.fetch(FetchRequest("exam")) { #expect(try exam.object(forKey: "grade") != nil) }
            let spans = try f.context.fetch(FetchRequest("span"))
            #expect(try spans.map { try $0.count(forKey: "shift") }.sorted() == [1, 2])
            let day = try #require(try f.context.object("span", primaryKey: PostgresInterval(days: 1)))
            let shifts = try day.objects(forKey: "shift")
            #expect(try Self.ids(shifts) == [1, 2])
            let third = try #require(try f.context.object("shift", primaryKey: 3))
            try third.setValue(PostgresInterval(microseconds: 86_400_000_000), forKey: "length")
            #expect(try Self.ids(shifts) == [1, 2, 3])
            #expect(try f.disagreements().isEmpty)
        }
    }

    /// Pending writes (a context that does not autocommit) join sets by bytes while pending;
    /// once saved, the sets are as the database pairs them. A new account and a post that
    /// names it in other case are saved account first.
    @Test func savedWritesPairAsTheServerDoes() throws {
        try ObjectFixture.inSchema(made: Self.schema()) { f in
            let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
            let adas = try ada.objects(forKey: "post")
            f.context.autocommits = false
            let fifth = try f.context.insert("post", values: ["id": 5, "author": "ADA@example.COM"])
            let carol = try f.context.insert("account", values: ["email": "carol@example.com"])
            _ = try f.context.insert("post", values: ["id": 6, "author": "CAROL@example.com"])
            let second = try #require(try f.context.object("post", primaryKey: 2))
            try second.setValue("BOB@EXAMPLE.COM", forKey: "author")
            try f.context.save()
            #expect(adas.contains(fifth))
            #expect(try Self.ids(adas) == [1, 5])
            #expect(try Self.ids(carol.objects(forKey: "post")) == [6])
            #expect(try f.disagreements().isEmpty)
        }
    }
}
