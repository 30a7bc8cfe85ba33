import Foundation
import Testing

@testable import Relate

/// The exact SQL and values of every statement the object layer sends, built with no
/// server: ``Statements`` takes the model's layouts and the values memory holds.
/// The live tests check what these statements do; these check what they say.
@Suite struct StatementTests {
    /// The seeds' schema with real type OIDs (int4 23, text 25), plus a table with a
    /// composite key, and one whose key has no binary array form (an OID the mapping lacks).
    static let layout: ModelLayout = {
        func column(_ name: String, _ type: String, nullable: Bool = true) -> Catalog.Column {
            Catalog.Column(name: name, type: type, typeOID: type == "int4" ? 23 : type == "text" ? 25 : 3_614, isNullable: nullable)
        }
        let tables = [
            Catalog.Table(
                schema: "public", name: "person", kind: .table,
                columns: [column("id", "int4", nullable: false), column("firstname", "text"), column("surname", "text")],
                primaryKey: ["id"], uniqueKeys: [], foreignKeys: []),
            Catalog.Table(
                schema: "public", name: "email", kind: .table,
                columns: [column("id", "int4", nullable: false), column("address", "text"), column("person_id", "int4")],
                primaryKey: ["id"], uniqueKeys: [],
                foreignKeys: [fk("person", ["person_id"], "person", onDelete: .cascade)]),
            Catalog.Table(
                schema: "public", name: "title", kind: .table,
                columns: [column("id", "int4", nullable: false), column("name", "text")],
                primaryKey: ["id"], uniqueKeys: [], foreignKeys: []),
            Catalog.Table(
                schema: "public", name: "person_title_rel", kind: .table,
                columns: [column("person_id", "int4", nullable: false), column("title_id", "int4", nullable: false)],
                primaryKey: ["person_id", "title_id"], uniqueKeys: [],
                foreignKeys: [fk("person", ["person_id"], "person"), fk("title", ["title_id"], "title")]),
            Catalog.Table(
                schema: "public", name: "shelf", kind: .table,
                columns: [column("room", "text", nullable: false), column("number", "int4", nullable: false)],
                primaryKey: ["room", "number"], uniqueKeys: [], foreignKeys: []),
            Catalog.Table(
                schema: "public", name: "doc", kind: .table,
                columns: [column("lang", "regconfig", nullable: false), column("number", "int4", nullable: false)],
                primaryKey: ["lang", "number"], uniqueKeys: [], foreignKeys: []),
        ]
        let model = try! Model(catalog: Catalog(schemas: ["public"], tables: tables), options: ModelOptions())
        return try! ModelLayout(model: model) { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    }()

    static func entity(_ name: String) -> EntityLayout {
        layout.entities[try! layout.entityIndex(named: name)]
    }

    static func relationship(_ key: String, of name: String) -> Int {
        entity(name).entity.relationships.firstIndex { $0.key == key }!
    }

    /// Each bound value as text, `NULL` for a missing one: what a test compares.
    static func values(_ statement: Statement) -> [String] {
        statement.parameters.map { $0.map { "\($0)" } ?? "NULL" }
    }

    let person = entity("person")
    let email = entity("email")
    let helper = entity("person_title_rel")

    // MARK: - Rows

    @Test func insertNamesItsColumnsAndReturnsTheRow() {
        let statement = Statements.insert(into: email, columns: [1, 2], values: ["ada@example.com", 1])
        #expect(
            statement.sql
                == #"INSERT INTO "public"."email" ("address", "person_id") VALUES ($1, $2) RETURNING "id", "address", "person_id""#)
        #expect(Self.values(statement) == ["ada@example.com", "1"])
        #expect(
            Statements.insert(into: person, columns: [], values: []).sql
                == #"INSERT INTO "public"."person" DEFAULT VALUES RETURNING "id", "firstname", "surname""#)
    }

    @Test func updateSetsThenFindsByKeyThenChecksWhatItExpects() {
        let statement = Statements.update(
            email, setting: [2], to: [nil], key: [7], expecting: [(column: 2, value: .integer(1))])
        #expect(
            statement.sql
                == #"UPDATE "public"."email" SET "person_id" = $1 WHERE "id" = $2 AND "person_id" = $3 RETURNING "id", "address", "person_id""#)
        #expect(Self.values(statement) == ["NULL", "7", "1"])
    }

    @Test func updateOfACompositeKeyNumbersEveryPart() {
        let shelf = Self.entity("shelf")
        let statement = Statements.update(shelf, setting: [1], to: [3], key: ["attic", 2])
        #expect(
            statement.sql
                == #"UPDATE "public"."shelf" SET "number" = $1 WHERE "room" = $2 AND "number" = $3 RETURNING "room", "number""#)
        #expect(Self.values(statement) == ["3", "attic", "2"])
    }

    @Test func nullifyLetsGoOfEveryoneButTheException() {
        let statement = Statements.nullify(email, columns: [2], matching: [1], exceptKey: [.integer(9)])
        #expect(
            statement.sql
                == #"UPDATE "public"."email" SET "person_id" = NULL WHERE "person_id" = $1 AND NOT ("id" = $2) RETURNING "id", "address", "person_id""#)
        #expect(Self.values(statement) == ["1", "9"])
        #expect(!Statements.nullify(email, columns: [2], matching: [1], exceptKey: nil).sql.contains("NOT"))
    }

    @Test func deleteFindsTheRowByKey() {
        let statement = Statements.delete(from: person, key: [4])
        #expect(statement.sql == #"DELETE FROM "public"."person" WHERE "id" = $1"#)
        #expect(Self.values(statement) == ["4"])
        #expect(
            Statements.delete(from: person, key: [4], returning: true).sql
                == #"DELETE FROM "public"."person" WHERE "id" = $1 RETURNING "id", "firstname", "surname""#)
    }

    @Test func rowsByKeyAreOneValueOrOneList() {
        #expect(Statements.rows(of: person, keys: [[.integer(1)]]).sql == #"SELECT "id", "firstname", "surname" FROM "public"."person" WHERE "id" = $1"#)
        let many = Statements.rows(of: person, keys: [[.integer(1)], [.integer(2)]])
        #expect(many.sql == #"SELECT "id", "firstname", "surname" FROM "public"."person" WHERE "id" = ANY($1)"#)
        #expect(Self.values(many) == ["[1, 2]"])
        #expect(person.selectByPrimaryKey == #"SELECT "id", "firstname", "surname" FROM "public"."person" WHERE "id" = $1"#)
    }

    @Test func compositeKeysArePairedThroughUnnest() {
        let shelf = Self.entity("shelf")
        let statement = Statements.rows(of: shelf, keys: [[.string("attic"), .integer(1)], [.string("hall"), .integer(2)]])
        #expect(statement.sql == #"SELECT "room", "number" FROM "public"."shelf" WHERE ("room", "number") IN (SELECT * FROM unnest($1, $2))"#)
        #expect(Self.values(statement) == [#"["attic", "hall"]"#, "[1, 2]"])
    }

    @Test func aKeyColumnWithoutAnArrayTypeIsPairedByItsTextAndNarrowedByItsOwnList() {
        let doc = Self.entity("doc")
        let statement = Statements.rows(of: doc, keys: [[.string("english"), .integer(1)], [.string("simple"), .integer(2)]])
        #expect(
            statement.sql
                == #"SELECT "lang"::text, "number" FROM "public"."doc" WHERE ("lang"::text, "number") IN (SELECT * FROM unnest($1::text[], $2)) AND "lang" = ANY($3)"#
        )
        #expect(statement.parameters.count == 3)
    }

    @Test func aCallersConditionKeepsItsPlaceholdersAndTheLimitComesAfter() {
        let statement = Statements.select(from: person, where: "surname = $1", ["Hopper"], orderBy: "firstname", limit: 10)
        #expect(
            statement.sql
                == #"SELECT "id", "firstname", "surname" FROM "public"."person" WHERE surname = $1 ORDER BY firstname LIMIT $2"#)
        #expect(Self.values(statement) == ["Hopper", "10"])
        #expect(Statements.count(of: person, where: nil, []).sql == #"SELECT count(*) FROM "public"."person""#)
    }

    // MARK: - Relationships

    @Test func aToManyLoadsByTheChildrensForeignKey() {
        let statement = Statements.load(
            relationship: Self.relationship("email", of: "person"), of: person, in: Self.layout, ownerKeys: [[.integer(1)], [.integer(2)]])
        #expect(statement.sql == #"SELECT "id", "address", "person_id" FROM "public"."email" WHERE "person_id" = ANY($1)"#)
    }

    @Test func aManyToManyLoadsThroughItsHelperWithTheOwnersKeyAfterTheTargetsColumns() {
        let statement = Statements.load(
            relationship: Self.relationship("title", of: "person"), of: person, in: Self.layout, ownerKeys: [[.integer(1)]])
        #expect(
            statement.sql
                == #"SELECT t."id", t."name", h."person_id" FROM "public"."person_title_rel" h JOIN "public"."title" t ON t."id" = h."title_id" WHERE h."person_id" = $1"#
        )
    }

    @Test func countsAreGroupedByTheForeignKey() {
        let toMany = Statements.counts(
            relationship: Self.relationship("email", of: "person"), of: person, in: Self.layout, ownerKeysByColumn: [[.integer(1), .integer(2)]])
        #expect(toMany.sql == #"SELECT "person_id", count(*) FROM "public"."email" WHERE "person_id" = ANY($1) GROUP BY "person_id""#)
        let manyToMany = Statements.counts(
            relationship: Self.relationship("title", of: "person"), of: person, in: Self.layout, ownerKeysByColumn: [[.integer(1)]])
        #expect(
            manyToMany.sql == #"SELECT "person_id", count(*) FROM "public"."person_title_rel" WHERE "person_id" = $1 GROUP BY "person_id""#)
    }

    @Test func aOneToManyReplaceReleasesAllButTheMembersThenClaimsThem() {
        let release = Statements.release(email, foreignKey: [2], owner: [1], keeping: [[.integer(5)], [.integer(6)]])
        #expect(
            release.sql
                == #"UPDATE "public"."email" SET "person_id" = NULL WHERE "person_id" = $1 AND NOT ("id" = ANY($2)) RETURNING "id", "address", "person_id""#
        )
        #expect(Self.values(release) == ["1", "[5, 6]"])
        let claim = Statements.claim(email, foreignKey: [2], owner: [1], members: [[.integer(5)], [.integer(6)]])
        #expect(
            claim.sql
                == #"UPDATE "public"."email" SET "person_id" = $1 WHERE "id" = ANY($2) AND ("person_id") IS DISTINCT FROM ($1) RETURNING "id", "address", "person_id""#
        )
        #expect(Self.values(claim) == ["1", "[5, 6]"])
    }

    // MARK: - Helper rows

    @Test func aPairIsInsertedOnceOrSkippedWhenThere() {
        let pair = person.helperColumns[Self.relationship("title", of: "person")]
        let plain = Statements.insertPair(into: helper, pair: pair, values: [1, 2], returning: false)
        #expect(plain.sql == #"INSERT INTO "public"."person_title_rel" ("person_id", "title_id") VALUES ($1, $2)"#)
        let skipping = Statements.insertPair(into: helper, pair: pair, values: [1, 2], returning: true, skippingExisting: true)
        #expect(
            skipping.sql
                == #"INSERT INTO "public"."person_title_rel" ("person_id", "title_id") VALUES ($1, $2) ON CONFLICT ("person_id", "title_id") DO NOTHING RETURNING "person_id", "title_id""#
        )
    }

    @Test func manyPairsGoInOneUnnest() {
        let pair = person.helperColumns[Self.relationship("title", of: "person")]
        let statement = Statements.insertPairs(into: helper, pair: pair, owner: [1], arrays: [[2, 3]], returning: false, skippingExisting: true)
        #expect(
            statement.sql
                == #"INSERT INTO "public"."person_title_rel" ("person_id", "title_id") SELECT $1, v."title_id" FROM (SELECT unnest($2) AS "title_id") AS v WHERE NOT EXISTS (SELECT 1 FROM "public"."person_title_rel" h WHERE h."person_id" = $3 AND h."title_id" = v."title_id")"#
        )
        #expect(statement.parameters.count == 3)
        #expect(
            Statements.insertPairs(into: helper, pair: pair, owner: [1], arrays: [[2, 3]], returning: true).sql
                == #"INSERT INTO "public"."person_title_rel" ("person_id", "title_id") SELECT $1, v."title_id" FROM (SELECT unnest($2) AS "title_id") AS v RETURNING "person_id", "title_id""#
        )
    }

    @Test func aPairIsDeletedOnceEvenWhereItRepeats() {
        let pair = person.helperColumns[Self.relationship("title", of: "person")]
        #expect(
            Statements.deletePair(from: helper, pair: pair, values: [1, 2], keyed: true).sql
                == #"DELETE FROM "public"."person_title_rel" WHERE "person_id" = $1 AND "title_id" = $2 RETURNING "person_id", "title_id""#)
        #expect(
            Statements.deletePair(from: helper, pair: pair, values: [1, 2], keyed: false).sql
                == #"DELETE FROM "public"."person_title_rel" WHERE (tableoid, ctid) = (SELECT tableoid, ctid FROM "public"."person_title_rel" WHERE "person_id" = $1 AND "title_id" = $2 LIMIT 1) RETURNING "person_id", "title_id""#
        )
    }

    @Test func theOwnersOtherPairsAreDeletedByTheDatabasesWord() {
        let pair = person.helperColumns[Self.relationship("title", of: "person")]
        let keeping = Statements.deletePairs(from: helper, pair: pair, owner: [1], keeping: [[.integer(2), .integer(3)]])
        #expect(
            keeping.sql
                == #"DELETE FROM "public"."person_title_rel" WHERE "person_id" = $1 AND NOT ("title_id" = ANY($2)) RETURNING "person_id", "title_id""#)
        #expect(
            Statements.deletePairs(from: helper, pair: pair, owner: [1], keeping: []).sql
                == #"DELETE FROM "public"."person_title_rel" WHERE "person_id" = $1 RETURNING "person_id", "title_id""#)
    }

    // MARK: - Key paths

    /// A key that holds a dot (a table of another schema is named `schema.table`) is
    /// followed whole: the longest run of a path's parts that names a key is that key.
    @Test func aKeyWithADotIsFollowedWhole() throws {
        func column(_ name: String, _ type: String) -> Catalog.Column {
            Catalog.Column(name: name, type: type, typeOID: type == "int4" ? 23 : 25, isNullable: name != "id")
        }
        let tables = [
            Catalog.Table(
                schema: "public", name: "person", kind: .table, columns: [column("id", "int4"), column("name", "text")],
                primaryKey: ["id"], uniqueKeys: [], foreignKeys: []),
            Catalog.Table(
                schema: "x", name: "badge", kind: .table, columns: [column("id", "int4"), column("label", "text"), column("person_id", "int4")],
                primaryKey: ["id"], uniqueKeys: [], foreignKeys: [fk("badge_person_id_fkey", ["person_id"], "person")]),
        ]
        let model = try Model(catalog: Catalog(schemas: ["public", "x"], tables: tables), options: ModelOptions())
        let layout = try ModelLayout(model: model) { "\"" + $0 + "\"" }
        #expect(model.entities.first { $0.name == "person" }?.relationships.map(\.key) == ["x.badge"])
        let (_, statement) = try FetchRequest("person", where: Key("x.badge").any(Key("label") == "gold")).selectStatement(layout)
        #expect(
            statement.sql
                == #"SELECT t0."id", t0."name" FROM "public"."person" t0 WHERE EXISTS (SELECT 1 FROM "x"."badge" t1 WHERE t1."person_id" = t0."id" AND t1."label" = $1)"#)
        let (_, through) = try FetchRequest("x.badge", where: Key("person.name") == "Ada").selectStatement(layout)
        #expect(through.sql.contains(#"LEFT JOIN "public"."person""#))
        let error = #expect(throws: RelateError.self) { try FetchRequest("person", where: Key("x.badge.label") == "gold").selectStatement(layout) }
        #expect(error?.message.contains(#"Key("x.badge").any(…)"#) == true)
    }

    // MARK: - Live queries

    /// Which requests on a table's own columns the changed rows meet: one statement for all.
    @Test func changedRowsAreTestedAgainstEveryConditionInOneStatement() throws {
        let layout = Self.layout
        let person = try layout.entityIndex(named: "person")
        let hoppers = FetchRequest("person", where: Key("surname") == "Hopper", orderBy: [.ascending("firstname")])
        let everyone = FetchRequest("person", limit: 5)
        let statement = try FetchRequest.matchStatement([hoppers, everyone], entity: person, keys: [.integer(4), .integer(9)], layout: layout)
        #expect(
            statement.sql
                == #"SELECT DISTINCT m.i FROM "public"."person" t0 CROSS JOIN LATERAL (VALUES (0, t0."surname" = $1), (1, TRUE)) m(i, ok) WHERE t0."id" = ANY($2) AND m.ok"#)
        #expect(Self.values(statement).first == "Hopper")
        #expect(try hoppers.decidesFromChangedRows(in: layout))
        #expect(try everyone.decidesFromChangedRows(in: layout))
        // An offset moves the window; a join reads another table; a composite key is not one text.
        #expect(try !FetchRequest("person", offset: 2).decidesFromChangedRows(in: layout))
        #expect(try !FetchRequest("email", where: Key("person.surname") == "Hopper").decidesFromChangedRows(in: layout))
        #expect(try !FetchRequest("person", where: Key("email").any(Key("address") == "a")).decidesFromChangedRows(in: layout))
        #expect(try !FetchRequest("shelf").decidesFromChangedRows(in: layout))
    }

    /// Conditions that differ only in their values are tested as one, their values in
    /// arrays joined to the changed rows; a shape of one request stays in the `VALUES` list.
    @Test func conditionsOfOneShapeAreTestedThroughArraysOfTheirValues() throws {
        let layout = Self.layout
        let person = try layout.entityIndex(named: "person")
        let requests = [
            FetchRequest("person", where: Key("surname") == "Hopper"), FetchRequest("person", limit: 5),
            FetchRequest("person", where: Key("surname") == "Lovelace"),
        ]
        let statement = try FetchRequest.matchStatement(requests, entity: person, keys: [.integer(4), .integer(9)], layout: layout)
        #expect(
            statement.sql
                == #"SELECT DISTINCT i FROM (SELECT v.i FROM "public"."person" t0 JOIN unnest($1, $2) v(i, p1) ON t0."surname" = v.p1 WHERE t0."id" = ANY($3) "#
                + #"UNION ALL SELECT m.i FROM "public"."person" t0 CROSS JOIN LATERAL (VALUES (1, TRUE)) m(i, ok) WHERE t0."id" = ANY($3) AND m.ok) found"#)
        // Binary values are encoded once, when the tests are made: each round binds them as they are.
        var indexes: [UInt8] = []
        try [Int32(0), 2].encode(into: &indexes)
        #expect((statement.parameters[0] as? EncodedParameter)?.bytes == indexes)
        #expect(statement.parameters[0]?.postgresValueType == [Int32].postgresType)
        var surnames: [UInt8] = []
        try ["Hopper", "Lovelace"].encode(into: &surnames)
        #expect((statement.parameters[1] as? EncodedParameter)?.bytes == surnames)
        // A list (`in`) goes in no array: such conditions stay in the VALUES list.
        let lists = try FetchRequest.matchStatement(
            [FetchRequest("person", where: Key("id").in([1, 2])), FetchRequest("person", where: Key("id").in([3]))], entity: person,
            keys: [.integer(4)], layout: layout)
        #expect(lists.sql.contains("VALUES (0, t0.\"id\" = ANY($1)), (1, t0.\"id\" = ANY($2))") && !lists.sql.contains("unnest"))
        // All of one shape: one SELECT.
        let one = try FetchRequest.matchStatement([requests[0], requests[2]], entity: person, keys: [.integer(4)], layout: layout)
        #expect(one.sql == #"SELECT v.i FROM "public"."person" t0 JOIN unnest($1, $2) v(i, p1) ON t0."surname" = v.p1 WHERE t0."id" = $3"#)
        // One key: no `DISTINCT`, each request answered once at most without it.
        let both = try FetchRequest.matchStatement(requests, entity: person, keys: [.integer(4)], layout: layout)
        #expect(
            both.sql
                == #"SELECT v.i FROM "public"."person" t0 JOIN unnest($1, $2) v(i, p1) ON t0."surname" = v.p1 WHERE t0."id" = $3 "#
                + #"UNION ALL SELECT m.i FROM "public"."person" t0 CROSS JOIN LATERAL (VALUES (1, TRUE)) m(i, ok) WHERE t0."id" = $3 AND m.ok"#)
        #expect(both.parameters.count == 3 && both.parameters[2] as? Int == 4)
    }

    /// Under a principal a round's decision asks for a generic plan in the principal's
    /// settings statement (a hundred principals' few tests were planned afresh every round);
    /// without one it has no settings, and the server plans it as it chooses.
    @Test func aDecisionUnderAPrincipalAsksForAGenericPlan() throws {
        let layout = Self.layout
        let person = try layout.entityIndex(named: "person")
        let tests = try FetchRequest.matchTests([FetchRequest("person", where: Key("surname") == "Hopper")], entity: person, layout: layout)
        let bare = try LiveDecision(tests: tests, entity: person, as: nil)
        #expect(bare.principal == nil && bare.settings == nil)
        let tenant = try LiveDecision(tests: tests, entity: person, as: Principal(settings: ["app.tenant": "7"]))
        let settings = try #require(tenant.settings)
        #expect(settings.prepares && settings.sql.hasPrefix("SELECT set_config('transaction_read_only', 'on', true), "))
        #expect(settings.parameters.compactMap { $0 as? String } == ["app.tenant", "7", "plan_cache_mode", "force_generic_plan"])
        #expect(tenant.shape == Statements.SettingsShape(Principal(settings: ["plan_cache_mode": "x", "app.tenant": "8"])))
        #expect(tenant.shape != Statements.SettingsShape(Principal(role: "r", settings: ["app.tenant": "7", "plan_cache_mode": "x"])))
        // A principal that cannot be taken is refused when its decision is made, once.
        #expect(throws: RelateError.self) { try LiveDecision(tests: tests, entity: person, as: Principal(role: "none")) }
    }

    // MARK: - Cursors

    @Test func aWalkDeclaresFetchesAndClosesItsCursor() {
        let query = Statement(sql: #"SELECT "id" FROM "public"."person" t0 WHERE t0."surname" = $1"#, parameters: ["Hopper"])
        let declare = Statements.declare("relate_cursor_1", for: query)
        #expect(declare.sql == #"DECLARE relate_cursor_1 NO SCROLL CURSOR FOR SELECT "id" FROM "public"."person" t0 WHERE t0."surname" = $1"#)
        #expect(Self.values(declare) == ["Hopper"])
        #expect(Statements.fetch(1_000, from: "relate_cursor_1").sql == "FETCH FORWARD 1000 FROM relate_cursor_1")
        #expect(Statements.close("relate_cursor_1").sql == "CLOSE relate_cursor_1")
    }
}
