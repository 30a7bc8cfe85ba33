import Foundation
import Testing

@testable import Relate

/// Every write goes to the database at once, with the exact SQL asserted, and memory —
/// both sides of every relationship — agrees with the database afterwards.
@Suite struct WriteThroughTests {
    @Test func attributeIsOneUpdate() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let ada = try #require(try fixture.context.object("person", primaryKey: 1))
            let sql = try fixture.sql { try ada.setValue("King", forKey: "surname") }
            let s = "\"\(fixture.schema)\""
            #expect(sql == [#"UPDATE \#(s)."person" SET "surname" = $1 WHERE "id" = $2 RETURNING "id", "firstname", "surname""#])
            #expect(try ada.value(forKey: "surname") as? String == "King")
            try ada.setValue(nil, forKey: "firstname")
            #expect(try ada.value(forKey: "firstname") == nil)
            #expect(try fixture.disagreements() == [])
            let fresh = try fixture.freshContext()
            #expect(try fresh.object("person", primaryKey: 1)?.value(forKey: "surname") as? String == "King")
        }
    }

    @Test func oneToManyInsertAndRemoveUpdateTheForeignKey() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let adasEmails = try ada.objects(forKey: "email")
            let gracesEmails = try grace.objects(forKey: "email")
            let work = try #require(try context.object("email", primaryKey: 2))

            // Moving an email to Grace takes it out of Ada's set.
            let insert = try fixture.sql { try gracesEmails.insert(work) }
            #expect(insert == [#"UPDATE \#(s)."email" SET "person_id" = $1 WHERE "id" = $2 RETURNING "id", "address", "person_id""#])
            #expect(gracesEmails.contains(work) && gracesEmails.count == 2)
            #expect(!adasEmails.contains(work) && adasEmails.count == 1)
            #expect(try work.object(forKey: "person") === grace)
            #expect(try fixture.disagreements() == [])

            // A removal says in its SQL which parent memory believes the email has.
            let remove = try fixture.sql { try gracesEmails.remove(work) }
            #expect(remove == [#"UPDATE \#(s)."email" SET "person_id" = $1 WHERE "id" = $2 AND "person_id" = $3 RETURNING "id", "address", "person_id""#])
            #expect(!gracesEmails.contains(work))
            #expect(try work.value(forKey: "person_id") == nil)
            #expect(try work.object(forKey: "person") == nil)
            // Removing a non-member changes nothing and sends nothing.
            #expect(try fixture.sql { try gracesEmails.remove(work) }.isEmpty)

            // The same through the to-one side.
            try work.setValue(ada, forKey: "person")
            #expect(adasEmails.contains(work))
            try work.setValue(grace, forKey: "person")
            #expect(!adasEmails.contains(work) && gracesEmails.contains(work))
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func replacingACollectionWritesOnlyTheDifferenceInOneRoundTrip() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let home = try #require(try context.object("email", primaryKey: 1))
            let graces = try #require(try context.object("email", primaryKey: 3))
            let s = "\"\(fixture.schema)\""
            let before = context.connection.roundTrips
            let sql = try fixture.sql { try ada.setValue([home, graces], forKey: "email") }
            #expect(context.connection.roundTrips - before == 1)
            // What leaves is what the database holds beyond the members; what arrives, one statement.
            #expect(sql == [
                #"UPDATE \#(s)."email" SET "person_id" = NULL WHERE "person_id" = $1 AND NOT ("id" = ANY($2)) RETURNING "id", "address", "person_id""#,
                #"UPDATE \#(s)."email" SET "person_id" = $1 WHERE "id" = ANY($2) AND ("person_id") IS DISTINCT FROM ($1) RETURNING "id", "address", "person_id""#,
            ])
            #expect(Set(emails.allObjects.map(ObjectIdentifier.init)) == Set([home, graces].map(ObjectIdentifier.init)))
            #expect(try context.object("person", primaryKey: 2)?.objects(forKey: "email").count == 0)
            try ada.setValue(nil, forKey: "email")
            #expect(emails.isEmpty)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func manyToManyInsertAndRemoveWriteTheHelper() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let ada = try #require(try context.object("person", primaryKey: 1))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let doctors = try doctor.objects(forKey: "person")
            let titles = try ada.objects(forKey: "title")
            let rows = try ada.objects(forKey: "person_title_rel")

            let insert = try fixture.sql { try titles.insert(doctor) }
            let insertSQL = #"INSERT INTO \#(s)."person_title_rel" ("person_id", "title_id") VALUES ($1, $2) "#
                + #"ON CONFLICT ("person_id", "title_id") DO NOTHING RETURNING "person_id", "title_id""#
            #expect(insert == [insertSQL])
            #expect(titles.contains(doctor) && titles.count(for: doctor) == 1)
            // The other side follows, and so do the helper's own rows.
            #expect(doctors.contains(ada))
            #expect(rows.count == 2)
            // A keyed helper holds a pair once: inserting again leaves it as it is, in memory
            // and in the database (which is asked, not memory: another client may have
            // removed the pair).
            #expect(try fixture.sql { try titles.insert(doctor) } == [insertSQL])
            #expect(titles.count(for: doctor) == 1 && rows.count == 2)
            #expect(try fixture.disagreements() == [])

            let remove = try fixture.sql { try titles.remove(doctor) }
            #expect(remove == [#"DELETE FROM \#(s)."person_title_rel" WHERE "person_id" = $1 AND "title_id" = $2 RETURNING "person_id", "title_id""#])
            #expect(!titles.contains(doctor) && !doctors.contains(ada) && rows.count == 1)
            #expect(try fixture.disagreements() == [])

            // Replace: only the difference, in one round trip.
            let countess = try #require(try context.object("title", primaryKey: 1))
            let admiral = try #require(try context.object("title", primaryKey: 2))
            let before = context.connection.roundTrips
            let replace = try fixture.sql { try ada.setValue([admiral, doctor], forKey: "title") }
            #expect(context.connection.roundTrips - before == 1)
            // Countess out (whatever the database holds beyond the members), admiral and
            // doctor in unless there already (whatever memory believes), by one statement
            // with an array a column.
            #expect(replace == [
                #"DELETE FROM \#(s)."person_title_rel" WHERE "person_id" = $1 AND NOT ("title_id" = ANY($2)) RETURNING "person_id", "title_id""#,
                #"INSERT INTO \#(s)."person_title_rel" ("person_id", "title_id") SELECT $1, v."title_id" FROM (SELECT unnest($2) AS "title_id") AS v "#
                    + #"WHERE NOT EXISTS (SELECT 1 FROM \#(s)."person_title_rel" h WHERE h."person_id" = $3 AND h."title_id" = v."title_id") "#
                    + #"RETURNING "person_id", "title_id""#,
            ])
            #expect(titles.count == 2 && !titles.contains(countess))
            try titles.removeAll()
            #expect(titles.isEmpty && !doctors.contains(ada))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// With no loaded set showing the helper's own rows, an insert asks nothing back; a
    /// set loaded afterwards shows the new row all the same.
    @Test func manyToManyInsertsReturnNothingUnlessTheHelperRowsAreShown() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let ada = try #require(try context.object("person", primaryKey: 1))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let titles = try ada.objects(forKey: "title")
            let insert = try fixture.sql { try titles.insert(doctor) }
            #expect(insert == [
                #"INSERT INTO \#(s)."person_title_rel" ("person_id", "title_id") VALUES ($1, $2) ON CONFLICT ("person_id", "title_id") DO NOTHING"#
            ])
            let admiral = try #require(try context.object("title", primaryKey: 2))
            let replace = try fixture.sql { try ada.setValue([admiral, doctor], forKey: "title") }
            #expect(replace.contains { $0.hasPrefix(#"INSERT INTO \#(s)."person_title_rel""#) && !$0.contains("RETURNING") })
            #expect(try ada.objects(forKey: "person_title_rel").count == 2)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func anUnkeyedHelperCountsAPairTwice() throws {
        let data = """
            INSERT INTO item (name) VALUES ('lamp');
            INSERT INTO tag (label) VALUES ('red');
            """
        try ObjectFixture.with("hard_cases", manyToMany: .anyTwoForeignKeys, extraSQL: data) { fixture in
            let context = fixture.context
            let lamp = try #require(try context.object("item", primaryKey: 1))
            let red = try #require(try context.object("tag", primaryKey: 1))
            let tags = try lamp.objects(forKey: "tag")
            let items = try red.objects(forKey: "item")
            try tags.insert(red)
            try tags.insert(red)
            #expect(tags.count == 1)
            #expect(tags.count(for: red) == 2)
            #expect(items.count(for: lamp) == 2)
            #expect(try context.connection.query("SELECT count(*) FROM tag_link")[0].decode(Int.self, at: 0) == 2)
            // Removing deletes one helper row of the two.
            let remove = try fixture.sql { try tags.remove(red) }
            #expect(remove.count == 1 && remove[0].contains("(tableoid, ctid) = (SELECT tableoid, ctid FROM"))
            #expect(tags.count(for: red) == 1 && items.count(for: lamp) == 1)
            #expect(try context.connection.query("SELECT count(*) FROM tag_link")[0].decode(Int.self, at: 0) == 1)
            // Replacing with the pair three times adds two rows, by one statement.
            let threeTimes = try fixture.sql { try lamp.setValue([red, red, red], forKey: "tag") }
            #expect(threeTimes.filter { $0.hasPrefix("INSERT") }.count == 1)
            #expect(threeTimes.contains { $0.contains("SELECT $1, v.\"tag_id\" FROM (SELECT unnest($2)") })
            #expect(tags.count(for: red) == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A replace of a many-to-many set nobody loaded reads nothing first: one round trip
    /// deletes what leaves (answered, so that loaded sets of the other side follow) and
    /// inserts what is not there yet; the set then holds the members given.
    @Test func replacingAnUnloadedManyToManyReadsNothingFirst() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let grace = try #require(try context.object("person", primaryKey: 2))
            let countess = try #require(try context.object("title", primaryKey: 1))
            let admiral = try #require(try context.object("title", primaryKey: 2))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let admirals = try admiral.objects(forKey: "person")
            let countesses = try countess.objects(forKey: "person")
            #expect(admirals.contains(grace))

            // Grace holds admiral and doctor; she is to hold countess and doctor.
            let before = context.connection.roundTrips
            let replace = try fixture.sql { try grace.setValue([countess, doctor], forKey: "title") }
            #expect(context.connection.roundTrips - before == 1)
            #expect(replace == [
                #"DELETE FROM \#(s)."person_title_rel" WHERE "person_id" = $1 AND NOT ("title_id" = ANY($2)) RETURNING "person_id", "title_id""#,
                #"INSERT INTO \#(s)."person_title_rel" ("person_id", "title_id") SELECT $1, v."title_id" FROM (SELECT unnest($2) AS "title_id") AS v "#
                    + #"WHERE NOT EXISTS (SELECT 1 FROM \#(s)."person_title_rel" h WHERE h."person_id" = $3 AND h."title_id" = v."title_id")"#,
            ])
            let titles = try grace.objects(forKey: "title")
            #expect(Set(titles.allObjects.map(ObjectIdentifier.init)) == [ObjectIdentifier(countess), ObjectIdentifier(doctor)])
            #expect(!admirals.contains(grace) && countesses.contains(grace))
            #expect(try fixture.disagreements() == [])

            // Emptied, again without a read.
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emptied = try fixture.sql { try ada.setValue(nil, forKey: "title") }
            #expect(emptied.count == 1 && emptied[0].hasPrefix("DELETE"))
            #expect(try ada.objects(forKey: "title").isEmpty && !countesses.contains(ada))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A loaded set that is stale — another client added one pair and removed another —
    /// is replaced all the same: the database is told the whole membership, so the replace
    /// neither fails on the pair already there nor leaves out the one memory still shows.
    @Test func replacingAStaleManyToManySetFollowsTheDatabase() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let countess = try #require(try context.object("title", primaryKey: 1))
            let admiral = try #require(try context.object("title", primaryKey: 2))
            let titles = try grace.objects(forKey: "title")
            #expect(titles.count == 2)
            // Behind memory's back: Grace gains the countess and loses the admiral.
            let other = try TestDatabase.connect()
            try other.execute("INSERT INTO \(fixture.schema).person_title_rel VALUES (2, 1)")
            try other.execute("DELETE FROM \(fixture.schema).person_title_rel WHERE person_id = 2 AND title_id = 2")
            try grace.setValue([countess, admiral], forKey: "title")
            #expect(titles.count == 2 && titles.contains(countess) && titles.contains(admiral))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Many pairs go into the helper by one statement with an array a column when the
    /// keys' values have an array type that goes into the column as it is (text into
    /// varchar here); an enum key goes one `INSERT` a pair, as text would not go into it.
    @Test func manyToManyInsertsGoAsOneStatementWhereTheKeyTypesAllow() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(ObjectFixture.shelves)
            let fixture = ObjectFixture(context: try DatabaseContext(connection: connection, schemas: [schema]), schema: schema)
            let context = fixture.context
            let shelf = try #require(try context.object("shelf", primaryKey: "A1"))
            let books = try context.fetch("book")
            let paints = try context.fetch("paint")
            let s = "\"\(schema)\""
            _ = try shelf.objects(forKey: "book")

            let shelveBooks = try fixture.sql { try shelf.setValue(books, forKey: "book") }
            #expect(shelveBooks == [
                #"DELETE FROM \#(s)."shelf_book" WHERE "shelf_code" = $1 AND NOT ("book_isbn" = ANY($2)) RETURNING "shelf_code", "book_isbn""#,
                #"INSERT INTO \#(s)."shelf_book" ("shelf_code", "book_isbn") SELECT $1, v."book_isbn" FROM (SELECT unnest($2) AS "book_isbn") AS v "#
                    + #"WHERE NOT EXISTS (SELECT 1 FROM \#(s)."shelf_book" h WHERE h."shelf_code" = $3 AND h."book_isbn" = v."book_isbn")"#,
            ])
            #expect(try shelf.objects(forKey: "book").count == 3)

            let paintShelf = try fixture.sql { try shelf.setValue(paints, forKey: "paint") }
            #expect(paintShelf.filter { $0.hasPrefix("INSERT") }.count == 3)
            #expect(try shelf.objects(forKey: "paint").count == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aOneToOneSteals() throws {
        let data = """
            INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper');
            INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1), ('grace@example.com', 2);
            """
        try ObjectFixture.with("seed_person_email_one_to_one", extraSQL: data) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let adas = try #require(try ada.object(forKey: "email"))
            let graces = try #require(try context.object("email", primaryKey: 2))
            try graces.setValue(ada, forKey: "person")
            #expect(try ada.object(forKey: "email") === graces)
            #expect(try adas.value(forKey: "person_id") == nil)
            #expect(try adas.object(forKey: "person") == nil)
            // From the other side: Ada takes her first address back.
            try ada.setValue(adas, forKey: "email")
            #expect(try ada.object(forKey: "email") === adas)
            #expect(try graces.object(forKey: "person") == nil)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func insertReturnsTheRowAsStored() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            var email: DatabaseObject?
            let sql = try fixture.sql { email = try context.insert("email", values: ["address": "new@example.com", "person": ada]) }
            #expect(sql == [#"INSERT INTO "\#(fixture.schema)"."email" ("address", "person_id") VALUES ($1, $2) RETURNING "id", "address", "person_id""#])
            #expect(try email?.value(forKey: "id") as? Int == 4)  // from the sequence
            #expect(emails.contains(email!))
            let empty = try context.insert("person")
            #expect(try empty.value(forKey: "id") as? Int == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func helperColumnsWithoutDefaultsTakeValues() throws {
        let schema = """
            CREATE TABLE club (id serial PRIMARY KEY, name text);
            CREATE TABLE member (id serial PRIMARY KEY, name text);
            CREATE TABLE membership (member_id int REFERENCES member, club_id int REFERENCES club,
                                     role text NOT NULL, since date DEFAULT current_date, PRIMARY KEY (member_id, club_id));
            INSERT INTO club (name) VALUES ('chess');
            INSERT INTO member (name) VALUES ('Ada');
            """
        try ObjectFixture.with("seed_person_email", extraSQL: schema) { fixture in
            let chess = try #require(try fixture.context.object("club", primaryKey: 1))
            let ada = try #require(try fixture.context.object("member", primaryKey: 1))
            let members = try chess.objects(forKey: "member")
            let error = #expect(throws: RelateError.self) { try members.insert(ada) }
            #expect(error?.kind == .invalidWrite)
            #expect(error?.message.contains("\"role\"") == true)
            #expect(!members.contains(ada))
            try members.insert(ada, helperValues: ["role": "captain"])
            #expect(members.contains(ada))
            #expect(try ada.objects(forKey: "membership").allObjects.first?.value(forKey: "role") as? String == "captain")
            #expect(try fixture.disagreements() == [])
        }
    }
}
