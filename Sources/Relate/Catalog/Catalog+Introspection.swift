import RelatePostgres

extension Catalog {
    /// Reads the catalog of `schemas` (default: the connection's `search_path`) in one
    /// round trip: queries sent together in a pipeline, whatever the number of tables.
    /// The first finds the tables to read and leaves their oids in a setting local to the
    /// pipeline's transaction (`relate.catalog_scope`) for the others, which read columns,
    /// unique keys, foreign keys, enum labels and views' queries: the scope is planned and
    /// run once, not once a query (parsing and planning were most of a small catalog's cost).
    /// A view's query (its rule, as the server parsed it) says where its rows and columns
    /// come from (``Catalog/Table/viewSource``).
    ///
    /// Tables referenced by a foreign key from those schemas are read too, wherever they
    /// live, so a cross-schema relationship has both ends. Partitions are folded into their
    /// root: a foreign key counts as the root's when every leaf partition carries it,
    /// declared on the leaf or on a partition above it (a partitioned table without
    /// partitions is no leaf); one that references a partition refers to its root. Needs
    /// PostgreSQL 12 or later.
    ///
    /// ```swift
    /// let catalog = try Catalog.introspect(connection, schemas: ["public", "billing"])
    /// let model = try Model(catalog: catalog)
    /// ```
    ///
    /// - Parameters:
    ///   - connection: A connection to the database, as a role that can see the tables.
    ///   - schemas: The schemas to read, in search order; `nil` for the connection's `search_path`.
    /// - Returns: The tables of those schemas, and the tables their foreign keys reference.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/unknownSchema`` for a
    ///   schema the server does not have; a `PostgresError` when the catalog cannot be read.
    public static func introspect(_ connection: Connection, schemas: [String]? = nil) throws -> Catalog {
        let parameter: [(any PostgresEncodable)?] = [schemas]
        var statements = [
            PostgresStatement(Self.scopeQuery, parameter),
            PostgresStatement(Self.relationsQuery, format: .binary),
            PostgresStatement(Self.uniqueKeysQuery, format: .binary),
            PostgresStatement(Self.foreignKeysQuery, format: .binary),
            PostgresStatement(Self.enumLabelsQuery, format: .binary),
            PostgresStatement(Self.viewRulesQuery, format: .binary),
            PostgresStatement(Self.viewRelationsQuery, format: .binary),
            PostgresStatement(Self.compositeTypesQuery, format: .binary),
        ]
        // On a large catalog the planner's estimates pass jit_above_cost, and compiling the
        // queries took longer than running them (2.4 s of 3.3 for 10,000 tables); the
        // columns' sort spilled to disk under the default work_mem. A pipeline is one
        // implicit transaction, so local settings end with it; inside the caller's own
        // transaction they would outlive the read, so they are left alone there.
        let tuned = !connection.isInTransaction
        if tuned {
            statements.insert(PostgresStatement("SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true)"), at: 0)
        }
        let results = Array(try connection.pipeline(statements).dropFirst(tuned ? 1 : 0))
        let searched = try results[0][0].decode([String].self, at: 0)
        let existing = try results[0][0].decode([String].self, at: 1)
        if let missing = searched.first(where: { !existing.contains($0) }), schemas != nil {
            let nearest = RelateError.nearestNames(to: missing, in: existing)
            throw RelateError(
                kind: .unknownSchema,
                message: "the database has no schema \"\(missing)\""
                    + (nearest.isEmpty ? "; it has: \(existing.joined(separator: ", "))" : "; did you mean \(nearest.map { "\"\($0)\"" }.joined(separator: " or "))?"),
                key: missing, candidates: nearest)
        }

        struct Relation {
            var table: Table
            /// A partitioned table's leaf partitions (a partitioned table without
            /// partitions of its own is none).
            var leaves: Set<Int>
        }
        // The labels of the enum types the columns have (for typed models).
        var enumLabels: [Int: [String]] = [:]
        for row in results[4] {
            enumLabels[try row.decode(Int.self, at: 0)] = try row.decode([String].self, at: 1)
        }
        let composites = try compositeTypes(results[7])
        var relations: [Int: Relation] = [:]
        for row in results[1] {
            let names = try row.decode([String].self, at: 4)
            let types = try row.decode([String].self, at: 5)
            let oids = try row.decode([Int].self, at: 6)
            let notNull = try row.decode([Bool].self, at: 7)
            let defaults = try row.decode([String?].self, at: 8)
            let identity = try row.decode([Bool].self, at: 9)
            let generated = try row.decode([Bool].self, at: 10)
            let modifiers = try row.decode([Int].self, at: 14)
            let domainNotNull = try row.decode([Bool].self, at: 15)
            let readsAs = try row.decode([String?].self, at: 17)
            let arrayTypes = try row.decode([String?].self, at: 18)
            let collations = try row.decode([String?].self, at: 19)
            let comparedAsText = try row.decode([Bool].self, at: 22)
            let deterministic = try row.decode([Bool].self, at: 24)
            let byImage = try row.decode([Bool].self, at: 25)
            let collationNames = try row.decode([String?].self, at: 26)
            let columns = names.indices.map { index in
                // A domain's NOT NULL refuses NULL as the column's own does.
                var column = Column(
                    name: names[index], type: types[index], typeOID: UInt32(truncatingIfNeeded: oids[index]),
                    isNullable: !notNull[index] && !domainNotNull[index], defaultValue: defaults[index], isIdentity: identity[index],
                    isGenerated: generated[index], enumLabels: enumLabels[oids[index]],
                    typeModifier: modifiers[index] < 0 ? nil : Int32(truncatingIfNeeded: modifiers[index]))
                column.composite = composites[UInt32(truncatingIfNeeded: oids[index])]
                column.readsAs = readsAs[index]
                column.arrayType = arrayTypes[index]
                column.collation = collations[index]
                column.comparesAsText = comparedAsText[index]
                column.collationIsDeterministic = deterministic[index]
                column.equalityIsByImage = byImage[index]
                column.collationName = collationNames[index]
                return column
            }
            let kind: Table.Kind =
                switch try row.decode(String.self, at: 3) {
                case "p": .partitionedTable
                case "v": .view
                case "m": .materializedView
                case "f": .foreignTable
                default: .table
                }
            var table = Table(
                schema: try row.decode(String.self, at: 1), name: try row.decode(String.self, at: 2), kind: kind,
                columns: columns)
            if let parent = try row.decode([String]?.self, at: 12), parent.count == 2 {
                table.parent = TableName(schema: parent[0], name: parent[1])
            }
            table.allowedWrites = WriteOperations(rawValue: try row.decode(Int.self, at: 13))
            table.rewritesUpdates = try row.decode(Bool.self, at: 16)
            table.writesWithoutReturning = WriteOperations(rawValue: try row.decode(Int.self, at: 23))
            table.dropsInserts = try row.decode(Bool.self, at: 27)
            if let schemas = try row.decode([String]?.self, at: 20), let names = try row.decode([String]?.self, at: 21) {
                table.children = zip(schemas, names).map { TableName(schema: $0, name: $1) }
            }
            relations[try row.decode(Int.self, at: 0)] = Relation(table: table, leaves: Set(try row.decode([Int].self, at: 11)))
        }

        for row in results[2] {
            let oid = try row.decode(Int.self, at: 0)
            let columns = try row.decode([String].self, at: 3)
            var key = UniqueKey(name: try row.decode(String.self, at: 1), columns: columns, isConstraint: try row.decode(Bool.self, at: 4))
            if try row.decode(Bool.self, at: 6) { key.nullsNotDistinct = true }
            if try row.decode(Bool.self, at: 5) {
                // A partial index is no key: only the order of a save's writes heeds it.
                key.predicateColumns = (try row.decode([String]?.self, at: 7) ?? []).filter { !columns.contains($0) }
                let keys = (relations[oid]?.table.partialUniqueKeys ?? []) + [key]
                relations[oid]?.table.partialUniqueKeys = keys
            } else if try row.decode(Bool.self, at: 2) {
                relations[oid]?.table.primaryKey = columns
            } else {
                relations[oid]?.table.uniqueKeys.append(key)
            }
        }

        // Keys declared on partitions wait until every declaration is read: a key is the
        // root's when the leaves its declarations cover, together, are all of the root's.
        var declarations: [PartitionKey: [(key: ForeignKey, leaves: [Int])]] = [:]
        var order: [PartitionKey] = []
        for row in results[3] {
            let key = ForeignKey(
                name: try row.decode(String.self, at: 0), columns: try row.decode([String].self, at: 3),
                referencedSchema: try row.decode(String.self, at: 4), referencedTable: try row.decode(String.self, at: 5),
                referencedColumns: try row.decode([String].self, at: 6),
                onDelete: try action(row.decode(String.self, at: 7)), onUpdate: try action(row.decode(String.self, at: 8)),
                isDeferrable: try row.decode(Bool.self, at: 9), isInitiallyDeferred: try row.decode(Bool.self, at: 10),
                onDeleteSetColumns: try row.decode([String]?.self, at: 12))
            let root = try row.decode(Int.self, at: 1)
            // A table read only because a foreign key points at it is an end, never a
            // source: its own foreign keys are not inferred (DESIGN, inference rule 4).
            guard let source = relations[root], searched.contains(source.table.schema) else { continue }
            if try row.decode(Bool.self, at: 2) {
                let group = PartitionKey(root: root, key: key)
                if declarations[group] == nil { order.append(group) }
                declarations[group, default: []].append((key, try row.decode([Int].self, at: 11)))
            } else {
                relations[root]?.table.foreignKeys.append(key)
            }
        }
        for group in order {
            guard let relation = relations[group.root], !relation.leaves.isEmpty, let declared = declarations[group],
                let first = declared.first?.key
            else { continue }
            let covered = Set(declared.flatMap(\.leaves))
            guard relation.leaves.isSubset(of: covered) else { continue }
            var key = first
            key.onDeleteVaries = declared.contains { $0.key.onDelete != first.onDelete }
            relations[group.root]?.table.foreignKeys.append(key)
        }

        // Each view's query, as the server parsed it: where its rows and columns come from.
        var depended: [Int: DependedRelation] = [:]
        for row in results[6] {
            depended[try row.decode(Int.self, at: 0)] = DependedRelation(
                table: TableName(schema: try row.decode(String.self, at: 1), name: try row.decode(String.self, at: 2)),
                columns: try row.decode([String].self, at: 3))
        }
        for row in results[5] {
            let oid = try row.decode(Int.self, at: 0)
            guard let view = relations[oid]?.table,
                let source = ViewSource(
                    rule: try row.decode(String.self, at: 1), relations: depended,
                    equalityOperators: Set(try row.decode([Int].self, at: 2))),
                source.columns.count == view.columns.count
            else { continue }
            relations[oid]?.table.viewSource = source
        }

        let tables = relations.values.map(\.table).sorted { ($0.schema, $0.name) < ($1.schema, $1.name) }
        return Catalog(schemas: searched, tables: tables)
    }

    private static func action(_ code: String) throws -> ForeignKey.Action {
        switch code {
        case "a": return .noAction
        case "r": return .restrict
        case "c": return .cascade
        case "n": return .setNull
        case "d": return .setDefault
        default: throw PostgresError(kind: .decoding, message: "unknown foreign key action '\(code)'")
        }
    }

    // MARK: - The queries

    /// The schemas asked for (`$1`, a `text[]`, or NULL: the search path) and the schemas
    /// there are; and, in `relate.catalog_scope`, the tables to read: the ones in those
    /// schemas plus the ones their foreign keys reference (partitions as their root).
    static let scopeQuery = """
        WITH wanted AS (
          SELECT s.name
          FROM unnest(coalesce($1::text[], current_schemas(false)::text[])) AS s(name)
          -- Relate's own objects (change tracking) are never part of a model.
          WHERE s.name <> 'relate_tracking'
        ),
        in_schemas AS (
          SELECT c.oid
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN wanted w ON w.name = n.nspname
          WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
        )
        SELECT coalesce($1::text[], current_schemas(false)::text[]),
          array(SELECT nspname::text FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' ORDER BY 1),
          set_config('relate.catalog_scope', array(
            SELECT oid FROM in_schemas i JOIN pg_class c USING (oid) WHERE NOT c.relispartition
            UNION
            SELECT fk.target FROM \(foreignKeys) JOIN in_schemas i ON i.oid = fk.source
          )::text, true) IS NOT NULL
        """

    /// Every foreign key, declared on a table or a partition (not the copies PostgreSQL
    /// makes on the partitions below), with the roots of both ends.
    private static let foreignKeys = """
        (SELECT con.oid, c.relispartition AS on_partition,
                CASE WHEN c.relispartition THEN pg_partition_root(c.oid) ELSE c.oid END AS source,
                CASE WHEN t.relispartition THEN pg_partition_root(t.oid) ELSE t.oid END AS target
         FROM pg_constraint con
         JOIN pg_class c ON c.oid = con.conrelid
         JOIN pg_class t ON t.oid = con.confrelid
         WHERE con.contype = 'f' AND con.conparentid = 0) AS fk
        """

    /// The tables `scopeQuery` chose.
    private static let included = "unnest(current_setting('relate.catalog_scope')::oid[]) AS i(oid)"

    /// Each domain's type at the bottom of its chain (a domain over a domain over `int4`:
    /// `int4`, as the results report it), the nearest type modifier along the chain, and
    /// whether a domain on the way is `NOT NULL`. The start of the queries that ask for it.
    static let domainBottoms = """
        WITH RECURSIVE chain(oid, base, typmod, not_null) AS (
            SELECT t.oid, t.typbasetype, t.typtypmod, t.typnotnull FROM pg_type t WHERE t.typtype = 'd'
          UNION ALL
            SELECT c.oid, b.typbasetype, CASE WHEN c.typmod = -1 THEN b.typtypmod ELSE c.typmod END, c.not_null OR b.typnotnull
              FROM chain c JOIN pg_type b ON b.oid = c.base AND b.typtype = 'd'
        ), bottom AS (
            SELECT c.oid, c.base, c.typmod, c.not_null FROM chain c JOIN pg_type b ON b.oid = c.base WHERE b.typtype <> 'd'
        )
        """

    static let relationsQuery = """
        \(domainBottoms)
        SELECT c.oid::int8, n.nspname::text, c.relname::text, c.relkind::text,
          coalesce(array_agg(a.attname::text ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          coalesce(array_agg(CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN e.typname::text || '[]' ELSE t.typname::text END
                             ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          coalesce(array_agg(coalesce(db.base, nullif(eb.typarray, 0), t.oid)::int8 ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          coalesce(array_agg(a.attnotnull ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          coalesce(array_agg(pg_get_expr(d.adbin, d.adrelid) ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          coalesce(array_agg(a.attidentity <> '' ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          coalesce(array_agg(a.attgenerated <> '' ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          CASE WHEN c.relkind = 'p' THEN array(SELECT p.relid::int8 FROM pg_partition_tree(c.oid) p WHERE p.isleaf ORDER BY 1)
               ELSE '{}'::int8[] END,
          -- The first table an INHERITS clause names (a partition's parent is partitioned).
          (SELECT ARRAY[pn.nspname::text, pc.relname::text]
             FROM pg_inherits h JOIN pg_class pc ON pc.oid = h.inhparent JOIN pg_namespace pn ON pn.oid = pc.relnamespace
            WHERE h.inhrelid = c.oid AND h.inhseqno = 1 AND pc.relkind <> 'p'),
          -- What a view (its INSTEAD OF triggers and rules counted), a materialized view
          -- (nothing) or a foreign table takes; a table takes everything.
          (CASE WHEN c.relkind IN ('v', 'm', 'f') THEN pg_relation_is_updatable(c.oid, true) ELSE 28 END)::int8,
          coalesce(array_agg((CASE WHEN t.typtype = 'd' THEN db.typmod ELSE a.atttypmod END)::int8 ORDER BY a.attnum)
                   FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          coalesce(array_agg(coalesce(db.not_null, false) ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- Whether an UPDATE may store other than it sends: a BEFORE UPDATE row trigger
          -- (tgtype bits ROW 1, BEFORE 2, UPDATE 16) not disabled, a rule, tables below it
          -- (their own triggers run), or a relation that is not a plain table.
          c.relkind <> 'r' OR c.relhasrules OR c.relhassubclass
            OR EXISTS (SELECT FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgenabled <> 'D' AND g.tgtype & 19 = 19),
          -- An array of a domain reads as the array of the domain's base type.
          coalesce(array_agg(format_type(nullif(eb.typarray, 0), NULL) ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- An array's type by its element's qualified name, which values compared with it are cast to.
          coalesce(array_agg(CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN format('%I.%I[]', en.nspname, e.typname) END
                             ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- The collation text compares by, qualified and quoted; NULL where that is by code
          -- points (C, POSIX; the database's default when it is one of them) or no collation.
          coalesce(array_agg(CASE WHEN a.attcollation = 0 THEN NULL
                                  WHEN a.attcollation = 100 THEN (SELECT CASE WHEN coalesce(to_jsonb(db) ->> 'datlocprovider', 'c') = 'c'
                                                                               AND db.datcollate IN ('C', 'POSIX') THEN NULL
                                                                          ELSE 'pg_catalog."default"' END
                                                                   FROM pg_database db WHERE db.datname = current_database())
                                  ELSE (SELECT CASE WHEN co.collprovider = 'c' AND co.collcollate IN ('C', 'POSIX') THEN NULL
                                                    ELSE format('%I.%I', cn.nspname, co.collname) END
                                          FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                                         WHERE co.oid = a.attcollation) END
                             ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- The tables that inherit from it (a partitioned table's partitions are its rows).
          -- Their schemas and names, in the same order.
          CASE WHEN c.relkind = 'r' AND c.relhassubclass THEN
            array(SELECT kn.nspname::text FROM pg_inherits h JOIN pg_class k ON k.oid = h.inhrelid
                    JOIN pg_namespace kn ON kn.oid = k.relnamespace WHERE h.inhparent = c.oid ORDER BY h.inhrelid) END,
          CASE WHEN c.relkind = 'r' AND c.relhassubclass THEN
            array(SELECT k.relname::text FROM pg_inherits h JOIN pg_class k ON k.oid = h.inhrelid
                   WHERE h.inhparent = c.oid ORDER BY h.inhrelid) END,
          -- Whether its type (an array's element; a domain's bottom) has no B-tree equality of
          -- its own (xml, point, box: none, or one by area): a value is compared by its text.
          -- A type binary-coercible to one that has, implicitly (varchar to text), has its
          -- equality; so do enums, ranges and multiranges (their opclasses are polymorphic).
          coalesce(array_agg(coalesce(et.typtype, bt.typtype, t.typtype) NOT IN ('e', 'r', 'm') AND NOT EXISTS (
              SELECT FROM pg_opclass o JOIN pg_am m ON m.oid = o.opcmethod
               CROSS JOIN LATERAL (SELECT coalesce(de.base, CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem END, db.base, t.oid)) AS x(type)
               WHERE m.amname = 'btree' AND o.opcdefault
                 AND (o.opcintype = x.type
                      OR EXISTS (SELECT FROM pg_cast k WHERE k.castsource = x.type AND k.casttarget = o.opcintype
                                                  AND k.castmethod = 'b' AND k.castcontext = 'i')))
            ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- The writes an INSTEAD rule takes with no RETURNING in any of its actions
          -- (ev_type 3 insert, 2 update, 4 delete; bits as pg_relation_is_updatable's).
          (SELECT coalesce(sum(DISTINCT CASE r.ev_type WHEN '3' THEN 8 WHEN '2' THEN 4 ELSE 16 END), 0)::int8
             FROM pg_rewrite r
            WHERE r.ev_class = c.oid AND r.is_instead AND r.ev_type IN ('2', '3', '4')
              AND r.ev_action::text NOT LIKE '%:returningList ({%'),
          -- Whether its collation tells text apart by its bytes alone (deterministic).
          coalesce(array_agg(coalesce((SELECT co.collisdeterministic FROM pg_collation co WHERE co.oid = a.attcollation), true)
                             ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- Whether values it takes for equal are stored alike (B-tree's equalimage support:
          -- not numeric, interval, float, jsonb, citext; not ranges nor records, whose
          -- classes are polymorphic; an array by its element), under a deterministic
          -- collation: then memory may link by bytes.
          coalesce(array_agg(coalesce((SELECT co.collisdeterministic FROM pg_collation co WHERE co.oid = a.attcollation), true)
              AND (coalesce(et.typtype, bt.typtype, t.typtype) = 'e'
                   OR coalesce(et.typtype, bt.typtype, t.typtype) NOT IN ('r', 'm', 'c') AND coalesce((
                -- The type's own default class, else one it is binary-coercible to (varchar
                -- to text); not the latter where it has its own (citext's, not text's). A
                -- type with none (xml) has no equality to join by: as its bytes.
                SELECT EXISTS (SELECT FROM pg_amproc p WHERE p.amprocfamily = o.opcfamily AND p.amprocnum = 4
                                                         AND p.amproclefttype = o.opcintype AND p.amprocrighttype = o.opcintype)
                  FROM pg_opclass o JOIN pg_am m ON m.oid = o.opcmethod
                 CROSS JOIN LATERAL (SELECT coalesce(de.base, CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem END, db.base, t.oid)) AS x(type)
                 WHERE m.amname = 'btree' AND o.opcdefault
                   AND (o.opcintype = x.type
                        OR EXISTS (SELECT FROM pg_cast k WHERE k.castsource = x.type AND k.casttarget = o.opcintype
                                                    AND k.castmethod = 'b' AND k.castcontext = 'i'))
                 ORDER BY o.opcintype <> x.type
                 LIMIT 1), true))
            ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- The collation it compares by, whichever it is, qualified and quoted; NULL for a
          -- type without one. A join under a foreign key's collation names it.
          coalesce(array_agg((SELECT format('%I.%I', cn.nspname, co.collname) FROM pg_collation co
                                JOIN pg_namespace cn ON cn.oid = co.collnamespace WHERE co.oid = a.attcollation)
                             ORDER BY a.attnum) FILTER (WHERE a.attnum IS NOT NULL), '{}'),
          -- Whether an INSERT may store fewer rows than it sends: a BEFORE INSERT row trigger
          -- (tgtype bits ROW 1, BEFORE 2, INSERT 4) not disabled, on the table or a partition,
          -- may return NULL; a rule may do instead (or nothing).
          c.relhasrules OR EXISTS (
            SELECT FROM pg_trigger g
             WHERE g.tgenabled <> 'D' AND g.tgtype & 7 = 7
               AND (g.tgrelid = c.oid OR (c.relkind = 'p' AND g.tgrelid IN (SELECT p.relid FROM pg_partition_tree(c.oid) p))))
        FROM pg_class c
        JOIN \(included) ON i.oid = c.oid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN bottom db ON db.oid = t.oid
        LEFT JOIN pg_type e ON e.oid = t.typelem
        LEFT JOIN pg_namespace en ON en.oid = e.typnamespace
        LEFT JOIN bottom de ON de.oid = e.oid AND t.typlen = -1
        LEFT JOIN pg_type eb ON eb.oid = de.base
        LEFT JOIN pg_type et ON et.oid = coalesce(de.base, CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem END)
        LEFT JOIN pg_type bt ON bt.oid = db.base
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
        GROUP BY c.oid, n.nspname, c.relname, c.relkind, c.relhasrules, c.relhassubclass
        """

    /// The labels of every enum type a column in scope has, directly, through a domain or
    /// as an array's element (`mood[]`), by the OID the column's results report.
    static let enumLabelsQuery = """
        \(domainBottoms)
        SELECT c.oid::int8, array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
        FROM (SELECT DISTINCT coalesce(db.base, nullif(eb.typarray, 0), t.oid) AS oid,
                CASE WHEN db.base IS NOT NULL THEN db.base WHEN de.base IS NOT NULL THEN de.base
                     WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem ELSE t.oid END AS enum
              FROM pg_attribute a
              JOIN \(included) ON i.oid = a.attrelid
              JOIN pg_type t ON t.oid = a.atttypid
              LEFT JOIN bottom db ON db.oid = t.oid
              LEFT JOIN bottom de ON de.oid = t.typelem AND t.typlen = -1
              LEFT JOIN pg_type eb ON eb.oid = de.base
              WHERE a.attnum > 0 AND NOT a.attisdropped) AS c
        JOIN pg_enum e ON e.enumtypid = c.enum
        GROUP BY 1
        """

    static let uniqueKeysQuery = """
        SELECT x.indrelid::int8, coalesce(con.conname, ic.relname)::text, x.indisprimary,
          array(SELECT a.attname::text
                FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
                JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
                WHERE k.position <= x.indnkeyatts
                ORDER BY k.position),
          con.oid IS NOT NULL, x.indpred IS NOT NULL,
          -- NULLS NOT DISTINCT is PostgreSQL 15's: an older server's pg_index has no such column.
          coalesce((to_jsonb(x) ->> 'indnullsnotdistinct')::bool, false),
          -- A partial index's columns as pg_depend records them: its key's and its predicate's.
          CASE WHEN x.indpred IS NOT NULL THEN array(
            SELECT a.attname::text FROM pg_depend d
            JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = d.refobjsubid
            WHERE d.classid = 'pg_class'::regclass AND d.objid = x.indexrelid AND d.refclassid = 'pg_class'::regclass
              AND d.refobjid = x.indrelid AND d.refobjsubid > 0
            ORDER BY a.attnum) END
        FROM pg_index x
        JOIN \(included) ON i.oid = x.indrelid
        JOIN pg_class ic ON ic.oid = x.indexrelid
        LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.conrelid = x.indrelid AND con.contype IN ('p', 'u')
        -- Valid only: a unique index whose CREATE INDEX CONCURRENTLY failed stays, and
        -- enforces nothing (rows may share its key). Under its columns' own collations and
        -- default operator classes only: one unique by bytes (COLLATE "C") on a column
        -- compared without case lets two rows match one key in a WHERE (as PostgreSQL
        -- refuses such an index for a constraint).
        WHERE x.indisunique AND x.indisvalid AND x.indexprs IS NULL
          AND NOT EXISTS (
            SELECT FROM unnest(x.indkey::int2[], x.indcollation::oid[], x.indclass::oid[]) WITH ORDINALITY AS k(attnum, coll, opclass, position)
            JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
            JOIN pg_opclass oc ON oc.oid = k.opclass
            WHERE k.position <= x.indnkeyatts AND (k.coll <> a.attcollation OR NOT oc.opcdefault))
        ORDER BY x.indrelid, x.indisprimary DESC, 2
        """

    /// Each view's and materialized view's query (its `_RETURN` rule, as text), and the
    /// operators that are a B-tree's equality (which join conditions pin a row).
    static let viewRulesQuery = """
        SELECT r.ev_class::int8, r.ev_action::text,
          array(SELECT DISTINCT o.amopopr::int8 FROM pg_amop o JOIN pg_am m ON m.oid = o.amopmethod
                WHERE m.amname = 'btree' AND o.amopstrategy = 3)
        FROM pg_rewrite r
        JOIN \(included) ON i.oid = r.ev_class
        JOIN pg_class c ON c.oid = r.ev_class
        WHERE r.rulename = '_RETURN' AND c.relkind IN ('v', 'm')
        """

    /// The relations those rules depend on (`pg_depend`), each with its columns by number
    /// (a dropped column's name empty).
    static let viewRelationsQuery = """
        SELECT t.oid::int8, n.nspname::text, t.relname::text,
          array(SELECT CASE WHEN a.attisdropped THEN '' ELSE a.attname::text END
                FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attnum > 0 ORDER BY a.attnum)
        FROM pg_class t
        JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE t.oid IN (SELECT d.refobjid
                        FROM pg_rewrite r
                        JOIN \(included) ON i.oid = r.ev_class
                        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                                        AND d.refclassid = 'pg_class'::regclass
                        WHERE r.rulename = '_RETURN')
        """

    static let foreignKeysQuery = """
        SELECT con.conname::text, fk.source::int8, fk.on_partition,
          array(SELECT a.attname::text
                FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, position)
                JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.position),
          tn.nspname::text, tc.relname::text,
          array(SELECT a.attname::text
                FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, position)
                JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.position),
          con.confdeltype::text, con.confupdtype::text, con.condeferrable, con.condeferred,
          CASE WHEN fk.on_partition THEN array(SELECT p.relid::int8 FROM pg_partition_tree(con.conrelid) p WHERE p.isleaf)
               ELSE '{}'::int8[] END,
          -- `confdelsetcols` came with PostgreSQL 15: read through the row's JSON, so that a
          -- server before it answers NULL (every column of the key) instead of an error.
          (SELECT array_agg(a.attname::text ORDER BY k.position)
           FROM jsonb_array_elements_text(nullif(to_jsonb(con) -> 'confdelsetcols', 'null')) WITH ORDINALITY AS k(attnum, position)
           JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum::int2)
        FROM \(foreignKeys)
        JOIN \(included) ON i.oid = fk.source
        JOIN pg_constraint con ON con.oid = fk.oid
        JOIN pg_class tc ON tc.oid = fk.target
        JOIN pg_namespace tn ON tn.oid = tc.relnamespace
        ORDER BY fk.source, con.conname
        """
}

/// What makes declarations on partitions one key of their root: the root, the columns,
/// the table and columns referenced; not the constraint's name nor its actions.
private struct PartitionKey: Hashable {
    var root: Int
    var columns: [String]
    var referencedSchema: String
    var referencedTable: String
    var referencedColumns: [String]

    init(root: Int, key: Catalog.ForeignKey) {
        self.root = root
        columns = key.columns
        referencedSchema = key.referencedSchema
        referencedTable = key.referencedTable
        referencedColumns = key.referencedColumns
    }
}
