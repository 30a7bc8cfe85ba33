import Foundation
import RelatePostgres

extension ChangeTracking {
    /// How a context learns what other clients commit.
    public enum Mechanism: String, Sendable, CaseIterable {
        /// Relate's statement-level triggers and `NOTIFY` (`relate enable`): any server where
        /// the user may create triggers.
        case triggers
        /// Logical decoding of the write-ahead log with `pgoutput` (`relate enable --logical`):
        /// nothing on the tables; needs `wal_level=logical` and the REPLICATION attribute.
        case logicalDecoding
    }

    /// The publication `enable(logicalDecodingOn:schemas:)` creates.
    public static let publication = "relate_changes"

    /// Creates (or widens) the publication `relate_changes` over every table of `schemas`,
    /// with changes of partitions published as their root's, in one transaction. A table
    /// without a primary key gets a replica identity, without which the server would refuse
    /// its updates and deletes once published: `REPLICA IDENTITY FULL` (the whole old row is
    /// logged), or, when `usingUniqueIndexes` allows it and the table has one, `REPLICA
    /// IDENTITY USING INDEX` the unique key Relate takes as the table's key (see
    /// <doc:Relationships>: a constraint before an index, then fewest columns, then name;
    /// the server also wants it not deferrable, its columns `NOT NULL` themselves), so only
    /// the key's old values are logged. With `fullIdentityUnderRowSecurity`, a table with
    /// row-level security enabled, on itself or on a table it inherits from or is a
    /// partition of, gets `REPLICA IDENTITY FULL` in place of the default identity or of an
    /// index an earlier run set (never its unique index): an update then says which columns
    /// it changed, where under the default identity an update of a row the feed has not
    /// seen must be tested once for every principal observing the table
    /// (<doc:RowLevelSecurity>). A partition or child table made later gets it when this
    /// runs again. The tables so changed are remembered in the publication's comment, each by
    /// its schema-qualified name with the identity set, and `disable` gives back those whose
    /// identity is still that one. Answers the tables published.
    ///
    /// - Parameters:
    ///   - connection: A connection as a role that may create publications and alter the tables.
    ///   - schemas: The schemas whose tables are published; `public` by default.
    ///   - usingUniqueIndexes: Whether a table without a primary key may be identified by
    ///     its unique key's index instead of `FULL`; `false` by default (changing a table's
    ///     replica identity to an index changes what other subscribers of its changes see).
    ///   - fullIdentityUnderRowSecurity: Whether tables with row-level security get
    ///     `REPLICA IDENTITY FULL`; `false` by default: the server then logs each updated
    ///     or deleted row whole (its long values too), and other subscribers of the tables'
    ///     changes see it.
    /// - Returns: The names of the tables published.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest``
    ///   when the server does not run with `wal_level=logical` (it says how to set it); a
    ///   `PostgresError` from the server (a missing privilege, say). Nothing is changed then.
    @discardableResult
    public static func enable(
        logicalDecodingOn connection: Connection, schemas: [String] = ["public"], usingUniqueIndexes: Bool = false,
        fullIdentityUnderRowSecurity: Bool = false
    ) throws -> [String] {
        try checkLogicalDecoding(on: connection)
        return try connection.transaction {
            let tables = try connection.query(publishableTablesSQL, [schemas]).map { try $0.decode(String.self, at: 0) }
            let name = try connection.quoteIdentifier(publication)
            let exists = try connection.query("SELECT oid FROM pg_publication WHERE pubname = $1", [publication]).count == 1
            var remembered = try exists ? identitiesSet(on: connection) : [:]
            var identified: [String] = []
            if fullIdentityUnderRowSecurity {
                // Before the keyless tables: one with row-level security gets FULL, not its
                // unique index, which would log the key alone (nor the index an earlier run
                // set; an identity the user chose stays).
                let secured = try connection.query(rowSecuredTablesSQL, [schemas]).map { row in
                    (table: try row.decode(String.self, at: 0), kind: try row.decode(String.self, at: 1))
                }
                let indexed = try identities(of: secured.filter { $0.kind == "i" }.map(\.table), on: connection)
                for (table, kind) in secured where kind == "d" || remembered[table] == indexed[table] {
                    identified.append(table)
                    try connection.execute("ALTER TABLE \(table) REPLICA IDENTITY FULL")
                }
            }
            for row in try connection.query(keylessTablesSQL, [schemas]) {
                let table = try row.decode(String.self, at: 0)
                identified.append(table)
                if usingUniqueIndexes, let index = try row.decode(String?.self, at: 1) {
                    try connection.execute("ALTER TABLE \(table) REPLICA IDENTITY USING INDEX \(index)")
                } else {
                    try connection.execute("ALTER TABLE \(table) REPLICA IDENTITY FULL")
                }
            }
            for (table, identity) in try identities(of: identified, on: connection) { remembered[table] = identity }
            let list = tables.isEmpty ? nil : tables.joined(separator: ", ")
            switch (exists, list) {
            case (false, let list?): try connection.execute("CREATE PUBLICATION \(name) FOR TABLE \(list) WITH (publish_via_partition_root = true)")
            case (false, nil): try connection.execute("CREATE PUBLICATION \(name) WITH (publish_via_partition_root = true)")
            case (true, let list?): try connection.execute("ALTER PUBLICATION \(name) SET TABLE \(list)")
            case (true, nil): break
            }
            let comment = String(
                decoding: try JSONSerialization.data(withJSONObject: remembered.mapValues { $0 ?? NSNull() as Any }, options: .sortedKeys),
                as: UTF8.self)
            try connection.execute("COMMENT ON PUBLICATION \(name) IS \(try connection.quoteLiteral(comment))")
            return tables
        }
    }

    /// Drops the publication and gives the tables `enable(logicalDecodingOn:)` set to
    /// `REPLICA IDENTITY FULL` or `USING INDEX` their default back, in one transaction: each
    /// one whose identity is still the one `enable` set, so that one the user changed since
    /// stays.
    ///
    /// - Parameter connection: A connection as a role that may drop the publication.
    /// - Throws: A `PostgresError` from the server; nothing is changed then.
    public static func disable(logicalDecodingOn connection: Connection) throws {
        try connection.transaction {
            let set = try identitiesSet(on: connection)
            for (table, current) in try identities(of: Array(set.keys), on: connection) {
                // `nil`: an earlier version's list, which did not say what it set.
                let setThen = set[table] ?? nil
                guard current != "d", setThen == nil || setThen == current else { continue }
                try connection.execute("ALTER TABLE \(table) REPLICA IDENTITY DEFAULT")
            }
            try connection.execute("DROP PUBLICATION IF EXISTS \(try connection.quoteIdentifier(publication))")
        }
    }

    /// Whether `enable(logicalDecodingOn:)` has run on the connection's database.
    ///
    /// - Parameter connection: A connection to the database.
    /// - Returns: `true` when the publication `relate_changes` exists.
    /// - Throws: A `PostgresError` when the catalog cannot be read.
    public static func isEnabled(logicalDecodingOn connection: Connection) throws -> Bool {
        try connection.query("SELECT count(*) FROM pg_publication WHERE pubname = $1", [publication])[0].decode(Int.self, at: 0) == 1
    }

    /// Logical decoding needs `wal_level=logical`, a setting read when the server starts:
    /// say so, and how to set it, before anything else fails less clearly.
    static func checkLogicalDecoding(on connection: Connection) throws {
        let level = try connection.query("SELECT current_setting('wal_level')")[0].decode(String.self, at: 0)
        guard level == "logical" else {
            throw RelateError(
                kind: .invalidRequest,
                message: "logical decoding needs wal_level=logical, and this server runs with wal_level=\(level): "
                    + "run ALTER SYSTEM SET wal_level = logical (or set it in postgresql.conf) and restart the server, "
                    + "or track changes with triggers (relate enable without --logical)")
        }
    }

    /// The replica identities `enable` set, from the publication's comment: by each table's
    /// schema-qualified name (whatever the `search_path`), the identity as ``identities(of:on:)``
    /// read it once set. The comment of an earlier version lists names alone (as the
    /// `search_path` of then printed them): their identity is `nil`, any but the default.
    private static func identitiesSet(on connection: Connection) throws -> [String: String?] {
        let result = try connection.query(
            "SELECT obj_description(oid, 'pg_publication') FROM pg_publication WHERE pubname = $1", [publication])
        guard result.count == 1, let text = try result[0].decode(String?.self, at: 0),
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8))
        else { return [:] }
        if let names = object as? [String] { return Dictionary(names.map { ($0, nil) }) { first, _ in first } }
        guard let identities = object as? [String: Any] else { return [:] }
        return identities.mapValues { $0 as? String }
    }

    /// The replica identity of each of `tables` that exists (`d`, `f`, `n`, or `i:` and its
    /// index's name), by the name given, in one statement.
    private static func identities(of tables: [String], on connection: Connection) throws -> [String: String] {
        guard !tables.isEmpty else { return [:] }
        var identities: [String: String] = [:]
        for row in try connection.query(identitiesSQL, [tables]) { identities[try row.decode(String.self, at: 0)] = try row.decode(String.self, at: 1) }
        return identities
    }

    /// The replica identity of each table named in `$1`: `d`, `f`, `n`, or `i:` and the index's name.
    static let identitiesSQL = """
        SELECT t.name, c.relreplident::text || coalesce(':' || (SELECT ic.relname::text FROM pg_index x
                 JOIN pg_class ic ON ic.oid = x.indexrelid WHERE x.indrelid = c.oid AND x.indisreplident), '')
          FROM unnest($1::text[]) AS t(name) JOIN pg_class c ON c.oid = to_regclass(t.name)
        """

    /// Ordinary and partitioned tables of the schemas (`$1`), roots only, as quoted names.
    static let publishableTablesSQL = """
        SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY($1) AND n.nspname <> 'relate_tracking' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
         ORDER BY 1
        """

    /// Tables of the schemas (`$1`, partitions included: they are what the server decodes)
    /// with row-level security enabled on themselves or on a table they inherit from or are
    /// a partition of (whose policies a read through it applies to their rows), by their
    /// schema-qualified names, with the default replica identity or an index's (`d` or `i`).
    static let rowSecuredTablesSQL = """
        WITH RECURSIVE ancestor(child, parent) AS (
            SELECT inhrelid, inhparent FROM pg_inherits
            UNION SELECT a.child, i.inhparent FROM ancestor a JOIN pg_inherits i ON i.inhrelid = a.parent
        )
        SELECT format('%I.%I', n.nspname, c.relname), c.relreplident::text
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY($1) AND n.nspname <> 'relate_tracking' AND c.relkind = 'r' AND c.relreplident IN ('d', 'i')
           AND (c.relrowsecurity OR EXISTS (
                SELECT FROM ancestor a JOIN pg_class p ON p.oid = a.parent WHERE a.child = c.oid AND p.relrowsecurity))
         ORDER BY 1
        """

    /// Tables of the schemas (`$1`, partitions included: they are what the server decodes)
    /// with the default replica identity and no primary key: nothing identifies their rows.
    /// By their schema-qualified names, each with the quoted name of the unique index that
    /// may be its replica identity, by the rule of Relate's keys (a constraint's first, then
    /// fewest columns, then name), if any: unique, valid, not deferrable, neither partial nor
    /// on expressions, every column `NOT NULL`.
    static let keylessTablesSQL = """
        SELECT format('%I.%I', n.nspname, c.relname),
          (SELECT quote_ident(ic.relname)
             FROM pg_index x
             JOIN pg_class ic ON ic.oid = x.indexrelid
             LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.conrelid = x.indrelid AND con.contype = 'u'
            WHERE x.indrelid = c.oid AND x.indisunique AND x.indisvalid AND x.indimmediate
              AND x.indpred IS NULL AND x.indexprs IS NULL
              AND NOT EXISTS (SELECT FROM unnest(x.indkey::int2[]) AS k(attnum)
                              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                              WHERE NOT a.attnotnull)
            ORDER BY con.oid IS NULL, x.indnkeyatts, coalesce(con.conname, ic.relname)
            LIMIT 1)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY($1) AND n.nspname <> 'relate_tracking' AND c.relkind = 'r' AND c.relreplident = 'd'
           AND NOT EXISTS (SELECT FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)
         ORDER BY 1
        """
}
