import Foundation
import Testing

@testable import Relate

/// The generated types of `Generated/` against the server: reads, `update`, `insert`,
/// to-one and to-many writes with inverses following, typed conditions.
@Suite struct TypedObjectTests {
    @Test func readsAttributesAndRelationships() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            let ada = try #require(try context.object(Person.self, primaryKey: 1))
            #expect(try ada.id == 1)
            #expect(try ada.firstname == "Ada")
            #expect(try ada.surname == "Lovelace")
            let emails = try ada.email
            #expect(emails.count == 2)
            #expect(Set(try emails.map { try $0.address }) == ["ada@example.com", "ada@work.example"])
            #expect(try emails.first!.person == ada)
            #expect(try ada.title.map { try $0.name } == ["Countess"])
            #expect(ada.object === (try context.object("person", primaryKey: 1)))
            let values = try ada.values
            #expect(values == Person.Values(id: 1, firstname: "Ada", surname: "Lovelace"))
            let decoded = try JSONDecoder().decode(Person.Values.self, from: JSONEncoder().encode(values))
            #expect(decoded == values)
            #expect(try context.object(Person.self, primaryKey: 99) == nil)
            let pair = try #require(try context.object(PersonTitleRel.self, primaryKey: [2, 3]))
            #expect(try pair.title?.name == "Doctor")
            #expect(try pair.person?.firstname == "Grace")
        }
    }

    @Test func typedReadsAgreeWithTheDynamicLayer() throws {
        try TypedSeeds.with { fixture in
            for person in try fixture.context.fetch(Person.self) {
                #expect(try person.firstname == (try person.object.value(forKey: "firstname", as: String.self)))
                #expect(try person.id == (try person.object.value(forKey: "id", as: Int.self)))
            }
        }
    }

    @Test func updateSendsOneUpdateOfTheChangedColumnsOnly() throws {
        try TypedSeeds.with { fixture in
            let ada = try #require(try fixture.context.object(Person.self, primaryKey: 1))
            let both = try fixture.sql { try ada.update { $0.surname = "King"; $0.firstname = "Augusta" } }
            #expect(both.count == 1)
            #expect(both.first?.hasPrefix("UPDATE") == true)
            #expect(both.first?.contains("\"surname\" = $") == true && both.first?.contains("\"firstname\" = $") == true)
            #expect(both.first?.contains("RETURNING") == true)
            #expect(try ada.surname == "King" && ada.firstname == "Augusta")
            let one = try fixture.sql { try ada.update { $0.surname = "Lovelace"; $0.firstname = "Augusta" } }
            #expect(one.count == 1)
            #expect(one.first?.contains("\"surname\" = $") == true)
            #expect(one.first?.contains("\"firstname\" = $") == false)
            let none = try fixture.sql { try ada.update { $0.surname = "Lovelace" } }
            #expect(none.isEmpty)
            let toNull = try fixture.sql { try ada.update { $0.firstname = nil } }
            #expect(toNull.count == 1)
            #expect(try ada.firstname == nil)
            #expect(try fixture.disagreements().isEmpty)
            // A key column may change: one UPDATE, the object keeps its identity under its
            // new key; a foreign key that refers to the old key may refuse it.
            let refused = fixture.sql {
                #expect(throws: RelateError.self) { try ada.update { $0.id = 42 } }
            }
            #expect(refused.count == 1)
            #expect(try ada.id == 1)
            let lone = try fixture.context.insert(Person.self) { $0.firstname = "Lone" }
            let rekeyed = try fixture.sql { try lone.update { $0.id = 42; $0.surname = "Key" } }
            #expect(rekeyed.count == 1)
            #expect(try lone.id == 42 && lone.surname == "Key")
            #expect(try fixture.context.object(Person.self, primaryKey: 42) == lone)
        }
    }

    @Test func insertLeavesUnsetColumnsToTheirDefaults() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            let ada = try #require(try context.object(Person.self, primaryKey: 1))
            let adaEmails = try ada.email
            var grace: Person?
            let sql = try fixture.sql { grace = try context.insert(Person.self) { $0.firstname = "Grace" } }
            #expect(sql.count == 1)
            #expect(sql.first?.contains("(\"firstname\") VALUES ($1)") == true)
            let new = try #require(grace)
            #expect(try new.id == 3)
            #expect(try new.surname == nil)
            let email = try context.insert(Email.self) { $0.address = "ada@new.example"; $0.person = ada }
            #expect(try email.person == ada)
            #expect(adaEmails.contains(email))
            #expect(adaEmails.count == 3)
            let empty = try context.insert(Title.self)
            #expect(try empty.name == nil)
            #expect(try fixture.disagreements().isEmpty)
        }
    }

    @Test func toOneAndToManyWritesKeepInversesInStep() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            let ada = try #require(try context.object(Person.self, primaryKey: 1))
            let grace = try #require(try context.object(Person.self, primaryKey: 2))
            let adaEmails = try ada.email
            let graceEmails = try grace.email
            let work = try #require(try context.object(Email.self, primaryKey: 2))
            // To-one set: the email moves between the loaded sets.
            try work.setPerson(grace)
            #expect(!adaEmails.contains(work) && graceEmails.contains(work))
            #expect(try work.personId == 2)
            // To-many insert and remove.
            try adaEmails.insert(work)
            #expect(adaEmails.contains(work) && !graceEmails.contains(work))
            try adaEmails.remove(work)
            #expect(!adaEmails.contains(work))
            #expect(try work.person == nil)
            try work.setPerson(nil)
            // Many-to-many through the helper.
            let doctor = try #require(try context.fetch(Title.self, where: { $0.name == "Doctor" }).first)
            let doctorPeople = try doctor.person
            let adaTitles = try ada.title
            try adaTitles.insert(doctor)
            #expect(adaTitles.contains(doctor) && doctorPeople.contains(ada))
            #expect(adaTitles.count(for: doctor) == 1)
            try doctorPeople.remove(ada)
            #expect(!adaTitles.contains(doctor))
            // Many at once: one statement each way.
            let titles = try context.fetch(Title.self)
            #expect(try fixture.sql { try adaTitles.insert(contentsOf: titles) }.count == 1)
            #expect(adaTitles.count == titles.count && doctorPeople.contains(ada))
            #expect(try fixture.sql { try adaEmails.insert(contentsOf: [work]) }.count == 1)
            #expect(adaEmails.contains(work) && !graceEmails.contains(work))
            try graceEmails.removeAll()
            #expect(graceEmails.isEmpty)
            #expect(try fixture.disagreements().isEmpty)
        }
    }

    @Test func typedConditionsThroughToOnesAndHelpers() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            let hoppers = try context.fetch(
                Person.self, where: { $0.surname == "Hopper" && $0.email.any { $0.address.hasSuffix("@example.com") } },
                orderBy: { [$0.surname.ascending] }, limit: 10)
            #expect(try hoppers.map { try $0.firstname } == ["Grace"])
            #expect(try context.count(Person.self, where: { $0.surname == "Hopper" }) == 1)
            #expect(try context.count(Person.self) == 2)
            #expect(try context.count(Person.self, where: { $0.firstname == nil }) == 0)
            let adas = try context.fetch(Email.self, where: { $0.person.surname == "Lovelace" }, orderBy: { [$0.address.descending] })
            #expect(try adas.map { try $0.address } == ["ada@work.example", "ada@example.com"])
            let doctors = try context.fetch(Person.self, where: { $0.title.any { $0.name == "Doctor" } })
            #expect(try doctors.map { try $0.firstname } == ["Grace"])
            let countesses = try context.fetch(PersonTitleRel.self, where: { $0.title.name == "Countess" })
            #expect(try countesses.map { try $0.personId } == [1])
            let untitled = try context.fetch(Title.self, where: { $0.person.isEmpty })
            #expect(untitled.isEmpty)
            let ordered = try context.fetch(Person.self, orderBy: { [$0.id.descending] }, limit: 1, offset: 0)
            #expect(try ordered.map { try $0.id } == [2])
            #expect(try context.count(Email.self, where: { $0.id > 1 && $0.personId >= 2 }) == 1)
            #expect(try context.count(Email.self, where: { $0.id.in([1, 3]) }) == 2)
            #expect(try context.count(Person.self, where: { $0.email.all { $0.address.contains("ada") } }) == 1)
            #expect(try context.count(Person.self, where: { $0.email.none() }) == 0)
        }
    }

    @Test func wrongEntityIsAnErrorNotACrash() throws {
        try TypedSeeds.with { fixture in
            let email = try #require(try fixture.context.object("email", primaryKey: 1))
            let error = #expect(throws: RelateError.self) { try Person(email) }
            #expect(error?.kind == .typeMismatch)
            let unchecked = Person(unchecked: email)
            #expect(throws: RelateError.self) { _ = try unchecked.relationshipCheck() }
        }
    }
}

extension Person {
    /// A relationship read through a wrongly wrapped object: an error, not a crash.
    func relationshipCheck() throws -> Int { try email.count }
}

extension TypedObjectTests {
    @Test func valuesLeaveUnitsOfWorkOfADatabase() async throws {
        // A schema of its own, made and dropped here (the fixture's closure is not async).
        let connection = try TestDatabase.connect()
        let name = "test_typed_db_" + UUID().uuidString.prefix(8).lowercased()
        try connection.executeScript(
            "CREATE SCHEMA \(name); SET search_path TO \(name);\n"
                + (try String(contentsOf: TestDatabase.repository.appendingPathComponent("sql/examples/seed_person_email.sql"), encoding: .utf8))
                + TypedSeeds.titles + "\n" + TypedSeeds.rows)
        defer { _ = try? connection.execute("DROP SCHEMA \(name) CASCADE") }
        let database = try Database(url: TestDatabase.url(), schemas: [name], maxConnections: 2)
        let people: [Person.Values] = try await database.read { context in
            try context.fetch(Person.self, orderBy: { [$0.id.ascending] }).map { try $0.values }
        }
        #expect(people.map(\.surname) == ["Lovelace", "Hopper"])
        try await database.write { context in
            try context.object(Person.self, primaryKey: 1)?.update { $0.surname = "King" }
        }
        let renamed = try await database.read { context in try context.object(Person.self, primaryKey: 1)?.surname }
        #expect(renamed == "King")
    }
}
