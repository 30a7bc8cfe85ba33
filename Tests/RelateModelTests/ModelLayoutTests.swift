import Testing

@testable import Relate

/// The SQL pieces a model's contexts share, made once per model.
@Suite struct ModelLayoutTests {
    private static func quote(_ name: String) -> String { "\"\(name)\"" }

    @Test func eachRelationshipKnowsItsTargetInverseAndHelper() throws {
        let model = try makeModel(Examples.seed)
        let layout = try ModelLayout(model: model, quote: Self.quote)
        let person = try layout.entityIndex(named: "person")
        let entity = model.entities[person]
        let title = try #require(entity.relationships.firstIndex { $0.key == "title" })
        let address = layout.entities[person].inverses[title]
        #expect(model.entities[address.entity].name == "title")
        #expect(model.entities[address.entity].relationships[address.relationship].key == "person")
        #expect(layout.entities[person].helpers[title].map { model.entities[$0].name } == "person_title_rel")
    }

    /// A relationship without its inverse is an error, not a write that silently does nothing.
    @Test func aRelationshipWithoutItsInverseIsAnError() throws {
        let model = try makeModel(Examples.seed)
        let person = try model.position(of: "person")
        var broken = model.entities[person]
        broken.relationships[0].inverseIndex = nil
        var positions: [QualifiedName: Int] = [:]
        for (index, entity) in model.entities.enumerated() { positions[QualifiedName(entity.schema, entity.table)] = index }
        let error = #expect(throws: RelateError.self) {
            _ = try EntityLayout(entity: broken, index: person, model: model, entityIndex: positions, quote: Self.quote)
        }
        #expect(error?.message.contains(broken.relationships[0].key) == true)
    }
}
