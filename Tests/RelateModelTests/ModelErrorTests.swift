import Relate
import Testing

/// Asking the model for names it does not have: errors that say what exists.
@Suite struct ModelErrorTests {
    let model: Model

    init() throws {
        model = try Relate.Model(catalog: Catalog(schemas: ["public"], tables: Examples.seed))
    }

    @Test func unknownEntityListsTheNearestNames() throws {
        let error = try #require(#expect(throws: RelateError.self) { try model.entity("peson") })
        #expect(error.kind == .unknownEntity)
        #expect(error.key == "peson")
        #expect(error.candidates.contains("person"))
        #expect(!error.candidates.contains("title"))
        #expect(error.message.contains("peson") && error.message.contains("\"person\""))
    }

    @Test func unknownEntityWithNothingNearListsWhatExists() throws {
        let error = try #require(#expect(throws: RelateError.self) { try model.entity("zzzzzzzzzz") })
        #expect(error.kind == .unknownEntity)
        #expect(error.candidates.isEmpty)
        #expect(error.message.contains("email") && error.message.contains("person_title_rel"))
    }

    @Test func unknownKeyListsTheNearestNames() throws {
        let person = try model.entity("person")
        let error = try #require(#expect(throws: RelateError.self) { try person.relationship(forKey: "emial") })
        #expect(error.kind == .unknownKey)
        #expect(error.entity == "person" && error.key == "emial")
        #expect(error.candidates.first == "email")

        let attributeError = try #require(#expect(throws: RelateError.self) { try person.attribute(forKey: "firstnme") })
        #expect(attributeError.kind == .unknownKey)
        #expect(attributeError.candidates == ["firstname"])

        let propertyError = #expect(throws: RelateError.self) { try person.property(forKey: "nothing_like_it") }
        #expect(propertyError?.kind == .unknownKey)
        #expect(propertyError?.message.contains("surname") == true)
    }

    @Test func relationshipForKeyOfAnAttributeThrows() throws {
        let person = try model.entity("person")
        let error = try #require(#expect(throws: RelateError.self) { try person.relationship(forKey: "firstname") })
        #expect(error.kind == .unknownKey)
        #expect(error.key == "firstname")
        #expect(error.candidates.sorted() == ["email", "person_title_rel", "title"])
    }

    @Test func attributeForKeyOfARelationshipThrows() throws {
        let email = try model.entity("email")
        let error = try #require(#expect(throws: RelateError.self) { try email.attribute(forKey: "person") })
        #expect(error.kind == .unknownKey)
        #expect(error.key == "person")
        #expect(error.candidates == ["id", "address", "person_id"])
        #expect(try email.attribute(forKey: "person_id").name == "person_id")
    }

    @Test func propertyForKeyAnswersBoth() throws {
        let email = try model.entity("email")
        guard case .attribute(let address) = try email.property(forKey: "address") else {
            Issue.record("address is not an attribute")
            return
        }
        #expect(address.type == "text")
        guard case .relationship(let person) = try email.property(forKey: "person") else {
            Issue.record("person is not a relationship")
            return
        }
        #expect(person.kind == .manyToOne)
    }

    @Test func errorsAreDescribedWithTheirKind() throws {
        let error = #expect(throws: RelateError.self) { try model.entity("peson") }
        #expect(error?.description.hasPrefix("unknown entity: ") == true)
    }
}
