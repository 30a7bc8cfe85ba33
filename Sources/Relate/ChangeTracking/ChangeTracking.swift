import RelatePostgres

/// Change tracking with triggers and `LISTEN`/`NOTIFY`: what `relate enable` and
/// `relate disable` do, for code that would rather call them.
///
/// ```swift
/// try ChangeTracking.enable(on: connection, schemas: ["public"])   // once, by someone who may create triggers
/// let changes = try context.processChanges()                       // in every context, when it suits
/// ```
public enum ChangeTracking {
    /// Installs Relate's schema (`relate_tracking`) and a trigger per table and operation on every table of
    /// `schemas` (default: `public`), in one transaction. Running it again changes nothing
    /// but the triggers of tables added since. Answers the tables now tracked.
    @discardableResult
    public static func enable(on connection: Connection, schemas: [String] = ["public"]) throws -> [String] {
        try connection.transaction {
            try connection.executeScript(installSQL)
            return try connection.query(trackSQL, [schemas]).map { try $0.decode(String.self, at: 0) }
        }
    }

    /// Removes every trigger `enable` installed, in any schema, and Relate's schema, in one
    /// transaction: the database is as it was before. Answers the tables that were tracked.
    @discardableResult
    public static func disable(on connection: Connection) throws -> [String] {
        try connection.transaction {
            let tables = try connection.query(trackedTablesSQL).map { try $0.decode(String.self, at: 0) }
            // The triggers depend on the schema's function: they go with it.
            try connection.execute("DROP SCHEMA IF EXISTS relate_tracking CASCADE")
            return tables
        }
    }

    /// Whether `enable` has run on the connection's database.
    public static func isEnabled(on connection: Connection) throws -> Bool {
        try connection.query("SELECT to_regproc('relate_tracking.track') IS NOT NULL")[0].decode(Bool.self, at: 0)
    }
}
