import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// `save()`'s order of writes (`DatabaseContext.saveSteps(_:)`), each save found by a review
/// of it: saves that failed with 23503 or 23505, a conflict or a refusal, though an order of
/// the same statements exists that the database takes, and one that left a row behind.
@Suite struct SaveOrderTests {
    static func with(_ sql: String, _ body: (ObjectFixture) throws -> Void) throws { try WriteEdgeTests.with(sql, body) }

    static func count(_ fixture: ObjectFixture, _ sql: String) throws -> Int {
        try fixture.context.connection.query(sql.replacingOccurrences(of: "S.", with: "\"\(fixture.schema)\"."))[0].decode(Int.self, at: 0)
    }

    // MARK: - Saves that failed

    /// Two rows that refer to each other (deferred FK), both deleted; a new row takes one's
    /// unique code. Order that works: DELETE 1, DELETE 2, INSERT 3 (632a623 sent DELETE 1,
    /// INSERT 3, DELETE 2, which works too).
    @Test func deletesInADeferredCycleThenANewRowTakesTheirCode() throws {
        try Self.with(
            """
            CREATE TABLE node (id int PRIMARY KEY, code text UNIQUE,
                next_id int CONSTRAINT next REFERENCES node DEFERRABLE INITIALLY DEFERRED);
            INSERT INTO node VALUES (1, 'a', NULL), (2, 'b', 1);
            UPDATE node SET next_id = 2 WHERE id = 1;
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            try context.delete(try #require(try context.object("node", primaryKey: 1)))
            try context.delete(try #require(try context.object("node", primaryKey: 2)))
            _ = try context.insert("node", values: ["id": 3, "code": "a"])
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.node") == 1)
        }
    }

    /// A shelf deleted, a new shelf (serial key) takes its code, its book moves to the new
    /// shelf; the book's FK is deferred. Order that works: DELETE shelf 1, INSERT shelf,
    /// UPDATE book (what 632a623 sent).
    @Test func aNewRowTakesADeletedRowsCodeAndItsDependantMovesToIt() throws {
        try Self.with(
            """
            CREATE TABLE shelf (id serial PRIMARY KEY, code text UNIQUE);
            CREATE TABLE book (id int PRIMARY KEY,
                shelf_id int CONSTRAINT shelf REFERENCES shelf DEFERRABLE INITIALLY DEFERRED);
            INSERT INTO shelf (code) VALUES ('A1');
            INSERT INTO book VALUES (1, 1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let book = try #require(try context.object("book", primaryKey: 1))
            try context.delete(try #require(try context.object("shelf", primaryKey: 1)))
            let shelf = try context.insert("shelf", values: ["code": "A1"])
            try book.setValue(shelf, forKey: "shelf")
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A card deleted by a cascade (its owner deleted), its tag pair removed first, and a new
    /// card taking its code: the owner's delete goes before the insert, but the pair that
    /// leaves the cascaded card goes after. Order that works: DELETE card_tag, DELETE owner,
    /// INSERT card. (Without the new card the same save works.)
    @Test func aCascadedRowsPairLeavesBeforeTheCascade() throws {
        try Self.with(
            """
            CREATE TABLE owner (id int PRIMARY KEY);
            CREATE TABLE card (id int PRIMARY KEY, owner_id int CONSTRAINT owner REFERENCES owner ON DELETE CASCADE, code text UNIQUE);
            CREATE TABLE tag (id int PRIMARY KEY);
            CREATE TABLE card_tag (card_id int NOT NULL REFERENCES card, tag_id int NOT NULL REFERENCES tag,
                PRIMARY KEY (card_id, tag_id));
            INSERT INTO owner VALUES (1), (2);
            INSERT INTO card VALUES (10, 1, 'X');
            INSERT INTO tag VALUES (1);
            INSERT INTO card_tag VALUES (10, 1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let card = try #require(try context.object("card", primaryKey: 10))
            try card.objects(forKey: "tag").remove(try #require(try context.object("tag", primaryKey: 1)))
            let ada = try #require(try context.object("owner", primaryKey: 1))
            try context.delete(ada)
            #expect(card.isDeleted)
            _ = try context.insert("card", values: ["id": 11, "owner": try context.object("owner", primaryKey: 2), "code": "X"])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A charge moved from a card a cascade deletes to another card, and a new card taking
    /// the cascaded card's code: the owner's delete goes before the insert, the charge's
    /// update after. Order that works: UPDATE charge, DELETE owner, INSERT card.
    @Test func aCascadedRowsDependantMovesAwayBeforeTheCascade() throws {
        try Self.with(
            """
            CREATE TABLE owner (id int PRIMARY KEY);
            CREATE TABLE card (id int PRIMARY KEY, owner_id int CONSTRAINT owner REFERENCES owner ON DELETE CASCADE, code text UNIQUE);
            CREATE TABLE charge (id int PRIMARY KEY, card_id int CONSTRAINT card REFERENCES card);
            INSERT INTO owner VALUES (1), (2);
            INSERT INTO card VALUES (10, 1, 'X'), (20, 2, 'Y');
            INSERT INTO charge VALUES (100, 10);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let card = try #require(try context.object("card", primaryKey: 10))
            try #require(try context.object("charge", primaryKey: 100)).setValue(try context.object("card", primaryKey: 20), forKey: "card")
            try context.delete(try #require(try context.object("owner", primaryKey: 1)))
            #expect(card.isDeleted)
            _ = try context.insert("card", values: ["id": 11, "owner": try context.object("owner", primaryKey: 2), "code": "X"])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// An update taking the unique code of a row a cascade deletes, no new row in the save:
    /// the cascade's root is looked for only when there are new rows. Order that works:
    /// DELETE owner (cascading card 10), UPDATE card 20. The header says "a new row, or an
    /// update, that takes a key value … the delete (… the one a cascade followed) first".
    @Test func anUpdateTakesACascadedRowsCode() throws {
        try Self.with(
            """
            CREATE TABLE owner (id int PRIMARY KEY);
            CREATE TABLE card (id int PRIMARY KEY, owner_id int CONSTRAINT owner REFERENCES owner ON DELETE CASCADE, code text UNIQUE);
            INSERT INTO owner VALUES (1), (2);
            INSERT INTO card VALUES (10, 1, 'X'), (20, 2, 'Y');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let card = try #require(try context.object("card", primaryKey: 10))
            try context.delete(try #require(try context.object("owner", primaryKey: 1)))
            #expect(card.isDeleted)
            try #require(try context.object("card", primaryKey: 20)).setValue("X", forKey: "code")
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A key changed (ON UPDATE NO ACTION) and the one row that referred to it deleted:
    /// the update goes before the delete. Order that works: DELETE player, UPDATE team.
    @Test func aKeyChangedWhileItsDependantIsDeleted() throws {
        try Self.with(
            """
            CREATE TABLE team (code text PRIMARY KEY);
            CREATE TABLE player (id int PRIMARY KEY, team_code text CONSTRAINT team REFERENCES team);
            INSERT INTO team VALUES ('red');
            INSERT INTO player VALUES (1, 'red');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            try context.delete(try #require(try context.object("player", primaryKey: 1)))
            try #require(try context.object("team", primaryKey: "red")).setValue("blue", forKey: "code")
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A unique key NULLS NOT DISTINCT: the deleted row's (room, NULL) taken by a new row.
    /// Order that works: DELETE seat 1, INSERT seat 2.
    @Test func aNullsNotDistinctKeyTakenByANewRow() throws {
        try Self.with(
            """
            CREATE TABLE seat (id int PRIMARY KEY, room text, label text, UNIQUE NULLS NOT DISTINCT (room, label));
            INSERT INTO seat VALUES (1, 'r', NULL);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            try context.delete(try #require(try context.object("seat", primaryKey: 1)))
            _ = try context.insert("seat", values: ["id": 2, "room": "r", "label": nil])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A partial unique index (the usual "one active row per email"): the deleted row's
    /// email taken by a new row. Order that works: DELETE account 1, INSERT account 2.
    @Test func aPartialUniqueIndexTakenByANewRow() throws {
        try Self.with(
            """
            CREATE TABLE account (id int PRIMARY KEY, email text, active bool NOT NULL DEFAULT true);
            CREATE UNIQUE INDEX account_active_email ON account (email) WHERE active;
            INSERT INTO account VALUES (1, 'a@x', true);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            try context.delete(try #require(try context.object("account", primaryKey: 1)))
            _ = try context.insert("account", values: ["id": 2, "email": "a@x"])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A one-to-one taken from a holder memory holds (the foreign key's side).
    @Test func aOneToOneTakenFromAHolderInMemory() throws {
        try Self.with(
            """
            CREATE TABLE person (id int PRIMARY KEY, name text);
            CREATE TABLE passport (id int PRIMARY KEY, person_id int UNIQUE CONSTRAINT person REFERENCES person);
            INSERT INTO person VALUES (1, 'Ada');
            INSERT INTO passport VALUES (10, 1), (20, NULL);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            let old = try #require(try context.object("passport", primaryKey: 10))
            let new = try #require(try context.object("passport", primaryKey: 20))
            try new.setValue(ada, forKey: "person")
            #expect(try old.value(forKey: "person_id") == nil)
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A row moved to a new parent that is then deleted (inserted and deleted in the same
    /// save): the cascade deletes the row in memory, and nothing deletes it in the database.
    @Test func aRowCascadedByANewRowDeletedInTheSameSave() throws {
        try Self.with(
            """
            CREATE TABLE owner (id serial PRIMARY KEY);
            CREATE TABLE card (id int PRIMARY KEY, owner_id int CONSTRAINT owner REFERENCES owner ON DELETE CASCADE);
            INSERT INTO owner DEFAULT VALUES;
            INSERT INTO card VALUES (10, 1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let card = try #require(try context.object("card", primaryKey: 10))
            let owner = try context.insert("owner", values: [:])
            try card.setValue(owner, forKey: "owner")
            try context.delete(owner)
            #expect(card.isDeleted)
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.card") == 0)
        }
    }

    /// A key changed (ON UPDATE CASCADE: memory moves the child's foreign key), then the
    /// parent and its child deleted, parent first. The child's delete is ordered by its
    /// foreign key as memory holds it (10) against the parent's key as the database holds it
    /// (1): no order, the parent goes first. Order that works: DELETE child, DELETE parent
    /// (632a623 found it by the object memory registered under the child's value).
    @Test func aKeyChangedThenTheParentAndItsChildDeleted() throws {
        try Self.with(
            """
            CREATE TABLE parent (id int PRIMARY KEY);
            CREATE TABLE child (id int PRIMARY KEY, parent_id int CONSTRAINT parent REFERENCES parent ON UPDATE CASCADE);
            INSERT INTO parent VALUES (1);
            INSERT INTO child VALUES (5, 1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let parent = try #require(try context.object("parent", primaryKey: 1))
            let child = try #require(try context.object("child", primaryKey: 5))
            try parent.setValue(10, forKey: "id")
            #expect(try child.value(forKey: "parent_id") as? Int == 10)
            try context.delete(parent)
            try context.delete(child)
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.parent") == 0)
        }
    }

    /// A shelf deleted, a new shelf under its key, a new book on the new shelf: validation
    /// takes the new book for a dependant of the deleted shelf. Order that works: DELETE
    /// shelf, INSERT shelf, INSERT book.
    @Test func aNewRowReferringToANewRowUnderADeletedRowsKey() throws {
        try Self.with(
            """
            CREATE TABLE shelf (code text PRIMARY KEY, label text);
            CREATE TABLE book (id int PRIMARY KEY, shelf_code text CONSTRAINT shelf REFERENCES shelf);
            INSERT INTO shelf VALUES ('A1', 'old');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            try context.delete(try #require(try context.object("shelf", primaryKey: "A1")))
            let shelf = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            _ = try context.insert("book", values: ["id": 1, "shelf": shelf])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A row a cascade deletes refers to another row deleted: the delete that cascades goes
    /// first (the other's delete would find the row still referring to it).
    @Test func aRowACascadeDeletesLeavesWhatItRefersToFirst() throws {
        try Self.with(
            """
            CREATE TABLE team (id int PRIMARY KEY);
            CREATE TABLE owner (id int PRIMARY KEY);
            CREATE TABLE card (id int PRIMARY KEY, team_id int CONSTRAINT crew REFERENCES team,
                owner_id int CONSTRAINT owner REFERENCES owner ON DELETE CASCADE);
            INSERT INTO team VALUES (1); INSERT INTO owner VALUES (1);
            INSERT INTO card VALUES (10, 1, 1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let card = try #require(try context.object("card", primaryKey: 10))
            let owner = try #require(try context.object("owner", primaryKey: 1))
            let team = try #require(try context.object("team", primaryKey: 1))
            _ = try owner.objects(forKey: "card").count
            // The team's cards not loaded: memory cannot tell the team is still referred to.
            try context.delete(team)
            try context.delete(owner)
            #expect(card.isDeleted)
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.card") == 0)
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.team") == 0)
        }
    }

    // MARK: - Saves that failed before the order was planned

    @Test func compositeKeyDeletedAndTakenWithAForeignKeyInAnotherOrder() throws {
        try Self.with(
            """
            CREATE TABLE room (building text, number int, PRIMARY KEY (building, number));
            CREATE TABLE booking (id int PRIMARY KEY, number int, building text,
                CONSTRAINT room FOREIGN KEY (number, building) REFERENCES room (number, building));
            INSERT INTO room VALUES ('A', 1), ('B', 2);
            INSERT INTO booking VALUES (1, 1, 'A'), (2, 1, 'A');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let booking = try #require(try context.object("booking", primaryKey: 1))
            try #require(try context.object("booking", primaryKey: 2)).setValue(try context.object("room", primaryKey: ["B", 2]), forKey: "room")
            try context.delete(try #require(try context.object("room", primaryKey: ["A", 1])))
            try context.delete(booking)
            _ = try context.insert("room", values: ["building": "A", "number": 1])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aLongChainOfNewRowsByGivenKeysInReverse() throws {
        try Self.with(
            """
            CREATE TABLE person (id int PRIMARY KEY, name text UNIQUE, mentor_id int CONSTRAINT mentor REFERENCES person);
            INSERT INTO person VALUES (1000, 'p1000', NULL);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            for id in 1..<400 { _ = try context.insert("person", values: ["id": id, "name": "p\(id)", "mentor_id": id + 1 == 400 ? 1000 : id + 1]) }
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.person") == 400)
        }
    }

    static let shelves = """
        CREATE TABLE shelf (code text PRIMARY KEY, label text CHECK (label <> 'bad'));
        CREATE TABLE book (id int PRIMARY KEY, shelf_code text CONSTRAINT shelf REFERENCES shelf, title text CHECK (title <> 'bad'));
        INSERT INTO shelf VALUES ('A1', 'old'), ('B2', 'other');
        INSERT INTO book VALUES (1, 'A1', 'moved'), (2, 'A1', 'gone');
        """

    /// The plan of several round trips in a transaction that rolls back, then saved again.
    @Test func aPlannedSaveInATransactionThatRollsBackThenAgain() throws {
        try Self.with(Self.shelves) { fixture in
            let context = fixture.context
            context.autocommits = false
            try #require(try context.object("book", primaryKey: 1)).setValue(try context.object("shelf", primaryKey: "B2"), forKey: "shelf")
            try context.delete(try #require(try context.object("book", primaryKey: 2)))
            try context.delete(try #require(try context.object("shelf", primaryKey: "A1")))
            _ = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            _ = try context.insert("book", values: ["id": 2, "shelf_code": "B2", "title": "again"])
            struct Boom: Error {}
            #expect(throws: Boom.self) { try context.transaction { try context.save(); throw Boom() } }
            #expect(context.hasChanges)
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.book WHERE shelf_code = 'B2'") == 2)
        }
    }

    /// The plan's last round trip fails (a CHECK): memory as before, the fix saved.
    @Test func aPlannedSaveWhoseLastStepFailsIsRetried() throws {
        try Self.with(Self.shelves) { fixture in
            let context = fixture.context
            context.autocommits = false
            let moved = try #require(try context.object("book", primaryKey: 1))
            try moved.setValue(try context.object("shelf", primaryKey: "B2"), forKey: "shelf")
            try context.delete(try #require(try context.object("book", primaryKey: 2)))
            try context.delete(try #require(try context.object("shelf", primaryKey: "A1")))
            let shelf = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            let book = try #require(try context.object("book", primaryKey: 1))
            try book.setValue("bad", forKey: "title")
            #expect(throws: RelateError.self) { try context.save() }
            #expect(context.hasChanges)
            #expect(context.insertedObjects.count == 1)
            try book.setValue("fine", forKey: "title")
            try context.save()
            #expect(try shelf.value(forKey: "label") as? String == "new")
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func undoRedoOfAnInsertTakingADeletedKey() throws {
        try Self.with(Self.shelves) { fixture in
            let context = fixture.context
            context.autocommits = false
            for id in [1, 2] { try context.delete(try #require(try context.object("book", primaryKey: id))) }
            try context.delete(try #require(try context.object("shelf", primaryKey: "A1")))
            _ = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            try context.undo()
            try context.redo()
            try context.undo()
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.shelf") == 1)
        }
    }

    @Test func aKeyChangedOnUpdateCascadeAndTheOldKeyTakenAndTheNewReferred() throws {
        try Self.with(
            """
            CREATE TABLE team (code text PRIMARY KEY);
            CREATE TABLE player (id int PRIMARY KEY, team_code text CONSTRAINT team REFERENCES team ON UPDATE CASCADE);
            INSERT INTO team VALUES ('red');
            INSERT INTO player VALUES (1, 'red');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            _ = try context.insert("player", values: ["id": 3, "team_code": "crimson"])
            let red = try #require(try context.object("team", primaryKey: "red"))
            try red.setValue("crimson", forKey: "code")
            let newRed = try context.insert("team", values: ["code": "red"])
            _ = try context.insert("player", values: ["id": 2, "team": newRed])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aTagDeletedAndItsNameTakenByANewTagThatJoins() throws {
        try Self.with(
            """
            CREATE TABLE book (id int PRIMARY KEY);
            CREATE TABLE tag (id serial PRIMARY KEY, name text UNIQUE);
            CREATE TABLE book_tag (book_id int NOT NULL REFERENCES book, tag_id int NOT NULL REFERENCES tag, PRIMARY KEY (book_id, tag_id));
            INSERT INTO book VALUES (1); INSERT INTO tag (name) VALUES ('t');
            INSERT INTO book_tag VALUES (1, 1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let book = try #require(try context.object("book", primaryKey: 1))
            let old = try #require(try context.object("tag", primaryKey: 1))
            try book.objects(forKey: "tag").remove(old)
            try context.delete(old)
            let new = try context.insert("tag", values: ["name": "t"])
            try book.objects(forKey: "tag").insert(new)
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aNewRowTakesAOneToOneFromAHolder() throws {
        try Self.with(
            """
            CREATE TABLE person (id int PRIMARY KEY);
            CREATE TABLE passport (id serial PRIMARY KEY, person_id int UNIQUE CONSTRAINT person REFERENCES person);
            INSERT INTO person VALUES (1);
            INSERT INTO passport (person_id) VALUES (1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            let new = try context.insert("passport", values: [:])
            try new.setValue(ada, forKey: "person")
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func keysShiftedAlongAChainAndTheFirstTaken() throws {
        try Self.with(
            """
            CREATE TABLE item (id int PRIMARY KEY, name text);
            INSERT INTO item VALUES (1, 'a'), (2, 'b'), (3, 'c');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            for id in [3, 2, 1] { try #require(try context.object("item", primaryKey: id)).setValue(id + 1, forKey: "id") }
            _ = try context.insert("item", values: ["id": 1, "name": "new"])
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aSelfReferencingCascadeChainAndANewRowTakingTheLastCode() throws {
        try Self.with(
            """
            CREATE TABLE node (id int PRIMARY KEY, code text UNIQUE, parent_id int CONSTRAINT parent REFERENCES node ON DELETE CASCADE);
            INSERT INTO node SELECT g, 'n' || g, NULLIF(g - 1, 0) FROM generate_series(1, 30) g;
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            for id in 1...30 { _ = try context.object("node", primaryKey: id) }
            try context.delete(try #require(try context.object("node", primaryKey: 1)))
            _ = try context.insert("node", values: ["id": 31, "code": "n30"])
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try Self.count(fixture, "SELECT count(*)::int8 FROM S.node") == 1)
        }
    }
}
