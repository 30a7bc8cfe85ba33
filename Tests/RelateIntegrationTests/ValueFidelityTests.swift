import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Values are stored and read exactly, or refused with an error naming the column: never
/// rounded, never sent as NULL.
@Suite struct ValueFidelityTests {
    static let measures = """
        CREATE TABLE measure (id int PRIMARY KEY, big int8, amount numeric, small int2);
        INSERT INTO measure VALUES (1, 0, 0, 0);
        """

    @Test func largeDecimalsGoIntoIntegerColumnsExactlyOrNotAtAll() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.measures) { fixture in
            let measure = try #require(try fixture.context.object("measure", primaryKey: 1))
            // 2^53 + 1: a Double cannot hold it, so a conversion through Double rounds it.
            try measure.setValue(Decimal(string: "9007199254740993")!, forKey: "big")
            #expect(try measure.value(forKey: "big", as: Int.self) == 9_007_199_254_740_993)
            for refused in [Decimal(string: "1e20")!, Decimal(string: "1.5")!, Decimal.nan] {
                let error = #expect(throws: RelateError.self) { try measure.setValue(refused, forKey: "big") }
                #expect(error?.kind == .typeMismatch && error?.message.contains(#"column "big""#) == true)
            }
            let small = #expect(throws: RelateError.self) { try measure.setValue(Decimal(70_000), forKey: "small") }
            #expect(small?.message.contains("int2") == true)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aNumberDecimalCannotHoldIsRefusedNotSentAsNull() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.measures) { fixture in
            let measure = try #require(try fixture.context.object("measure", primaryKey: 1))
            let sent = fixture.context.connection.roundTrips
            let error = #expect(throws: RelateError.self) { try measure.setValue(1e300, forKey: "amount") }
            #expect(error?.kind == .typeMismatch && error?.message.contains(#"column "amount""#) == true)
            #expect(fixture.context.connection.roundTrips == sent)
            #expect(try measure.value(forKey: "amount", as: Decimal.self) == 0)
            try measure.setValue(0.1, forKey: "amount")
            #expect(try measure.value(forKey: "amount", as: Decimal.self) == Decimal(string: "0.1"))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A numeric `Decimal` cannot hold exactly reads as its text, never rounded: a read of it
    /// as a `Decimal` is an error naming the column, and the text goes back as the same number.
    @Test func aNumericLongerThanDecimalReadsAsItsText() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.measures) { fixture in
            let long = "123456789012345678901234567890123456789012345"
            try fixture.context.connection.execute("UPDATE measure SET amount = \(long) WHERE id = 1")
            let measure = try #require(try fixture.context.fetch("measure").first)
            #expect(try measure.value(forKey: "amount") as? String == long)
            let error = #expect(throws: RelateError.self) { try measure.value(forKey: "amount", as: Decimal.self) }
            #expect(error?.kind == .typeMismatch && error?.message.contains(#"column "amount""#) == true)
            try measure.setValue(try measure.value(forKey: "amount"), forKey: "amount")
            #expect(try fixture.disagreements() == [])
            #expect(try fixture.context.connection.query("SELECT amount::text FROM measure WHERE id = 1")[0].decode(String.self, at: 0) == long)
            // Long values that Decimal holds exactly still read.
            try fixture.context.connection.execute("UPDATE measure SET amount = 1e50 WHERE id = 1")
            #expect(try fixture.context.fetch("measure")[0].value(forKey: "amount", as: Decimal.self) == Decimal(string: "1e50"))
        }
    }

    /// Error descriptions hold no row data (keys, refused values): those are in `detail`.
    @Test func errorDescriptionsHoldNoRowData() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails + Self.measures) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let denied = #expect(throws: RelateError.self) { try context.delete(grace) }
            #expect(denied?.kind == .deleteDenied)
            #expect(denied?.description.contains("id=2") == false)
            #expect(denied?.debugDescription.contains("<person id=2>") == true)
            let measure = try #require(try context.object("measure", primaryKey: 1))
            let range = #expect(throws: RelateError.self) { try measure.setValue(70_123, forKey: "small") }
            #expect(range?.description.contains("70123") == false)
            #expect(range?.detail == "value 70123")
        }
    }

    /// Keys of a type without a typed Swift key list (inet) go as a literal the server reads
    /// as the column's own type: one query for many owners, and the key column's index can serve it.
    @Test func keysOfATypeWithoutASwiftArrayAreComparedAsTheColumnsType() throws {
        let schema = """
            CREATE TABLE host (address inet PRIMARY KEY, name text);
            CREATE TABLE login (id int PRIMARY KEY, host_address inet REFERENCES host);
            INSERT INTO host VALUES ('10.0.0.1', 'a'), ('10.0.0.2', 'b'), ('10.0.0.3', 'c');
            INSERT INTO login VALUES (1, '10.0.0.1'), (2, '10.0.0.1'), (3, '10.0.0.2');
            """
        try ObjectFixture.with("seed_person_email", extraSQL: schema) { fixture in
            let context = fixture.context
            let hosts = try context.fetch("host", orderBy: "address")
            let sql = try fixture.sql { try context.prefetch(["login"], for: hosts) }
            let s = "\"\(fixture.schema)\""
            #expect(sql == [#"SELECT "id", "host_address" FROM \#(s)."login" WHERE "host_address" = ANY($1)"#])
            #expect(try hosts.map { try $0.objects(forKey: "login").count } == [2, 1, 0])
            // With sequential scans off, only a comparison in the column's own type shows the index.
            try context.connection.execute("SET enable_seqscan = off")
            let plan = try context.connection.query(
                "EXPLAIN (FORMAT TEXT) SELECT * FROM \(fixture.schema).host WHERE address = ANY($1)", [#"{"10.0.0.1","10.0.0.2"}"#])
            #expect(try plan.map { try $0.decode(String.self, at: 0) }.joined().contains("host_pkey"))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Text is told apart by its bytes, as the server tells it apart: a composed `é` and a
    /// decomposed one are equal to Swift's `==`, and two keys, or a change, to the server.
    @Test func textIsComparedByItsBytesNotAsSwiftStrings() throws {
        let tags = """
            CREATE TABLE tag (name text PRIMARY KEY, label text);
            INSERT INTO tag VALUES (U&'caf\\00E9', 'composed'), (U&'cafe\\0301', 'decomposed');
            """
        try ObjectFixture.with("seed_person_email", extraSQL: tags) { fixture in
            let context = fixture.context
            let tags = try context.fetch(FetchRequest("tag"))
            // Two rows, two objects, each with its own label (one object for both before).
            #expect(Set(tags.map(ObjectIdentifier.init)).count == 2)
            let labels = try Set(tags.map { try $0.value(forKey: "label") as? String })
            #expect(labels == ["composed", "decomposed"])
            let composed = try #require(try context.object("tag", primaryKey: "caf\u{E9}"))
            #expect(try composed.value(forKey: "label") as? String == "composed")
            // Writing the other form is a change, sent (it was taken for no change at all).
            try composed.setValue("cafe\u{301}", forKey: "label")
            context.autocommits = false
            try composed.setValue("caf\u{E9}", forKey: "label")
            #expect(context.hasChanges)
            try context.save()
            let stored = try context.connection.query("SELECT label FROM \"\(fixture.schema)\".tag ORDER BY name COLLATE \"C\"")
            #expect(try stored.map { Array(try $0.decode(String.self, at: 0).utf8) } == [Array("decomposed".utf8), Array("caf\u{E9}".utf8)])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Rows keyed by arrays that differ only in a composed and a decomposed `é` are two
    /// rows to the server, and two objects: a foreign key to each finds its own (the
    /// array's own `==` made the two keys one, and both found the first).
    @Test func arrayKeysAreToldApartByTheirBytes() throws {
        let shelves = """
            CREATE TABLE shelf (tags text[] PRIMARY KEY, label text NOT NULL);
            CREATE TABLE book (id int PRIMARY KEY, shelf_tags text[] NOT NULL REFERENCES shelf);
            INSERT INTO shelf VALUES (ARRAY[U&'caf\\00E9'], 'composed'), (ARRAY[U&'cafe\\0301'], 'decomposed');
            INSERT INTO book VALUES (1, ARRAY[U&'caf\\00E9']), (2, ARRAY[U&'cafe\\0301']);
            """
        try ObjectFixture.with("seed_person_email", extraSQL: shelves) { fixture in
            let context = fixture.context
            #expect(try Set(context.fetch(FetchRequest("shelf")).map(ObjectIdentifier.init)).count == 2)
            let books = try context.fetch(FetchRequest("book", orderBy: [.ascending("id")]))
            let labels = try books.map { book in try (book.value(forKey: "shelf") as? DatabaseObject)?.value(forKey: "label") as? String }
            #expect(labels == ["composed", "decomposed"])
        }
    }

    /// Arrays and JSON are told apart as the server receives them, not by Swift's `==` on
    /// the texts inside: a save that wrote a decomposed `é` over a composed one in a `text[]`
    /// or a `jsonb` was taken for no change and dropped.
    @Test func arraysAndJSONAreComparedByTheirBytes() throws {
        let documents = """
            CREATE TABLE doc (id int PRIMARY KEY, tags text[] NOT NULL, body jsonb NOT NULL);
            INSERT INTO doc VALUES (1, ARRAY[U&'caf\\00E9'], jsonb_build_object('name', U&'caf\\00E9'));
            """
        try ObjectFixture.with("seed_person_email", extraSQL: documents) { fixture in
            let context = fixture.context
            context.autocommits = false
            let document = try #require(try context.object("doc", primaryKey: 1))
            let decomposed = "cafe\u{301}"
            try document.setValue([decomposed], forKey: "tags")
            try document.setValue(JSONValue.object(["name": .string(decomposed)]), forKey: "body")
            #expect(context.hasChanges)
            try context.save()
            let stored = try context.connection.query("SELECT tags[1], body ->> 'name' FROM \"\(fixture.schema)\".doc")
            #expect(try Array(stored[0].decode(String.self, at: 0).utf8) == Array(decomposed.utf8))
            #expect(try Array(stored[0].decode(String.self, at: 1).utf8) == Array(decomposed.utf8))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A fetch that sees pending changes judges them as the server would judge the saved
    /// rows: text by its bytes, in `contains` and in a document's strings and keys (Swift's
    /// `==` and `contains` found a decomposed `é` in a composed one), and numbers as numbers
    /// (-0 is 0 in a `float8[]`, which their bytes are not).
    @Test func pendingRowsAreJudgedByTheirBytes() throws {
        let documents = """
            CREATE TABLE doc (id int PRIMARY KEY, title text NOT NULL, tags text[] NOT NULL, body jsonb NOT NULL, weights float8[] NOT NULL);
            INSERT INTO doc VALUES (1, 'x', '{}', '{}', '{}');
            """
        try ObjectFixture.with("seed_person_email", extraSQL: documents) { fixture in
            let context = fixture.context
            context.autocommits = false
            let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
            let document = try #require(try context.object("doc", primaryKey: 1))
            try document.setValue("le \(composed)", forKey: "title")
            try document.setValue([composed], forKey: "tags")
            try document.setValue(JSONValue.object([composed: .string(composed)]), forKey: "body")
            try document.setValue([-0.0], forKey: "weights")
            func count(_ condition: Condition) throws -> Int { try context.fetch(FetchRequest("doc", where: condition)).count }
            let conditions: [(Condition, Int)] = [
                (Key("title").contains(composed), 1), (Key("title").contains(decomposed), 0),
                (Key("tags") == [composed], 1), (Key("tags") == [decomposed], 0),
                (Key("body").jsonText(at: composed, equals: composed), 1), (Key("body").jsonText(at: composed, equals: decomposed), 0),
                (Key("body").jsonText(at: decomposed, equals: composed), 0),
                (Key("body").jsonContains([composed: .string(composed)]), 1), (Key("body").jsonContains([composed: .string(decomposed)]), 0),
                (Key("body").jsonContains([decomposed: .string(composed)]), 0),
                // Not by bytes where the server's `=` is not: -0 equals 0 in a float8[].
                (Key("weights") == [0.0], 1), (Key("weights") == [1.0], 0),
            ]
            let pending = try conditions.map { try count($0.0) }
            #expect(pending == conditions.map(\.1))
            // And the server, once saved, answers the same.
            try context.save()
            context.reset()
            #expect(try conditions.map { try count($0.0) } == pending)
        }
    }

    /// A fetch that sees pending changes orders and compares text by the column's collation
    /// (an ICU collation, a case-insensitive one) and enum labels by their order, as the
    /// server does: memory had compared code points, and put a renamed row in the wrong
    /// place or the wrong answer.
    @Test func pendingRowsAreJudgedByTheColumnsCollation() throws {
        let fruit = """
            CREATE COLLATION nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
            CREATE TYPE size AS ENUM ('small', 'large');
            CREATE TABLE fruit (id int PRIMARY KEY, name text COLLATE "en-x-icu" NOT NULL, tag text COLLATE nocase, size size);
            INSERT INTO fruit VALUES (1, 'apple', 'x', 'large'), (2, 'Banana', 'y', 'large');
            """
        try ObjectFixture.with("seed_person_email", extraSQL: fruit) { fixture in
            let context = fixture.context
            context.autocommits = false
            let apple = try #require(try context.object("fruit", primaryKey: 1))
            try apple.setValue("avocado", forKey: "name")
            try apple.setValue("HELLO", forKey: "tag")
            try apple.setValue("small", forKey: "size")
            func names(_ request: FetchRequest) throws -> [String] {
                try context.fetch(request).map { try #require($0.value(forKey: "name") as? String) }
            }
            let requests = [
                FetchRequest("fruit", orderBy: [.ascending("name")]),
                FetchRequest("fruit", where: Key("name") > "B"),
                FetchRequest("fruit", where: Key("tag") == "hello"),
                FetchRequest("fruit", where: Key("size") < "large"),
                FetchRequest("fruit", orderBy: [.descending("size"), .ascending("id")]),
            ]
            let pending = try requests.map(names)
            #expect(pending == [["avocado", "Banana"], ["Banana"], ["avocado"], ["avocado"], ["Banana", "avocado"]])
            try context.save()
            context.reset()
            #expect(try requests.map(names) == pending)
        }
    }
}
