import Foundation
@testable import Relate
import Testing

/// `model.jsonDescription()`: the stable format of `relate inspect --format json`.
@Suite struct ModelJSONTests {
    typealias R = ModelDescription.RelationshipDescription

    func decoded(_ model: Model) throws -> ModelDescription {
        try JSONDecoder().decode(ModelDescription.self, from: Data(model.jsonDescription().utf8))
    }

    func end(_ table: String, _ columns: String...) -> R.End {
        R.End(schema: "public", table: table, columns: columns)
    }

    func via(_ table: String, _ from: String, _ to: String) -> R.Via {
        R.Via(schema: "public", table: table, fromColumns: [from], toColumns: [to])
    }

    @Test func seedSchemaGivesExactlyTheExpectedRelationships() throws {
        let description = try decoded(makeModel(Examples.seed))
        let personFK = "person_title_rel_person_id_fkey"
        let titleFK = "person_title_rel_title_id_fkey"
        let expected: [R] = [
            R(key: "person", kind: "many-to-one", from: end("email", "person_id"), to: end("person", "id"), via: nil,
              foreignKeyIn: "from", constraint: "person", rule: "foreign-key", inverse: "email"),
            R(key: "email", kind: "one-to-many", from: end("person", "id"), to: end("email", "person_id"), via: nil,
              foreignKeyIn: "to", constraint: "person", rule: "foreign-key", inverse: "person"),
            R(key: "person_title_rel", kind: "one-to-many", from: end("person", "id"), to: end("person_title_rel", "person_id"), via: nil,
              foreignKeyIn: "to", constraint: personFK, rule: "foreign-key", inverse: "person"),
            R(key: "title", kind: "many-to-many", from: end("person", "id"), to: end("title", "id"),
              via: via("person_title_rel", "person_id", "title_id"),
              foreignKeyIn: "via", constraint: titleFK, rule: "keyed", inverse: "person"),
            R(key: "person", kind: "many-to-one", from: end("person_title_rel", "person_id"), to: end("person", "id"), via: nil,
              foreignKeyIn: "from", constraint: personFK, rule: "foreign-key", inverse: "person_title_rel"),
            R(key: "title", kind: "many-to-one", from: end("person_title_rel", "title_id"), to: end("title", "id"), via: nil,
              foreignKeyIn: "from", constraint: titleFK, rule: "foreign-key", inverse: "person_title_rel"),
            R(key: "person_title_rel", kind: "one-to-many", from: end("title", "id"), to: end("person_title_rel", "title_id"), via: nil,
              foreignKeyIn: "to", constraint: titleFK, rule: "foreign-key", inverse: "title"),
            R(key: "person", kind: "many-to-many", from: end("title", "id"), to: end("person", "id"),
              via: via("person_title_rel", "title_id", "person_id"),
              foreignKeyIn: "via", constraint: personFK, rule: "keyed", inverse: "title"),
        ]
        #expect(description.relationships == expected)
    }

    @Test func seedSchemaEntities() throws {
        let description = try decoded(makeModel(Examples.seed))
        #expect(description.entities.map(\.name) == ["email", "person", "person_title_rel", "title"])
        let person = try #require(description.entities.first { $0.name == "person" })
        #expect(person.schema == "public" && person.kind == "table" && person.primaryKey == ["id"])
        #expect(person.attributes == [
            .init(name: "id", type: "int4", nullable: false),
            .init(name: "firstname", type: "text", nullable: true),
            .init(name: "surname", type: "text", nullable: true),
        ])
        #expect(description.entities.first { $0.name == "person_title_rel" }?.primaryKey == ["person_id", "title_id"])
    }

    @Test func jsonHasTheDocumentedShape() throws {
        let json = try makeModel(Examples.seed).jsonDescription()
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["entities", "relationships"])
        let relationships = try #require(object["relationships"] as? [[String: Any]])
        for relationship in relationships {
            let kind = try #require(relationship["kind"] as? String)
            // `via` is there for many-to-many only.
            #expect((relationship["via"] != nil) == (kind == "many-to-many"))
            #expect(Set(relationship.keys).isSuperset(of: ["key", "kind", "from", "to", "foreignKeyIn", "constraint", "rule"]))
        }
        // Stable: sorted keys, the same text twice.
        #expect(try makeModel(Examples.seed).jsonDescription() == json)
        #expect(json.contains("\"foreignKeyIn\" : \"via\""))
    }

    /// Every relationship appears once per direction; its inverse is the one with the ends
    /// swapped, named by `inverse`, and names it back.
    @Test(arguments: ManyToManyRule.allCases)
    func everyRelationshipHasItsInverseWithSwappedEnds(rule: ManyToManyRule) throws {
        for (tables, schemas) in [(Examples.seed, ["public"]), (Examples.hardCases, Examples.hardCasesSchemas)] {
            let description = try decoded(makeModel(tables, schemas: schemas, rule: rule))
            #expect(Set(description.relationships).count == description.relationships.count)
            for relationship in description.relationships {
                let inverses = description.relationships.filter { other in
                    other.from == relationship.to && other.to == relationship.from
                        && other.via?.fromColumns == relationship.via?.toColumns && other.via?.toColumns == relationship.via?.fromColumns
                        && other.via?.table == relationship.via?.table
                        && other.foreignKeyIn == Self.swapped(relationship.foreignKeyIn)
                }
                #expect(inverses.count == 1, "\(relationship.from.table).\(relationship.key)")
                guard let inverse = inverses.first else { continue }
                #expect(inverse.key == relationship.inverse, "\(relationship.from.table).\(relationship.key)")
                #expect(inverse.inverse == relationship.key, "\(relationship.from.table).\(relationship.key)")
                #expect(inverse.rule == relationship.rule)
                if relationship.via == nil { #expect(inverse.constraint == relationship.constraint) }
                let kinds: Set = [relationship.kind, inverse.kind]
                #expect([["many-to-one", "one-to-many"], ["one-to-one"], ["many-to-many"]].contains(kinds))
            }
        }
    }

    static func swapped(_ side: String) -> String {
        switch side {
        case "from": "to"
        case "to": "from"
        default: side
        }
    }

    @Test func crossSchemaEndsCarryTheirSchema() throws {
        let description = try decoded(makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas))
        let price = try #require(description.relationships.first { $0.from.table == "price" })
        #expect(price.to == R.End(schema: Examples.otherSchema, table: "currency", columns: ["id"]))
        #expect(description.entities.contains { $0.schema == Examples.otherSchema && $0.name == "currency" })
        #expect(description.entities.first { $0.name == "book_with_author" }?.kind == "view")
    }
}
