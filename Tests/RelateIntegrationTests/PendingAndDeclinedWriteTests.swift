import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Pending writes across relationships the server pairs, and writes a trigger declines, in
/// every path (a review of the day's change: each failing before its fix; the controls with
/// keys paired by bytes held).
@Suite struct PendingAndDeclinedWriteTests {
    static func ids(_ set: RelationshipSet) throws -> [Int] {
        try set.allObjects.map { try #require($0.value(forKey: "id") as? Int) }.sorted()
    }

    /// Pending (autocommits = false): a post re-pointed to Bob in other bytes answers Bob
    /// as its to-one, as it does for a key memory pairs by bytes.
    @Test func pendingToOneFollowsPendingValue() throws {
        try ObjectFixture.inSchema(made: ServerEqualKeyTests.schema()) { f in
            let bob = try #require(try f.context.object("account", primaryKey: "bob@example.com"))
            let second = try #require(try f.context.object("post", primaryKey: 2))
            f.context.autocommits = false
            try second.setValue("BOB@EXAMPLE.COM", forKey: "author")
            let pending = try second.object(forKey: "account")
            #expect(pending === bob, "while pending: \(String(describing: pending))")
        }
    }

    /// The same with a deterministic key (control: holds).
    @Test func pendingToOneFollowsPendingValueDeterministic() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE account (email text PRIMARY KEY);
            CREATE TABLE post (id int PRIMARY KEY, author text REFERENCES account);
            INSERT INTO account VALUES ('ada'), ('bob');
            INSERT INTO post VALUES (2, 'ada');
            """) { f in
            let bob = try #require(try f.context.object("account", primaryKey: "bob"))
            let second = try #require(try f.context.object("post", primaryKey: 2))
            f.context.autocommits = false
            try second.setValue("bob", forKey: "author")
            let pending = try second.object(forKey: "account")
            #expect(pending === bob, "while pending: \(String(describing: pending))")
        }
    }

    /// Pending: a post moved from Ada to Bob, then Ada's set loaded for the first time:
    /// the moved post is not Ada's (memory's pending value names Bob).
    @Test func pendingSetLoadedAfterMove() throws {
        try ObjectFixture.inSchema(made: ServerEqualKeyTests.schema()) { f in
            let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
            let first = try #require(try f.context.object("post", primaryKey: 1))
            f.context.autocommits = false
            try first.setValue("bob@example.com", forKey: "author")
            let adas = try ada.objects(forKey: "post")
            #expect(try Self.ids(adas) == [2])
        }
    }

    /// Pending: post 1 moved to Bob, then Ada deleted (ON DELETE CASCADE). The cascade
    /// reaches post 2 only; post 1, Bob's by then, stays.
    @Test func pendingDeleteAfterMoveSparesMovedPost() throws {
        try ObjectFixture.inSchema(made: ServerEqualKeyTests.schema()) { f in
            let ada = try #require(try f.context.object("account", primaryKey: "ada@example.com"))
            let first = try #require(try f.context.object("post", primaryKey: 1))
            f.context.autocommits = false
            try first.setValue("bob@example.com", forKey: "author")
            try f.context.delete(ada)
            #expect(!first.isDeleted, "post 1 was moved to Bob before Ada's delete")
            try f.context.save()
            #expect(!first.isDeleted)
            let d = try f.disagreements()
            #expect(d.isEmpty, "\(d)")
        }
    }

    /// A soft delete (BEFORE DELETE trigger returning NULL) saved from pending writes: the
    /// error says a trigger declined it, as a delete through does, not that another client
    /// deleted the row.
    @Test func pendingDeleteDeclinedByTrigger() throws {
        try ObjectFixture.inSchema(made: EveryRelationEdgeTests.softDelete) { f in
            let one = try #require(try f.context.object("item", primaryKey: 1))
            f.context.autocommits = false
            try f.context.delete(one)
            let error = #expect(throws: RelateError.self) { try f.context.save() }
            #expect(error?.message.contains("another client") == false, "\(error.map { "\($0)" } ?? "")")
        }
    }

    /// An INSTEAD OF UPDATE trigger that writes the base table but returns NULL (the update
    /// is applied; the view reports no row): no error says it "was not applied", and the
    /// object holds the new price the database took.
    @Test func insteadOfTriggerThatWritesButReturnsNull() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE item (id int PRIMARY KEY, price int NOT NULL);
            INSERT INTO item VALUES (1, 10);
            CREATE VIEW item_view AS SELECT id, price FROM item;
            CREATE FUNCTION item_view_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN UPDATE item SET price = NEW.price WHERE id = OLD.id; RETURN NULL; END $$;
            CREATE TRIGGER item_view_update INSTEAD OF UPDATE ON item_view FOR EACH ROW EXECUTE FUNCTION item_view_update();
            """) { f in
            let one = try #require(try f.context.object("item_view", primaryKey: 1))
            try one.setValue(500, forKey: "price")
            let stored = try f.context.connection.query("SELECT price FROM item WHERE id = 1")[0].decode(Int.self, at: 0)
            #expect(stored == 500)
            #expect(try one.value(forKey: "price") as? Int == 500)
            #expect(!one.isDeleted)
        }
    }

    /// Control for pendingSetLoadedAfterMove and pendingDeleteAfterMoveSparesMovedPost with a
    /// deterministic key (holds).
    @Test func pendingMoveDeterministicControl() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE account (email text PRIMARY KEY);
            CREATE TABLE post (id int PRIMARY KEY, author text REFERENCES account ON DELETE CASCADE);
            INSERT INTO account VALUES ('ada'), ('bob');
            INSERT INTO post VALUES (1, 'ada'), (2, 'ada'), (3, 'bob');
            """) { f in
            let ada = try #require(try f.context.object("account", primaryKey: "ada"))
            let first = try #require(try f.context.object("post", primaryKey: 1))
            f.context.autocommits = false
            try first.setValue("bob", forKey: "author")
            #expect(try Self.ids(ada.objects(forKey: "post")) == [2])
            try f.context.delete(ada)
            #expect(!first.isDeleted)
            try f.context.save()
            #expect(!first.isDeleted)
        }
    }
}
