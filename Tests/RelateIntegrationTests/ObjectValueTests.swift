import Foundation
import Testing

@testable import Relate

/// Attribute values as objects hold them: every mapped type through `value(forKey:)` and
/// the typed `value(forKey:as:)`, and the identity map's bookkeeping under many objects.
@Suite struct ObjectValueTests {
    static let everyType = """
        CREATE TYPE mood AS ENUM ('calm', 'busy');
        CREATE TABLE sample (
            id int4 PRIMARY KEY, small int2, big int8, real4 float4, real8 float8, amount numeric,
            flag bool, label text, code varchar(8), initial char(1), born date, seen timestamptz,
            ref uuid, blob bytea, doc jsonb, tags text[], scores int4[], address inet, feeling mood);
        INSERT INTO sample VALUES
            (1, -2, 9000000000, 1.5, 2.25, 12345.678, true, 'Ada', 'AL', 'A', '1815-12-10',
             '2026-11-22 10:00:00+00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff', '{"a": 1}',
             '{x,y}', '{1,NULL,3}', '10.0.0.1', 'calm'),
            (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             NULL, NULL, NULL, NULL);
        """

    static func withSamples(_ body: (DatabaseContext) throws -> Void) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(everyType)
            try body(try DatabaseContext(connection: connection, schemas: [schema]))
        }
    }

    @Test func everyTypeReadsAsDesignMapsIt() throws {
        try Self.withSamples { context in
            let row = try #require(try context.object("sample", primaryKey: 1))
            #expect(try row.value(forKey: "small") as? Int == -2)
            #expect(try row.value(forKey: "big") as? Int == 9_000_000_000)
            #expect(try row.value(forKey: "real4") as? Float == 1.5)
            #expect(try row.value(forKey: "real8") as? Double == 2.25)
            #expect(try row.value(forKey: "amount") as? Decimal == Decimal(string: "12345.678"))
            #expect(try row.value(forKey: "flag") as? Bool == true)
            #expect(try row.value(forKey: "label") as? String == "Ada")
            #expect(try row.value(forKey: "code") as? String == "AL")
            #expect(try row.value(forKey: "initial") as? String == "A")
            #expect(try row.value(forKey: "born") as? Date == ISO8601DateFormatter().date(from: "1815-12-10T00:00:00Z"))
            #expect(try row.value(forKey: "seen") as? Date == ISO8601DateFormatter().date(from: "2026-11-22T10:00:00Z"))
            #expect(try row.value(forKey: "ref") as? UUID == UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))
            #expect(try row.value(forKey: "blob") as? Data == Data([0, 255]))
            #expect(try row.value(forKey: "doc") as? JSONValue == ["a": 1])
            #expect(try row.value(forKey: "tags") as? [String] == ["x", "y"])
            #expect(try row.value(forKey: "scores") as? [Int?] == [1, nil, 3])
            #expect(try row.value(forKey: "address") as? PostgresInet == (try PostgresInet("10.0.0.1")))
            #expect(try row.value(forKey: "feeling") as? String == "calm")
            #expect(row.primaryKey.map { $0 as? Int } == [1])

            let empty = try #require(try context.object("sample", primaryKey: 2))
            for attribute in empty.entity.attributes where attribute.name != "id" {
                #expect(try empty.value(forKey: attribute.key) == nil, "\(attribute.name)")
                #expect(try empty.value(forKey: attribute.key, as: Any.self) == nil, "\(attribute.name)")
            }
        }
    }

    @Test func typedReadsAnswerTheMappedTypeAndRefuseOthers() throws {
        try Self.withSamples { context in
            let row = try #require(try context.object("sample", primaryKey: 1))
            #expect(try row.value(forKey: "id", as: Int.self) == 1)
            #expect(try row.value(forKey: "label", as: String.self) == "Ada")
            #expect(try row.value(forKey: "real4", as: Float.self) == 1.5)
            #expect(try row.value(forKey: "amount", as: Decimal.self) == Decimal(string: "12345.678"))
            #expect(try row.value(forKey: "ref", as: UUID.self) == UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))
            #expect(try row.value(forKey: "tags", as: [String].self) == ["x", "y"])
            #expect(try row.value(forKey: "flag", as: (any Equatable).self) as? Bool == true)
            let empty = try #require(try context.object("sample", primaryKey: 2))
            #expect(try empty.value(forKey: "label", as: String.self) == nil)

            let mismatch = #expect(throws: RelateError.self) { try row.value(forKey: "label", as: Int.self) }
            #expect(mismatch?.kind == .typeMismatch)
            #expect(mismatch?.message == #"key "label" of "sample" is column "label" of type text, read as String, not as Int"#)
            // float4 is Float, not Double: the mapping is exact.
            #expect(throws: RelateError.self) { try row.value(forKey: "real4", as: Double.self) }
            let unknown = #expect(throws: RelateError.self) { try row.value(forKey: "lable", as: String.self) }
            #expect(unknown?.kind == .unknownKey && unknown?.candidates.contains("label") == true)
        }
    }

    /// Values of types of their own (JSON, an array, an address) read in attribute order take
    /// the inlined path, which casts the boxed value where `Value` is known: as their types,
    /// as `Any` and as an optional; another type is refused naming the column, as off it.
    @Test func boxedValuesReadInOrderAnswerTheirTypesAndRefuseOthers() throws {
        try Self.withSamples { context in
            let row = try #require(try context.object("sample", primaryKey: 1))
            for _ in 0..<2 {
                let keys = row.entity.attributes.map(\.key)
                for key in keys.prefix(while: { $0 != "doc" }) { _ = try row.value(forKey: key, as: Any.self) }
                #expect(try row.value(forKey: "doc", as: JSONValue.self) == ["a": 1])
                #expect(try row.value(forKey: "tags", as: [String]?.self) == .some(["x", "y"]))
                #expect(try row.value(forKey: "scores", as: Any.self) as? [Int?] == [1, nil, 3])
                #expect(try row.value(forKey: "address", as: PostgresInet.self) == (try PostgresInet("10.0.0.1")))
            }
            for key in row.entity.attributes.map(\.key).prefix(while: { $0 != "doc" }) { _ = try row.value(forKey: key, as: Any.self) }
            let mismatch = #expect(throws: RelateError.self) { try row.value(forKey: "doc", as: String.self) }
            #expect(mismatch?.kind == .typeMismatch && mismatch?.message.contains(#"column "doc" of type jsonb"#) == true, "\(mismatch?.message ?? "")")
        }
    }

    @Test func typedReadsOfRelationshipKeys() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let email = try #require(try context.object("email", primaryKey: 1))
            #expect(try email.value(forKey: "person", as: DatabaseObject.self) === ada)
            #expect(try ada.value(forKey: "email", as: RelationshipSet.self)?.count == 2)
            let wrong = #expect(throws: RelateError.self) { try ada.value(forKey: "email", as: DatabaseObject.self) }
            #expect(wrong?.message == #"key "email" of "person" is a relationship, read as RelationshipSet, not as DatabaseObject"#)
            try context.delete(email)
            let deleted = #expect(throws: RelateError.self) { try email.value(forKey: "address", as: String.self) }
            #expect(deleted?.kind == .invalidObject)
            // Read in attribute order, each key is the one the inlined paths expect next:
            // they must refuse a deleted object too.
            let keys = email.entity.attributes.map(\.key)
            for key in keys + keys {
                #expect(throws: RelateError.self) { try email.value(forKey: key, as: Any.self) }
            }
            for key in keys + keys {
                #expect(throws: RelateError.self) { try email.value(forKey: key) }
            }
        }
    }

    /// A fetch into an empty map registers its objects without looking them up; lookups
    /// afterwards still find them, in memory.
    @Test func objectsRegisteredWithoutLookupsAreFoundByKey() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let people = try context.fetch("person", orderBy: "id")
            let trips = context.connection.roundTrips
            #expect(try context.object("person", primaryKey: 2) === people[1])
            #expect(context.connection.roundTrips == trips)
            #expect(try context.fetch("person", orderBy: "id").map(ObjectIdentifier.init) == people.map(ObjectIdentifier.init))
            context.reset()
            let again = try context.fetch("person", orderBy: "id")
            #expect(again[0] !== people[0])
            #expect(try context.object("person", primaryKey: 1) === again[0])
        }
    }

    /// A cell that cannot be read (an array holding numeric infinity, which has no
    /// `Decimal`) fails the whole fetch with an error naming the column, and registers nothing.
    @Test func aCellThatCannotBeReadFailsTheFetchCleanly() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE price (id int4 PRIMARY KEY, amount numeric, history numeric[]);
                INSERT INTO price VALUES (1, 1.5, '{1}'), (2, 3, '{1,Infinity}'), (3, 2.5, '{2}');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let error = #expect(throws: RelateError.self) { try context.fetch("price", orderBy: "id") }
            #expect(error?.postgresError?.column == "history")
            #expect(error?.message.contains("does not fit in Decimal") == true)
            #expect(context.graph.registries.allSatisfy { $0.isEmpty })
            let finite = try context.fetch("price", where: "amount < $1", [Decimal(2.6)], orderBy: "id")
            #expect(finite.count == 2)
            #expect(try context.object("price", primaryKey: 3) === finite[1])
        }
    }

    /// A roll-back never leaves two live objects for one row: objects a rolled-back
    /// transaction fetched stay the one instance for their row (read again after the
    /// roll-back), and one it inserted is marked deleted.
    @Test func aRolledBackTransactionKeepsOneObjectPerRow() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            struct Stop: Error {}
            var inside: [DatabaseObject] = []
            var inserted: DatabaseObject?
            #expect(throws: Stop.self) {
                try context.transaction {
                    inside = try context.fetch("person", orderBy: "id")
                    try inside[0].setValue("King", forKey: "surname")
                    inserted = try context.insert("person", values: ["firstname": "Mary"])
                    throw Stop()
                }
            }
            let after = try context.fetch("person", orderBy: "id")
            #expect(after.count == 2 && after[0] === inside[0] && after[1] === inside[1])
            #expect(try inside[0].value(forKey: "surname", as: String.self) == "Lovelace")
            let rolledBack = try #require(inserted)
            #expect(rolledBack.isDeleted)
            let error = #expect(throws: RelateError.self) { try rolledBack.value(forKey: "firstname") }
            #expect(error?.kind == .invalidObject)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Deleting most objects compacts the map; the others are still found without a query.
    @Test func manyDeletesKeepTheOthersFindable() throws {
        let people = "INSERT INTO person (firstname, surname) SELECT 'P' || g, 'S' || g FROM generate_series(1, 150) AS g;"
        try ObjectFixture.with("seed_person_email", extraSQL: people) { fixture in
            let context = fixture.context
            let all = try context.fetch("person", orderBy: "id")
            for person in all.prefix(120) { try context.delete(person) }
            let trips = context.connection.roundTrips
            for person in all.suffix(30) {
                #expect(try context.object("person", primaryKey: try #require(person.primaryKey[0] as? Int)) === person)
            }
            #expect(context.connection.roundTrips == trips)
            #expect(try context.object("person", primaryKey: 1) == nil)
            #expect(context.graph.registries[try context.entityIndex(named: "person")].all.count == 30)
            #expect(try fixture.disagreements() == [])
        }
    }
}

/// Objects tied together by loaded relationships (a person's emails, each email's person)
/// are freed once the context forgets them.
@Suite struct ObjectLifetimeTests {
    @Test func resetFreesObjectsWithLoadedRelationships() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            weak var person: DatabaseObject?
            weak var email: DatabaseObject?
            weak var set: RelationshipSet?
            do {
                let ada = try #require(try context.object("person", primaryKey: 1))
                let emails = try ada.objects(forKey: "email")
                let first = try #require(emails.allObjects.first)
                #expect(try first.object(forKey: "person") === ada)
                (person, email, set) = (ada, first, emails)
            }
            #expect(person != nil && email != nil && set != nil)
            context.reset()
            #expect(person == nil && email == nil && set == nil)
        }
    }

    /// An object the identity map no longer holds (fetched before a reset) that loads a
    /// relationship afterwards is freed by the next reset too.
    @Test func anObjectFromBeforeAResetIsFreedByTheNext() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            weak var person: DatabaseObject?
            do {
                let ada = try #require(try context.fetch("person", orderBy: "id").first)
                context.reset()
                let emails = try ada.objects(forKey: "email")
                #expect(try emails.allObjects.first?.object(forKey: "person") !== ada)
                person = ada
            }
            context.reset()
            #expect(person == nil)
        }
    }

    @Test func aDeletedObjectLetsGoOfItsRelationships() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            weak var person: DatabaseObject?
            do {
                let ada = try #require(try context.object("person", primaryKey: 1))
                let titles = try ada.objects(forKey: "title")
                #expect(titles.count == 1)
                try titles.removeAll()
                try context.delete(ada)
                person = ada
            }
            #expect(person == nil)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A set of more than a handful of members looks them up by identity; removing and
    /// adding keep that lookup right.
    @Test func aLargeSetFindsItsMembers() throws {
        let data = """
            INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper');
            INSERT INTO email (address, person_id) SELECT 'a' || g || '@example.com', 1 FROM generate_series(1, 40) AS g;
            """
        try ObjectFixture.with("seed_person_email", extraSQL: data) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let emails = try ada.objects(forKey: "email")
            let graces = try grace.objects(forKey: "email")
            let all = emails.allObjects
            #expect(all.count == 40 && all.allSatisfy { emails.contains($0) && emails.count(for: $0) == 1 })
            try graces.insert(all[20])
            #expect(!emails.contains(all[20]) && emails.count == 39 && graces.contains(all[20]))
            try emails.insert(all[20])
            #expect(emails.contains(all[20]) && emails.count(for: all[20]) == 1 && graces.isEmpty)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aSetHandedOutKeepsWorkingAfterItsOwnerIsDropped() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let titles = try #require(try context.object("person", primaryKey: 2)).objects(forKey: "title")
            let countess = try #require(try context.object("title", primaryKey: 1))
            try titles.insert(countess)
            #expect(titles.count == 3 && titles.contains(countess))
            #expect(try fixture.disagreements() == [])
        }
    }
}
