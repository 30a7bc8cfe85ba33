import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Every relation an entity, at its edges (an adversarial review's findings, each failing
/// before its fix, and what it found to hold): keys that would not tell rows apart, views
/// that join, materialized views, partitions, inherited keys, writes a trigger declines.
@Suite struct EveryRelationEdgeTests {
    static func count(_ f: ObjectFixture, _ sql: String) throws -> Int {
        try f.context.connection.query(sql)[0].decode(Int.self, at: 0)
    }

    /// A view joined to a table others INHERITS from (no ONLY) on that table's key: the
    /// key is not inherited, so a child's row under the same key doubles the view's rows.
    @Test func viewJoinedToAParentWithChildren() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE person (id int PRIMARY KEY, name text NOT NULL);
            CREATE TABLE vip (level int, PRIMARY KEY (id)) INHERITS (person);
            CREATE TABLE email (id int PRIMARY KEY, address text NOT NULL, person_id int NOT NULL);
            INSERT INTO person VALUES (1, 'Ada');
            INSERT INTO vip VALUES (1, 'Ada the VIP', 3);
            INSERT INTO email VALUES (10, 'ada@example.com', 1);
            CREATE VIEW mail_owner AS SELECT e.id, e.address, p.name AS owner FROM email e JOIN person p ON p.id = e.person_id;
            """) { f in
            #expect(try Self.count(f, "SELECT count(*) FROM mail_owner WHERE id = 10") == 2)
            let entity = try f.context.model.entity("mail_owner")
            let objects = try f.context.fetch("mail_owner")
            #expect(entity.primaryKey.isEmpty, "keyed by \(entity.primaryKey) (\(entity.keyName ?? "")) although id 10 is two rows; fetch gave \(objects.count) objects, \(Set(objects.map(ObjectIdentifier.init)).count) distinct")
        }
    }

    /// A unique index under another collation than its column's is no key: `=` on the
    /// column (what a write by key sends) matches rows the index tells apart. One under the
    /// column's own collation is.
    @Test func uniqueIndexUnderAnotherCollationIsNoKey() throws {
        try ObjectFixture.inSchema(made: """
            CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
            CREATE TABLE account (email text COLLATE ci NOT NULL, name text);
            CREATE UNIQUE INDEX account_email_bytes ON account (email COLLATE "C");
            INSERT INTO account VALUES ('ada@x', 'lower'), ('ADA@x', 'upper');
            """) { f in
            let entity = try f.context.model.entity("account")
            #expect(entity.primaryKey.isEmpty, "keyed by \(entity.primaryKey) (\(entity.keyName ?? ""))")
            try f.context.connection.executeScript("""
                CREATE TABLE member (email text COLLATE ci NOT NULL);
                CREATE UNIQUE INDEX member_email ON member (email);
                """)
            let model = try Model(catalog: try Catalog.introspect(f.context.connection, schemas: [f.schema]))
            #expect(try model.entity("member").primaryKey == ["email"])
            #expect(try model.entity("account").primaryKey.isEmpty)
        }
    }

    /// Nor does such an index pin a join in a view: the view has no key.
    @Test func viewJoinPinnedByAnIndexUnderAnotherCollation() throws {
        try ObjectFixture.inSchema(made: """
            CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
            CREATE TABLE account (id int PRIMARY KEY, email text COLLATE ci NOT NULL);
            CREATE UNIQUE INDEX account_email_bytes ON account (email COLLATE "C");
            CREATE TABLE post (id int PRIMARY KEY, author text COLLATE ci NOT NULL);
            INSERT INTO account VALUES (1, 'ada@x'), (2, 'ADA@x');
            INSERT INTO post VALUES (10, 'Ada@X');
            CREATE VIEW post_author AS SELECT p.id, p.author, a.id AS account FROM post p JOIN account a ON a.email = p.author;
            """) { f in
            #expect(try Self.count(f, "SELECT count(*) FROM post_author WHERE id = 10") == 2)
            let entity = try f.context.model.entity("post_author")
            #expect(entity.primaryKey.isEmpty, "keyed by \(entity.primaryKey) (\(entity.keyName ?? ""))")
        }
    }

    /// A self-join view carrying one foreign key from each side: two to-ones under one constraint name.
    @Test func selfJoinViewCarriesOneForeignKeyFromEachSide() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE node (id int PRIMARY KEY, name text, parent_id int REFERENCES node (id));
            INSERT INTO node VALUES (1, 'root', NULL), (2, 'mid', 1), (3, 'leaf', 2);
            CREATE VIEW node_up AS SELECT a.id, a.name, a.parent_id, b.parent_id AS grand_id
                FROM node a LEFT JOIN node b ON b.id = a.parent_id;
            """) { f in
            let leaf = try #require(try f.context.object("node_up", primaryKey: 3))
            #expect(try leaf.object(forKey: "parent")?.value(forKey: "id", as: Int.self) == 2)
            #expect(try leaf.object(forKey: "grand")?.value(forKey: "id", as: Int.self) == 1)
            let root = try #require(try f.context.object("node", primaryKey: 1))
            let viaGrand = try root.objects(forKey: "node_up_by_grand_id").allObjects.map { try $0.value(forKey: "id", as: Int.self)! }
            let viaParent = try root.objects(forKey: "node_up_by_parent_id").allObjects.map { try $0.value(forKey: "id", as: Int.self)! }
            #expect(viaGrand == [3] && viaParent == [2], "grand \(viaGrand) parent \(viaParent)")
            #expect(try f.disagreements().isEmpty)
        }
    }

    /// A row moves between partitions when its partition key (part of its key) changes;
    /// a referencing row follows by ON UPDATE CASCADE.
    @Test func rowMovesBetweenPartitions() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE measurement (id int NOT NULL, region text NOT NULL, v int, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
            CREATE TABLE m_north PARTITION OF measurement FOR VALUES IN ('north');
            CREATE TABLE m_south PARTITION OF measurement FOR VALUES IN ('south');
            CREATE TABLE m_default PARTITION OF measurement DEFAULT;
            CREATE TABLE reading (id int PRIMARY KEY, m_id int, m_region text,
                FOREIGN KEY (m_id, m_region) REFERENCES measurement ON UPDATE CASCADE ON DELETE CASCADE);
            INSERT INTO measurement VALUES (1, 'north', 5), (2, 'south', 6);
            INSERT INTO reading VALUES (100, 1, 'north'), (101, 1, 'north');
            """) { f in
            let m = try #require(try f.context.object("measurement", primaryKey: [1, "north"]))
            let readings = try m.objects(forKey: "reading")
            #expect(readings.count == 2)
            let r = try #require(try f.context.object("reading", primaryKey: 100))
            _ = try r.object(forKey: "measurement")
            try m.setValue("west", forKey: "region")
            #expect(try Self.count(f, "SELECT count(*) FROM m_default") == 1)
            #expect(try r.value(forKey: "m_region", as: String.self) == "west")
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
            try f.context.delete(m)
            #expect(try Self.count(f, "SELECT count(*) FROM reading") == 0)
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
        }
    }

    /// France, places referring to it, and capitals that inherit from places (and their key).
    static let places = """
        CREATE TABLE country (id int PRIMARY KEY, name text);
        CREATE TABLE place (id int PRIMARY KEY, name text, country_id int REFERENCES country (id));
        CREATE TABLE capital (since int, PRIMARY KEY (id)) INHERITS (place);
        INSERT INTO country VALUES (1, 'France');
        """

    /// A parent's foreign key copied to its child is not enforced on the child's rows:
    /// deleting the referenced row is allowed by the server.
    @Test func deletingATargetOfAnInheritedCopy() throws {
        try ObjectFixture.inSchema(made: Self.places + """
            INSERT INTO capital VALUES (5, 'Paris', 1, 508);
            """) { f in
            let france = try #require(try f.context.object("country", primaryKey: 1))
            #expect(try france.objects(forKey: "capital").count == 1)
            try f.context.delete(france)
            #expect(try Self.count(f, "SELECT count(*) FROM country") == 0)
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
        }
    }

    /// WITH CHECK OPTION: an update moving a row out of the view is refused by the server;
    /// memory keeps the old value.
    @Test func checkOptionRefusalLeavesMemory() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE item (id int PRIMARY KEY, price int NOT NULL);
            INSERT INTO item VALUES (1, 10);
            CREATE VIEW cheap AS SELECT id, price FROM item WHERE price < 100 WITH CHECK OPTION;
            """) { f in
            let one = try #require(try f.context.object("cheap", primaryKey: 1))
            #expect(throws: RelateError.self) { try one.setValue(500, forKey: "price") }
            #expect(try one.value(forKey: "price", as: Int.self) == 10)
            #expect(try f.disagreements().isEmpty)
        }
    }

    static let snapshotSchema = """
        CREATE TABLE person (id int PRIMARY KEY, name text NOT NULL);
        CREATE TABLE email (id int PRIMARY KEY, address text NOT NULL, person_id int REFERENCES person (id) ON DELETE %@);
        INSERT INTO person VALUES (1, 'Ada'), (2, 'Grace');
        INSERT INTO email VALUES (1, 'ada@example.com', 1), (2, 'ada@work.example', 1), (3, 'grace@example.com', 2);
        CREATE MATERIALIZED VIEW mail_snapshot AS SELECT id, address, person_id FROM email;
        """

    /// A materialized view carries email's foreign key, ON DELETE CASCADE: a delete of a
    /// person deletes emails, not the snapshot's rows (until refreshed).
    @Test(arguments: ["CASCADE", "SET NULL"]) func materializedViewRowsDoNotFollowADelete(_ action: String) throws {
        try ObjectFixture.inSchema(made: Self.snapshotSchema.replacingOccurrences(of: "%@", with: action)) { f in
            #expect(try f.context.model.entity("mail_snapshot").primaryKey == ["id"])
            let ada = try #require(try f.context.object("person", primaryKey: 1))
            let snaps = try ada.objects(forKey: "mail_snapshot")
            #expect(snaps.count == 2)
            let one = try #require(try f.context.object("mail_snapshot", primaryKey: 1))
            try f.context.delete(ada)
            #expect(try Self.count(f, "SELECT count(*) FROM mail_snapshot WHERE person_id = 1") == 2)
            // The snapshot still holds the rows as they were: memory should too.
            #expect(!one.isDeleted)
            #expect(try f.context.object("mail_snapshot", primaryKey: 1)?.value(forKey: "person_id", as: Int.self) == 1)
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
        }
    }

    /// NO ACTION: a stale snapshot row referring to Grace must not stop her delete once no
    /// email refers to her.
    @Test func staleSnapshotDoesNotDenyADelete() throws {
        try ObjectFixture.inSchema(made: Self.snapshotSchema.replacingOccurrences(of: "%@", with: "NO ACTION")) { f in
            let grace = try #require(try f.context.object("person", primaryKey: 2))
            #expect(try grace.objects(forKey: "mail_snapshot").count == 1)
            try f.context.connection.execute("UPDATE email SET person_id = 1 WHERE id = 3")
            try f.context.delete(grace)
            #expect(try Self.count(f, "SELECT count(*) FROM person WHERE id = 2") == 0)
        }
    }

    /// ON UPDATE CASCADE from a key change reaches email, not the snapshot.
    @Test func materializedViewRowsDoNotFollowAKeyChange() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE person (id int PRIMARY KEY, name text NOT NULL);
            CREATE TABLE email (id int PRIMARY KEY, address text NOT NULL, person_id int REFERENCES person (id) ON UPDATE CASCADE);
            INSERT INTO person VALUES (1, 'Ada');
            INSERT INTO email VALUES (1, 'ada@example.com', 1);
            CREATE MATERIALIZED VIEW mail_snapshot AS SELECT id, address, person_id FROM email;
            """) { f in
            let ada = try #require(try f.context.object("person", primaryKey: 1))
            #expect(try ada.objects(forKey: "mail_snapshot").count == 1)
            let snap = try #require(try f.context.object("mail_snapshot", primaryKey: 1))
            try ada.setValue(7, forKey: "id")
            #expect(try snap.value(forKey: "person_id", as: Int.self) == 1)
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
        }
    }

    /// An INSTEAD OF UPDATE trigger that returns NULL: nothing was written, the object is
    /// not marked deleted (the error says a trigger declined the write).
    @Test func insteadOfTriggerReturningNull() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE item (id int PRIMARY KEY, price int NOT NULL);
            INSERT INTO item VALUES (1, 10);
            CREATE VIEW item_view AS SELECT i.id, i.price FROM item i JOIN item j ON j.id = i.id;
            CREATE FUNCTION item_view_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.price > 100 THEN RETURN NULL; END IF;
              UPDATE item SET price = NEW.price WHERE id = OLD.id;
              RETURN NEW;
            END $$;
            CREATE TRIGGER item_view_update INSTEAD OF UPDATE ON item_view FOR EACH ROW EXECUTE FUNCTION item_view_update();
            """) { f in
            let one = try #require(try f.context.object("item_view", primaryKey: 1))
            try? one.setValue(500, forKey: "price")
            #expect(!one.isDeleted)
            #expect(try f.context.object("item_view", primaryKey: 1) != nil)
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
            try one.setValue(20, forKey: "price")
            #expect(try Self.count(f, "SELECT price FROM item") == 20)
        }
    }

    /// A delete by condition on the parent reaches the child's rows: their objects and sets follow.
    @Test func deleteByConditionOnParentReachesChildObjects() throws {
        try ObjectFixture.inSchema(made: Self.places + """
            INSERT INTO place VALUES (1, 'Lyon', 1);
            INSERT INTO capital VALUES (5, 'Paris', 1, 508);
            """) { f in
            let france = try #require(try f.context.object("country", primaryKey: 1))
            let capitals = try france.objects(forKey: "capital")
            let places = try france.objects(forKey: "place")
            #expect(capitals.count == 1 && places.count == 1)
            let paris = try #require(capitals.allObjects.first)
            let gone = try f.context.delete("place", where: Key("country_id") == 1)
            #expect(gone == 2)
            #expect(paris.isDeleted)
            #expect(capitals.count == 0 && places.count == 0)
            try f.context.update("place", where: Key("country_id") == 1, values: ["name": "x"])
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
        }
    }

    /// A keyed view carries a foreign key of a table it joins (not the keyed one): the
    /// key's ON DELETE CASCADE deletes the joined row, not the view's row.
    @Test func cascadeOfAJoinedTablesKeyDoesNotDeleteTheViewsRow() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE country (id int PRIMARY KEY, name text NOT NULL);
            CREATE TABLE person (id int PRIMARY KEY, name text NOT NULL, country_id int REFERENCES country (id) ON DELETE CASCADE);
            CREATE TABLE email (id int PRIMARY KEY, address text NOT NULL, person_id int REFERENCES person (id) ON DELETE SET NULL);
            INSERT INTO country VALUES (1, 'France');
            INSERT INTO person VALUES (1, 'Ada', 1);
            INSERT INTO email VALUES (10, 'ada@example.com', 1);
            CREATE VIEW mail_place AS SELECT e.id, e.address, p.country_id
                FROM email e LEFT JOIN person p ON p.id = e.person_id;
            """) { f in
            #expect(try f.context.model.entity("mail_place").primaryKey == ["id"])
            let france = try #require(try f.context.object("country", primaryKey: 1))
            let viewRows = try france.objects(forKey: "mail_place")
            #expect(viewRows.count == 1)
            let row = try #require(viewRows.allObjects.first)
            try f.context.delete(france)
            #expect(try Self.count(f, "SELECT count(*) FROM mail_place") == 1)
            #expect(!row.isDeleted, "the view's row 10 is still there (country_id NULL)")
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
        }
    }

    /// A table's BEFORE UPDATE trigger that returns NULL: nothing was written, the row is
    /// there, and so is its object.
    @Test func beforeUpdateTriggerReturningNullOnATable() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TABLE item (id int PRIMARY KEY, price int NOT NULL);
            INSERT INTO item VALUES (1, 10);
            CREATE FUNCTION item_guard() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.price > 100 THEN RETURN NULL; END IF; RETURN NEW; END $$;
            CREATE TRIGGER item_guard BEFORE UPDATE ON item FOR EACH ROW EXECUTE FUNCTION item_guard();
            """) { f in
            let one = try #require(try f.context.object("item", primaryKey: 1))
            let error = #expect(throws: RelateError.self) { try one.setValue(500, forKey: "price") }
            #expect(error?.kind == .invalidWrite && error?.message.contains("declined") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(!one.isDeleted)
            #expect(try one.value(forKey: "price") as? Int == 10)
            do { let d = try f.disagreements(); #expect(d.isEmpty, "\(d)") }
        }
    }

    /// Items 1 and 2, deleted softly: a BEFORE DELETE trigger marks the row and returns NULL.
    static let softDelete = """
            CREATE TABLE item (id int PRIMARY KEY, deleted_at timestamptz);
            INSERT INTO item VALUES (1, NULL), (2, NULL);
            CREATE FUNCTION item_soft_delete() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN UPDATE item SET deleted_at = now() WHERE id = OLD.id; RETURN NULL; END $$;
            CREATE TRIGGER item_soft_delete BEFORE DELETE ON item FOR EACH ROW EXECUTE FUNCTION item_soft_delete();
        """

    /// A soft delete: a BEFORE DELETE trigger that marks the row and returns NULL. The delete
    /// throws, saying a trigger declined it; the object holds the row as marked, not deleted.
    /// By key too.
    @Test func aDeleteATriggerDeclinesLeavesTheObject() throws {
        try ObjectFixture.inSchema(made: Self.softDelete) { f in
            let one = try #require(try f.context.object("item", primaryKey: 1))
            let error = #expect(throws: RelateError.self) { try f.context.delete(one) }
            #expect(error?.message.contains("declined") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(!one.isDeleted)
            #expect(try one.value(forKey: "deleted_at") != nil)
            let two = try #require(try f.context.object("item", primaryKey: 2))
            #expect(throws: RelateError.self) { try f.context.delete("item", primaryKey: 2) }
            #expect(!two.isDeleted)
            #expect(try f.disagreements().isEmpty)
        }
    }
}
