import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// The drift check without a server: a generated type's description against models that
/// moved on in each way generated code cares about (and in ways it does not).
@Suite struct TypedModelCheckTests {
    /// The seeds' `TypedEntity` of `name`, as the generator describes it.
    func typed(_ name: String, in tables: [Catalog.Table]) throws -> TypedEntity {
        let model = try makeModel(tables)
        let entity = try model.entity(name)
        let snapshot = try ModelSnapshot(json: Data(model.jsonDescription().utf8))
        let fingerprint = try #require(Generator(snapshot).files().first { $0.name == Generator.fileName(ofEntity: name) })
            .contents.components(separatedBy: "fingerprint: \"").last?.prefix(16)
        return TypedEntity(
            name: name,
            attributes: entity.attributes.map { TypedAttribute(name: $0.name, key: $0.key, type: $0.type, nullable: $0.isNullable) },
            relationships: entity.relationships.map { relationship in
                TypedRelationship(
                    key: relationship.key, kind: relationship.kind.rawValue,
                    target: model.entity(schema: relationship.to.schema, table: relationship.to.table)!.name,
                    columns: relationship.from.columns, targetColumns: relationship.to.columns,
                    via: relationship.via.map { model.entity(schema: $0.schema, table: $0.table)!.name })
            },
            fingerprint: String(fingerprint ?? ""))
    }

    func drift(_ typed: TypedEntity, _ tables: [Catalog.Table]) throws -> String? {
        do {
            try TypedModelCheck.differences(typed, model: makeModel(tables))
            return nil
        } catch {
            #expect(error.kind == .schemaChanged)
            return error.message
        }
    }

    @Test func theSameModelPasses() throws {
        for name in ["person", "email", "title", "person_title_rel"] {
            #expect(try drift(typed(name, in: Examples.seed), Examples.seed) == nil)
        }
    }

    /// An enum's label added or removed after generation is drift naming the label; the
    /// same labels in another order are not.
    @Test func enumLabelsAddedOrRemovedAreNamed() throws {
        func diary(_ labels: [String]) -> [Catalog.Table] {
            [Catalog.Table(
                name: "diary",
                columns: [
                    Catalog.Column(name: "id", type: "int4", isNullable: false),
                    Catalog.Column(name: "feeling", type: "mood", isNullable: true, enumLabels: labels),
                ], primaryKey: ["id"])]
        }
        let base = try typed("diary", in: diary(["happy", "sad"]))
        let generated = TypedEntity(
            name: base.name,
            attributes: base.attributes.map {
                TypedAttribute(name: $0.name, key: $0.key, type: $0.type, nullable: $0.nullable, enumLabels: $0.type == "mood" ? ["happy", "sad"] : nil)
            },
            relationships: base.relationships, fingerprint: base.fingerprint)
        #expect(try drift(generated, diary(["happy", "sad"])) == nil)
        #expect(try drift(generated, diary(["sad", "happy"])) == nil)
        #expect(try drift(generated, diary(["happy", "wistful", "sad"]))?.contains(
            #"the enum type mood of column "feeling" of table "public.diary" now has label "wistful", which the generated enum lacks"#) == true)
        #expect(try drift(generated, diary(["happy"]))?.contains(#"no longer has label "sad""#) == true)
        // Code generated before labels were recorded checks no labels.
        #expect(try drift(base, diary(["happy", "wistful"])) == nil)
        // A label replaced by one that differs only in its Unicode form is another label
        // to the server (and to the generated enum): drift.
        let composed = try typed("diary", in: diary(["caf\u{E9}"]))
        let generatedComposed = TypedEntity(
            name: composed.name,
            attributes: composed.attributes.map {
                TypedAttribute(name: $0.name, key: $0.key, type: $0.type, nullable: $0.nullable, enumLabels: $0.type == "mood" ? ["caf\u{E9}"] : nil)
            },
            relationships: composed.relationships, fingerprint: composed.fingerprint)
        #expect(try drift(generatedComposed, diary(["cafe\u{301}"]))?.contains("now has label") == true)
    }

    @Test func harmlessChangesPass() throws {
        let email = try typed("email", in: Examples.seed)
        var tables = Examples.seed
        // A column added at the end, NOT NULL added, an unrelated table.
        tables[1].columns.append(Catalog.Column(name: "verified", type: "bool", isNullable: false))
        tables[1].columns[1].isNullable = false
        tables.append(table("audit_log", "id message"))
        #expect(try drift(email, tables) == nil)
    }

    @Test func eachDriftIsNamed() throws {
        let email = try typed("email", in: Examples.seed)
        var moved = Examples.seed
        moved[1].columns.swapAt(1, 2)
        #expect(try drift(email, moved)?.contains("column \"address\" of table \"public.email\" is now at position 3, generated at 2") == true)

        var retyped = Examples.seed
        retyped[1].columns[2] = Catalog.Column(name: "person_id", type: "int8")
        #expect(try drift(email, retyped)?.contains("column \"person_id\" of table \"public.email\" is now of type int8, generated as int4") == true)

        var nullable = Examples.seed
        nullable[1].columns[0].isNullable = true
        #expect(try drift(email, nullable)?.contains("column \"id\" of table \"public.email\" is now nullable") == true)

        var retargeted = Examples.seed
        retargeted.append(table("human", "id name"))
        retargeted[1].foreignKeys = [fk("person", ["person_id"], "human")]
        #expect(try drift(email, retargeted)?.contains("relationship \"person\" of table \"public.email\" is now many-to-one to \"human\"") == true)

        var dropped = Examples.seed
        dropped[1].foreignKeys = []
        #expect(try drift(email, dropped)?.contains("relationship \"person\" of table \"public.email\" is not in the model") == true)

        var renamed = Examples.seed
        renamed[1].name = "mail"
        #expect(try drift(email, renamed)?.contains("table \"email\" of the generated type is not in the model") == true)
    }
}
