extension Catalog {
    /// What a view's (or materialized view's) query says about where its rows come from,
    /// as the server parsed it (its `_RETURN` rule): the relations its `FROM` reads, the
    /// column of one of them each view column is (where it is a plain reference), the
    /// equalities its joins and `WHERE` hold every row to, and what makes its rows other
    /// than the rows of those relations (aggregates, `DISTINCT`…). The model gives a view
    /// a key and relationships from it (see <doc:Relationships>).
    public struct ViewSource: Sendable, Codable, Hashable {
        /// The relations the query's `FROM` reads (tables, views…), in the order it names them.
        public var relations: [Relation]
        /// For each of the view's columns, in order: the relation's column it is a plain
        /// reference to (`SELECT e.id AS email_id`), or `nil` (an expression, an aggregate,
        /// a column of a subquery).
        public var columns: [ColumnReference?]
        /// Equalities every row of the view meets (`JOIN … ON p.id = e.person_id`,
        /// `WHERE region = '84'`), each pinning a relation's column to another relation's
        /// column or to a constant; an outer join's condition pins only its nullable side.
        public var equalities: [Equality]
        /// What the query does besides reading and joining rows.
        public var features: Features

        /// Describes a view's query by hand.
        ///
        /// - Parameters:
        ///   - relations: The relations its `FROM` reads.
        ///   - columns: For each view column, the relation column it is, if any.
        ///   - equalities: The equalities every row meets.
        ///   - features: What else the query does; nothing by default.
        public init(relations: [Relation], columns: [ColumnReference?], equalities: [Equality] = [], features: Features = []) {
            self.relations = relations
            self.columns = columns
            self.equalities = equalities
            self.features = features
        }

        /// A relation a view reads.
        public struct Relation: Sendable, Codable, Hashable {
            /// The table (or view) read.
            public var table: TableName
            /// Whether it is on the nullable side of an outer join (`LEFT JOIN` it): its
            /// columns may be NULL in the view's rows.
            public var isNullable: Bool
            /// Whether the view reads the rows of the tables that inherit from it too (no
            /// `ONLY` in its `FROM`); `nil` when not known.
            public var readsDescendants: Bool?

            /// Names a relation a view reads.
            ///
            /// - Parameters:
            ///   - table: The table read.
            ///   - isNullable: Whether an outer join may leave its columns NULL.
            public init(table: TableName, isNullable: Bool = false) {
                self.table = table
                self.isNullable = isNullable
            }
        }

        /// A column of one of the relations a view reads.
        public struct ColumnReference: Sendable, Codable, Hashable {
            /// The relation's position in ``ViewSource/relations``.
            public var relation: Int
            /// The column's name in that relation.
            public var column: String

            /// Names a column of a relation a view reads.
            ///
            /// - Parameters:
            ///   - relation: The relation's position in ``ViewSource/relations``.
            ///   - column: The column's name.
            public init(relation: Int, column: String) {
                self.relation = relation
                self.column = column
            }
        }

        /// An equality a view's rows meet: ``column`` equals ``equals`` (another relation's
        /// column), or a constant when ``equals`` is `nil`. Once the row of `equals`'s
        /// relation is known, `column` is too.
        public struct Equality: Sendable, Codable, Hashable {
            /// The column pinned.
            public var column: ColumnReference
            /// What pins it: a column, or `nil` for a constant.
            public var equals: ColumnReference?

            /// Describes an equality by hand.
            ///
            /// - Parameters:
            ///   - column: The column pinned.
            ///   - equals: The column it equals, or `nil` for a constant.
            public init(_ column: ColumnReference, equals: ColumnReference?) {
                self.column = column
                self.equals = equals
            }
        }

        /// What a view's query does besides reading and joining rows; each of these but
        /// ``windowFunctions`` leaves the view without an inferred key.
        public struct Features: OptionSet, Sendable, Codable, Hashable {
            /// The bits.
            public let rawValue: Int

            /// Makes a set of features from their bits.
            ///
            /// - Parameter rawValue: The bits.
            public init(rawValue: Int) {
                self.rawValue = rawValue
            }

            /// Aggregates, `GROUP BY`, grouping sets or `HAVING`: a row stands for many.
            public static let aggregates = Features(rawValue: 1)
            /// `DISTINCT` or `DISTINCT ON`.
            public static let distinct = Features(rawValue: 2)
            /// `UNION`, `INTERSECT` or `EXCEPT`.
            public static let setOperation = Features(rawValue: 4)
            /// A set-returning function in the select list: one row becomes several.
            public static let setReturningFunctions = Features(rawValue: 8)
            /// Something other than a table or view in `FROM` (a subquery, a function,
            /// `VALUES`, a `WITH` query), or a join kind Relate does not follow (`FULL JOIN`).
            public static let otherSources = Features(rawValue: 16)
            /// Window functions, which neither merge nor repeat rows.
            public static let windowFunctions = Features(rawValue: 32)

            /// The features after which a view's rows are no longer one a row of a relation.
            public static let unkeyed: Features = [.aggregates, .distinct, .setOperation, .setReturningFunctions, .otherSources]

            /// The features' names, for `relate inspect`.
            public var names: [String] {
                [
                    (Features.aggregates, "aggregates"), (.distinct, "distinct"), (.setOperation, "set operation"),
                    (.setReturningFunctions, "set-returning functions"), (.otherSources, "other sources"),
                    (.windowFunctions, "window functions"),
                ].filter { contains($0.0) }.map(\.1)
            }
        }
    }
}

/// A relation a view's rule depends on: its name and its columns by number (a dropped
/// column is an empty name).
struct DependedRelation {
    var table: Catalog.TableName
    var columns: [String]

    func column(_ number: Int) -> String? {
        columns.indices.contains(number - 1) && !columns[number - 1].isEmpty ? columns[number - 1] : nil
    }
}

extension Catalog.ViewSource {
    /// The fields of the query's nodes read; the rest (aliases, privileges, sort clauses…)
    /// are skipped unbuilt.
    static let fieldsRead: Set<String> = [
        "hasAggs", "groupClause", "groupingSets", "havingQual", "distinctClause", "hasDistinctOn", "setOperations",
        "hasTargetSRFs", "hasWindowFuncs", "rtable", "rtekind", "relid", "inh", "joinaliasvars", "jointree", "fromlist", "quals",
        "larg", "rarg", "jointype", "rtindex", "boolop", "args", "opno", "constisnull", "arg", "varlevelsup", "varno",
        "varattno", "targetList", "resjunk", "resno", "expr", "resorigtbl", "resorigcol",
    ]

    /// Reads a view's `_RETURN` rule (`pg_rewrite.ev_action` as text). A column's lineage is
    /// the server's own (`resorigtbl`/`resorigcol` of its target entry), taken only where
    /// the entry is a plain column of a relation in the view's own `FROM` (so a self-join's
    /// two sides stay apart). `nil` when the text is not one query as expected.
    ///
    /// - Parameters:
    ///   - rule: The rule's action, as text.
    ///   - relations: The relations the rule depends on, by oid.
    ///   - equalityOperators: The oids of the operators that are a B-tree's equality.
    init?(rule: String, relations known: [Int: DependedRelation], equalityOperators: Set<Int>) {
        guard case .list(let queries)? = NodeTree.parse(rule, fields: Self.fieldsRead), queries.count == 1, queries[0].name == "QUERY"
        else { return nil }
        let query = queries[0]
        var features: Features = []
        if query["hasAggs"]?.bool == true || query["groupClause"]?.isPresent == true || query["groupingSets"]?.isPresent == true
            || query["havingQual"]?.isPresent == true
        {
            features.insert(.aggregates)
        }
        if query["distinctClause"]?.isPresent == true || query["hasDistinctOn"]?.bool == true { features.insert(.distinct) }
        if query["setOperations"]?.isPresent == true { features.insert(.setOperation) }
        if query["hasTargetSRFs"]?.bool == true { features.insert(.setReturningFunctions) }
        if query["hasWindowFuncs"]?.bool == true { features.insert(.windowFunctions) }

        let rtable = query["rtable"]?.items ?? []
        var relations: [Relation] = []
        var oids: [Int] = []
        var relationAt: [Int: Int] = [:]  // range table index → position in relations
        var equalities: [Equality] = []

        func entry(_ index: Int) -> NodeTree? {
            rtable.indices.contains(index - 1) ? rtable[index - 1] : nil
        }
        // A Var of this query, through join aliases, to a relation's column.
        func reference(_ expression: NodeTree, depth: Int = 0) -> (ColumnReference, oid: Int, number: Int)? {
            guard depth < 32 else { return nil }
            if expression.name == "RELABELTYPE", let argument = expression["arg"] { return reference(argument, depth: depth + 1) }
            guard expression.name == "VAR", expression["varlevelsup"]?.int == 0, let number = expression["varno"]?.int,
                let column = expression["varattno"]?.int, let rte = entry(number)
            else { return nil }
            switch rte["rtekind"]?.int {
            case 0:
                guard let position = relationAt[number], let name = known[oids[position]]?.column(column) else { return nil }
                return (ColumnReference(relation: position, column: name), oids[position], column)
            case 2:
                let aliases = rte["joinaliasvars"]?.items ?? []
                guard aliases.indices.contains(column - 1) else { return nil }
                return reference(aliases[column - 1], depth: depth + 1)
            default:
                return nil
            }
        }
        // The conjuncts of a condition that are equalities of a column with a column or a
        // constant; a column pinned only where its relation is one `pins` names.
        func collect(_ condition: NodeTree, pins: Set<Int>) {
            if condition.name == "BOOLEXPR", condition["boolop"]?.text == "and" {
                for argument in condition["args"]?.items ?? [] { collect(argument, pins: pins) }
                return
            }
            guard condition.name == "OPEXPR", let opno = condition["opno"]?.int, equalityOperators.contains(opno) else { return }
            let arguments = condition["args"]?.items ?? []
            guard arguments.count == 2 else { return }
            let sides = arguments.map { reference($0)?.0 }
            let constant = arguments.map { $0.name == "CONST" && $0["constisnull"]?.bool == false }
            for (this, other) in [(0, 1), (1, 0)] {
                guard let column = sides[this], pins.contains(column.relation) else { continue }
                if let equals = sides[other] {
                    equalities.append(Equality(column, equals: equals))
                } else if constant[other] {
                    equalities.append(Equality(column, equals: nil))
                }
            }
        }
        // The relations under a join tree item; `nullable` when an outer join above may
        // leave them NULL.
        func walk(_ item: NodeTree, nullable: Bool, depth: Int = 0) -> Set<Int> {
            guard depth < 64 else {
                features.insert(.otherSources)
                return []
            }
            switch item.name {
            case "RANGETBLREF":
                guard let index = item["rtindex"]?.int, let rte = entry(index), rte["rtekind"]?.int == 0,
                    let oid = rte["relid"]?.int, let relation = known[oid]
                else {
                    features.insert(.otherSources)
                    return []
                }
                relationAt[index] = relations.count
                var read = Relation(table: relation.table, isNullable: nullable)
                read.readsDescendants = rte["inh"]?.bool
                relations.append(read)
                oids.append(oid)
                return [relations.count - 1]
            case "FROMEXPR":
                var under = Set<Int>()
                for member in item["fromlist"]?.items ?? [] { under.formUnion(walk(member, nullable: nullable, depth: depth + 1)) }
                if let quals = item["quals"] { collect(quals, pins: under) }
                return under
            case "JOINEXPR":
                guard let left = item["larg"], let right = item["rarg"] else {
                    features.insert(.otherSources)
                    return []
                }
                // 0 inner, 1 left, 2 full, 3 right (JoinType).
                let kind = item["jointype"]?.int
                let leftSide = walk(left, nullable: nullable || kind == 2 || kind == 3, depth: depth + 1)
                let rightSide = walk(right, nullable: nullable || kind == 1 || kind == 2, depth: depth + 1)
                switch kind {
                case 0: if let quals = item["quals"] { collect(quals, pins: leftSide.union(rightSide)) }
                case 1: if let quals = item["quals"] { collect(quals, pins: rightSide) }
                case 3: if let quals = item["quals"] { collect(quals, pins: leftSide) }
                default: features.insert(.otherSources)
                }
                return leftSide.union(rightSide)
            default:
                features.insert(.otherSources)
                return []
            }
        }
        if let tree = query["jointree"] { _ = walk(tree, nullable: false) }

        var columns: [(number: Int, reference: ColumnReference?)] = []
        for target in query["targetList"]?.items ?? [] where target["resjunk"]?.bool == false {
            guard let number = target["resno"]?.int, let expression = target["expr"] else { return nil }
            var lineage: ColumnReference? = nil
            // The server's own lineage, where it is a column of a relation of this FROM.
            if let found = reference(expression), target["resorigtbl"]?.int == found.oid, target["resorigcol"]?.int == found.number {
                lineage = found.0
            }
            columns.append((number, lineage))
        }
        self.init(
            relations: relations, columns: columns.sorted { $0.number < $1.number }.map(\.reference), equalities: equalities,
            features: features)
    }
}
