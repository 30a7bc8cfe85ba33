import RelatePostgres

/// The model's tables as a feed checks them: what a notification or a relation message says
/// is a hint of which table to look at, never the answer. Whether a table changed is decided
/// by the catalog, for the model's own table: the oid its name had when the feed started
/// (pinned once, one query), its name and its columns now, against the model's.
///
/// A forged or garbled hint (another table's oid, an unknown name, nonsense) makes the feed
/// look at a table of the model that did not change, and answer nothing.
final class TrackedTables {
    struct Table {
        var schema: String
        var name: String
        /// The model's columns (generated ones apart: neither the triggers nor pgoutput send them).
        var columns: [String]
        /// The model's key columns.
        var primaryKey: [String]
        /// Whether the triggers send that key: they know the catalog's keys, not an
        /// override's (the table is then read again whole).
        var triggersSendKey: Bool
        /// The oid the table had when the feed started; `nil` when there was none by that name.
        var oid: Int?
    }

    private(set) var tables: [Table]
    private var byName: [QualifiedName: Int] = [:]
    private var byOID: [Int: Int] = [:]

    /// The model's tables, their oids read on `connection` (one query).
    init(layout: ModelLayout, pinningOn connection: Connection) throws {
        tables = layout.model.entities.map {
            Table(
                schema: $0.schema, name: $0.table, columns: $0.attributes.filter { !$0.isGenerated }.map(\.name),
                primaryKey: $0.primaryKey, triggersSendKey: $0.keySource != .override, oid: nil)
        }
        for (index, table) in tables.enumerated() { byName[QualifiedName(table.schema, table.name)] = index }
        let result = try connection.query(Self.pinSQL, [tables.map(\.schema), tables.map(\.name)])
        for row in result {
            let index = try row.decode(Int.self, at: 0) - 1
            let oid = try row.decode(Int.self, at: 1)
            guard tables.indices.contains(index) else { continue }
            tables[index].oid = oid
            byOID[oid] = index
        }
    }

    /// The model's table of that schema and name.
    func index(schema: String, table: String) -> Int? {
        byName[QualifiedName(schema, table)]
    }

    /// The model's table whose oid, when the feed started, was `oid`.
    func index(oid: Int) -> Int? {
        byOID[oid]
    }

    /// Which of `candidates` (indexes into `tables`) are no longer as the model has them, and
    /// what they are now: one query on `connection`, by the pinned oids.
    func altered(_ candidates: Set<Int>, on connection: Connection) throws -> [Int: String] {
        guard !candidates.isEmpty else { return [:] }
        var altered: [Int: String] = [:]
        var oids: [Int] = []
        for index in candidates {
            if let oid = tables[index].oid { oids.append(oid) } else { altered[index] = "it did not exist when tracking began" }
        }
        guard !oids.isEmpty else { return altered }
        var now: [Int: (schema: String, name: String, columns: [String])] = [:]
        for row in try connection.query(Self.tablesSQL, [oids]) {
            now[try row.decode(Int.self, at: 0)] = (
                try row.decode(String.self, at: 1), try row.decode(String.self, at: 2), try row.decode([String].self, at: 3)
            )
        }
        for index in candidates {
            let table = tables[index]
            guard let oid = table.oid else { continue }
            guard let current = now[oid] else {
                altered[index] = "it no longer exists"
                continue
            }
            if current.schema != table.schema || current.name != table.name {
                altered[index] = "it is now named \(current.schema).\(current.name)"
            } else if current.columns != table.columns {
                altered[index] = "its columns are now \(current.columns.joined(separator: ", "))"
            }
        }
        return altered
    }

    /// Each table's position (1-based) in the arrays `$1` (schemas) and `$2` (names) with its
    /// oid, for those that exist.
    static let pinSQL = """
        SELECT t.position::int8, c.oid::int8
          FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(schema, name, position)
          JOIN pg_namespace n ON n.nspname = t.schema
          JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.name
        """

    /// The tables of the oids `$1`, as they are now: schema, name and columns (generated ones
    /// apart) in order. A dropped table answers nothing.
    static let tablesSQL = """
        SELECT c.oid::int8, n.nspname::text, c.relname::text,
               array(SELECT a.attname::text FROM pg_attribute a
                      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
                      ORDER BY a.attnum)
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.oid = ANY($1::int8[]::oid[])
        """
}
