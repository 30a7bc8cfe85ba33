import Testing

@testable import Relate

/// The reader of PostgreSQL's node trees (`pg_node_tree`) and of a view's rule from it:
/// a PostgreSQL 15 rule as the server printed it, tokens with escapes, and text that is not
/// a tree (every prefix of the rule), which must read as nothing rather than crash or lie.
@Suite struct NodeTreeTests {
    /// `CREATE VIEW v1 AS SELECT e.id, e.address, e.person_id AS owner_id, p.name FROM email e
    /// JOIN person p ON p.id = e.person_id WHERE e.address LIKE '%a' AND true` (email is oid
    /// 16392, person 16385; `=` on int4 is operator 96, `LIKE` 1209).
    static let rule = #"""
({QUERY :commandType 1 :querySource 0 :canSetTag true :utilityStmt <> :resultRelation 0 :hasAggs false :hasWindowFuncs false :hasTargetSRFs false :hasSubLinks false :hasDistinctOn false :hasRecursive false :hasModifyingCTE false :hasForUpdate false :hasRowSecurity false :isReturn false :cteList <> :rtable ({RANGETBLENTRY :alias {ALIAS :aliasname old :colnames <>} :eref {ALIAS :aliasname old :colnames ("id" "address" "owner_id" "name")} :rtekind 0 :relid 16404 :relkind v :rellockmode 1 :tablesample <> :lateral false :inh false :inFromCl false :requiredPerms 0 :checkAsUser 0 :selectedCols (b) :insertedCols (b) :updatedCols (b) :extraUpdatedCols (b) :securityQuals <>} {RANGETBLENTRY :alias {ALIAS :aliasname new :colnames <>} :eref {ALIAS :aliasname new :colnames ("id" "address" "owner_id" "name")} :rtekind 0 :relid 16404 :relkind v :rellockmode 1 :tablesample <> :lateral false :inh false :inFromCl false :requiredPerms 0 :checkAsUser 0 :selectedCols (b) :insertedCols (b) :updatedCols (b) :extraUpdatedCols (b) :securityQuals <>} {RANGETBLENTRY :alias {ALIAS :aliasname e :colnames <>} :eref {ALIAS :aliasname e :colnames ("id" "address" "person_id")} :rtekind 0 :relid 16392 :relkind r :rellockmode 1 :tablesample <> :lateral false :inh true :inFromCl true :requiredPerms 2 :checkAsUser 0 :selectedCols (b 8 9 10) :insertedCols (b) :updatedCols (b) :extraUpdatedCols (b) :securityQuals <>} {RANGETBLENTRY :alias {ALIAS :aliasname p :colnames <>} :eref {ALIAS :aliasname p :colnames ("id" "name" "country_id")} :rtekind 0 :relid 16385 :relkind r :rellockmode 1 :tablesample <> :lateral false :inh true :inFromCl true :requiredPerms 2 :checkAsUser 0 :selectedCols (b 8 9) :insertedCols (b) :updatedCols (b) :extraUpdatedCols (b) :securityQuals <>} {RANGETBLENTRY :alias <> :eref {ALIAS :aliasname unnamed_join :colnames ("id" "address" "person_id" "id" "name" "country_id")} :rtekind 2 :jointype 0 :joinmergedcols 0 :joinaliasvars ({VAR :varno 3 :varattno 1 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 3 :varattnosyn 1 :location -1} {VAR :varno 3 :varattno 2 :vartype 25 :vartypmod -1 :varcollid 100 :varlevelsup 0 :varnosyn 3 :varattnosyn 2 :location -1} {VAR :varno 3 :varattno 3 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 3 :varattnosyn 3 :location -1} {VAR :varno 4 :varattno 1 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 4 :varattnosyn 1 :location -1} {VAR :varno 4 :varattno 2 :vartype 25 :vartypmod -1 :varcollid 100 :varlevelsup 0 :varnosyn 4 :varattnosyn 2 :location -1} {VAR :varno 4 :varattno 3 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 4 :varattnosyn 3 :location -1}) :joinleftcols (i 1 2 3) :joinrightcols (i 1 2 3) :join_using_alias <> :lateral false :inh false :inFromCl true :requiredPerms 0 :checkAsUser 0 :selectedCols (b) :insertedCols (b) :updatedCols (b) :extraUpdatedCols (b) :securityQuals <>}) :jointree {FROMEXPR :fromlist ({JOINEXPR :jointype 0 :isNatural false :larg {RANGETBLREF :rtindex 3} :rarg {RANGETBLREF :rtindex 4} :usingClause <> :join_using_alias <> :quals {OPEXPR :opno 96 :opfuncid 65 :opresulttype 16 :opretset false :opcollid 0 :inputcollid 0 :args ({VAR :varno 4 :varattno 1 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 4 :varattnosyn 1 :location 104} {VAR :varno 3 :varattno 3 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 3 :varattnosyn 3 :location 111}) :location 109} :alias <> :rtindex 5}) :quals {BOOLEXPR :boolop and :args ({OPEXPR :opno 1209 :opfuncid 850 :opresulttype 16 :opretset false :opcollid 0 :inputcollid 100 :args ({VAR :varno 3 :varattno 2 :vartype 25 :vartypmod -1 :varcollid 100 :varlevelsup 0 :varnosyn 3 :varattnosyn 2 :location 129} {CONST :consttype 25 :consttypmod -1 :constcollid 100 :constlen -1 :constbyval false :constisnull false :location 144 :constvalue 6 [ 24 0 0 0 37 97 ]}) :location 139} {CONST :consttype 16 :consttypmod -1 :constcollid 0 :constlen 1 :constbyval true :constisnull false :location 153 :constvalue 1 [ 1 0 0 0 0 0 0 0 ]}) :location 149}} :targetList ({TARGETENTRY :expr {VAR :varno 3 :varattno 1 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 3 :varattnosyn 1 :location 25} :resno 1 :resname id :ressortgroupref 0 :resorigtbl 16392 :resorigcol 1 :resjunk false} {TARGETENTRY :expr {VAR :varno 3 :varattno 2 :vartype 25 :vartypmod -1 :varcollid 100 :varlevelsup 0 :varnosyn 3 :varattnosyn 2 :location 31} :resno 2 :resname address :ressortgroupref 0 :resorigtbl 16392 :resorigcol 2 :resjunk false} {TARGETENTRY :expr {VAR :varno 3 :varattno 3 :vartype 23 :vartypmod -1 :varcollid 0 :varlevelsup 0 :varnosyn 3 :varattnosyn 3 :location 42} :resno 3 :resname owner_id :ressortgroupref 0 :resorigtbl 16392 :resorigcol 3 :resjunk false} {TARGETENTRY :expr {VAR :varno 4 :varattno 2 :vartype 25 :vartypmod -1 :varcollid 100 :varlevelsup 0 :varnosyn 4 :varattnosyn 2 :location 67} :resno 4 :resname name :ressortgroupref 0 :resorigtbl 16385 :resorigcol 2 :resjunk false}) :override 0 :onConflict <> :returningList <> :groupClause <> :groupDistinct false :groupingSets <> :havingQual <> :windowClause <> :distinctClause <> :sortClause <> :limitOffset <> :limitCount <> :limitOption 0 :rowMarks <> :setOperations <> :constraintDeps <> :withCheckOptions <> :mergeActionList <> :mergeUseOuterJoin false :stmt_location 0 :stmt_len 157})
"""#

    static let relations: [Int: DependedRelation] = [
        16392: DependedRelation(table: Catalog.TableName(name: "email"), columns: ["id", "address", "person_id"]),
        16385: DependedRelation(table: Catalog.TableName(name: "person"), columns: ["id", "name", "country_id"]),
    ]

    @Test func aRuleGivesItsRelationsColumnsAndEqualities() throws {
        let source = try #require(Catalog.ViewSource(rule: Self.rule, relations: Self.relations, equalityOperators: [96]))
        typealias Ref = Catalog.ViewSource.ColumnReference
        #expect(source.relations.map(\.table.name) == ["email", "person"])
        #expect(source.relations.map(\.isNullable) == [false, false])
        #expect(source.columns == [Ref(relation: 0, column: "id"), Ref(relation: 0, column: "address"),
                                   Ref(relation: 0, column: "person_id"), Ref(relation: 1, column: "name")])
        // The join's equality pins both sides; LIKE and `true` pin nothing.
        #expect(Set(source.equalities) == [
            .init(Ref(relation: 1, column: "id"), equals: Ref(relation: 0, column: "person_id")),
            .init(Ref(relation: 0, column: "person_id"), equals: Ref(relation: 1, column: "id")),
        ])
        #expect(source.features.isEmpty)
        // `=` not known as an equality: nothing pinned.
        #expect(Catalog.ViewSource(rule: Self.rule, relations: Self.relations, equalityOperators: [])?.equalities == [])
        // A relation the rule reads that was not read with it: no lineage for its columns.
        let partial = Catalog.ViewSource(rule: Self.rule, relations: [16392: Self.relations[16392]!], equalityOperators: [96])
        #expect(partial?.features.contains(.otherSources) == true)
    }

    @Test func tokensKeepTheirEscapes() throws {
        let tree = try #require(NodeTree.parse(#"({TARGETENTRY :resname \:resorigcol\ a\(b\) :resorigcol 2 :empty <> :quoted \<> :bytes 2 [ 1 0 ]})"#))
        let entry = tree.items[0]
        #expect(entry.name == "TARGETENTRY")
        #expect(entry["resname"]?.text == ":resorigcol a(b)")
        #expect(entry["resorigcol"]?.int == 2)
        #expect(entry["empty"] == .null && entry["quoted"]?.text == "<>")
        #expect(entry["bytes"]?.items.count == 5)
        // Fields not asked for are passed over, escapes and brackets included.
        let some = try #require(NodeTree.parse(#"{TARGETENTRY :resname \1:a\ \) :other ({A :x (1 2)} "b\}") :resorigcol 2}"#, fields: ["resorigcol"]))
        #expect(some == .node("TARGETENTRY", ["resorigcol": .token("2")]))
        #expect(NodeTree.parse("{A :skipped (1 2} :b 1}", fields: ["b"]) == nil)
        // A column named like a field, unescaped, comes before the real field: the last wins.
        let named = try #require(NodeTree.parse("{TARGETENTRY :resname :resorigcol :resorigcol 3}"))
        #expect(named["resorigcol"]?.int == 3)
    }

    @Test func whatIsNotATreeReadsAsNothing() {
        let text = Self.rule
        var index = text.startIndex
        var count = 0
        while index < text.endIndex {
            // Every prefix is cut short somewhere: never a tree, never a crash.
            #expect(Catalog.ViewSource(rule: String(text[..<index]), relations: Self.relations, equalityOperators: [96]) == nil)
            index = text.index(index, offsetBy: 13, limitedBy: text.endIndex) ?? text.endIndex
            count += 1
        }
        #expect(count > 300)
        for broken in ["", "(", ")", "{", "{}", "({QUERY :a (1 2}", "({QUERY})", "(<>)", "({QUERY :targetList ({TARGETENTRY})})"] {
            let source = Catalog.ViewSource(rule: broken, relations: Self.relations, equalityOperators: [96])
            #expect(source == nil || source?.columns.isEmpty == true, "\(broken)")
        }
        // Nesting deeper than the limit is no tree.
        let deep = String(repeating: "(", count: 1000) + String(repeating: ")", count: 1000)
        #expect(NodeTree.parse(deep) == nil)
    }
}
