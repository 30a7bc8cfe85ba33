import Foundation
import Testing

@testable import Relate

/// What generated code calls for a PostgreSQL enum column, against the server: labels in
/// the model, reads as the generated enum, conditions and writes through its raw value.
@Suite struct TypedEnumTests {
    /// As `relate generate` writes it for `mood`.
    enum Mood: String, TypedEnum, CaseIterable {
        case happy
        case sad
        case soSo = "so-so"
    }

    static let schema = """
        CREATE TYPE mood AS ENUM ('happy', 'sad', 'so-so');
        CREATE DOMAIN gentle_mood AS mood;
        CREATE TABLE diary (id serial PRIMARY KEY, feeling mood, usual gentle_mood, note text);
        INSERT INTO diary (feeling, usual) VALUES ('happy', 'sad'), ('so-so', NULL), (NULL, NULL);
        """

    @Test func labelsReadsConditionsAndWrites() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let diary = try context.model.entity("diary")
            #expect(diary.attribute(column: "feeling")?.enumLabels == ["happy", "sad", "so-so"])
            #expect(diary.attribute(column: "usual")?.enumLabels == ["happy", "sad", "so-so"])
            #expect(diary.attribute(column: "note")?.enumLabels == nil)
            let json = try JSONDecoder().decode(ModelDescription.self, from: Data(context.model.jsonDescription().utf8))
            #expect(json.entities.first?.attributes.first { $0.name == "feeling" }?.enumLabels == ["happy", "sad", "so-so"])

            let first = try #require(try context.object("diary", primaryKey: 1))
            #expect(try first.generatedOptionalEnum(at: 1, as: Mood.self) == .happy)
            #expect(try first.generatedEnum(at: 2, as: Mood.self) == .sad)
            let third = try #require(try context.object("diary", primaryKey: 3))
            #expect(try third.generatedOptionalEnum(at: 1, as: Mood.self) == nil)
            #expect(throws: RelateError.self) { try third.generatedEnum(at: 1, as: Mood.self) }

            let feeling = AttributeColumn<Mood?>("feeling")
            #expect(try context.count(FetchRequest("diary", where: feeling == .soSo)) == 1)
            #expect(try context.count(FetchRequest("diary", where: feeling == nil)) == 1)
            #expect(try context.count(FetchRequest("diary", where: feeling.in([.happy, .soSo]))) == 2)

            // update {}: the change goes as the label.
            try third.writeTypedChanges([TypedChange(index: 1, value: Mood?.some(.soSo))])
            #expect(try third.generatedOptionalEnum(at: 1, as: Mood.self) == .soSo)
            // insert: a draft keeps the label.
            var assignments = TypedAssignments()
            assignments.set(Mood.sad.rawValue, forKey: "feeling", nullable: true)
            let inserted = try context.insert("diary", values: assignments.values)
            #expect(try inserted.generatedOptionalEnum(at: 1, as: Mood.self) == .sad)

            // A label added after generation is an error naming the label and the types, not a wrong value.
            try connection.execute("ALTER TYPE mood ADD VALUE 'wistful'")
            try connection.execute("UPDATE diary SET feeling = 'wistful' WHERE id = 2")
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            let second = try #require(try fresh.object("diary", primaryKey: 2))
            let error = #expect(throws: RelateError.self) { try second.generatedOptionalEnum(at: 1, as: Mood.self) }
            #expect(error?.kind == .typeMismatch)
            #expect(error?.message.contains("column \"feeling\"") == true)
            #expect(error?.message.contains("label \"wistful\" of enum mood") == true)
            #expect(error?.message.contains("Mood lacks") == true)
            // Dynamically the label is a String, whatever the generated enum knows.
            #expect(try second.value(forKey: "feeling") as? String == "wistful")
            // The drift check, on a generated type's first use, names the new label.
            let labels = ["happy", "sad", "so-so"]
            let typed = TypedEntity(
                name: "diary",
                attributes: [
                    TypedAttribute(name: "id", type: "int4", nullable: false),
                    TypedAttribute(name: "feeling", type: "mood", nullable: true, enumLabels: labels),
                    TypedAttribute(name: "usual", type: "gentle_mood", nullable: true, enumLabels: labels),
                    TypedAttribute(name: "note", type: "text", nullable: true),
                ], relationships: [], fingerprint: "labels")
            let drift = #expect(throws: RelateError.self) { try fresh.check(typed) }
            #expect(drift?.kind == .schemaChanged)
            #expect(drift?.message.contains(#"the enum type mood of column "feeling" of table "\#(schema).diary" now has label "wistful""#) == true)
        }
    }

    /// An array of an enum reads as `[String]` dynamically and as `[Mood]` through generated
    /// code; writes and conditions take the cases.
    @Test func arraysOfAnEnum() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TYPE mood AS ENUM ('happy', 'sad', 'so-so');
                CREATE TABLE week (id serial PRIMARY KEY, moods mood[], fixed mood[] NOT NULL DEFAULT '{}');
                INSERT INTO week (moods, fixed) VALUES ('{happy,so-so}', '{sad}'), (NULL, '{}');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let week = try context.model.entity("week")
            #expect(week.attribute(column: "moods")?.enumLabels == ["happy", "sad", "so-so"])
            #expect(week.attribute(column: "moods")?.type == "mood[]")
            let first = try #require(try context.object("week", primaryKey: 1))
            #expect(try first.value(forKey: "moods") as? [String] == ["happy", "so-so"])
            #expect(try first.generatedOptionalEnumArray(at: 1, as: Mood.self) == [.happy, .soSo])
            #expect(try first.generatedEnumArray(at: 2, as: Mood.self) == [.sad])
            let second = try #require(try context.object("week", primaryKey: 2))
            #expect(try second.generatedOptionalEnumArray(at: 1, as: Mood.self) == nil)
            #expect(try second.generatedEnumArray(at: 2, as: Mood.self) == [])

            try second.writeTypedChanges([TypedChange(index: 1, value: [Mood]?.some([.sad, .soSo]))])
            #expect(try second.generatedOptionalEnumArray(at: 1, as: Mood.self) == [.sad, .soSo])
            try second.setValue(["happy"], forKey: "fixed")
            let server = try connection.query("SELECT moods::text, fixed::text FROM week WHERE id = 2")[0]
            #expect(try server.decode(String.self, at: 0) == "{sad,so-so}")
            #expect(try server.decode(String.self, at: 1) == "{happy}")
            let moods = AttributeColumn<[Mood]?>("moods")
            #expect(try context.count(FetchRequest("week", where: moods == [.sad, .soSo])) == 1)

            try connection.execute("ALTER TYPE mood ADD VALUE 'wistful'")
            try connection.execute("UPDATE week SET moods = '{happy,wistful}' WHERE id = 1")
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            let changed = try #require(try fresh.object("week", primaryKey: 1))
            let error = #expect(throws: RelateError.self) { try changed.generatedOptionalEnumArray(at: 1, as: Mood.self) }
            #expect(error?.kind == .typeMismatch)
            #expect(error?.message.contains("label \"wistful\" of enum mood") == true)
        }
    }
}
