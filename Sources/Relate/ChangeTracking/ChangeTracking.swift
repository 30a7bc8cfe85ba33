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
    ///
    /// - Parameters:
    ///   - connection: A connection as a role that may create schemas and triggers.
    ///   - schemas: The schemas whose tables are tracked; `public` by default.
    /// - Returns: The names of the tables now tracked.
    /// - Throws: A `PostgresError` from the server (a missing privilege, say); nothing is
    ///   installed then.
    @discardableResult
    public static func enable(on connection: Connection, schemas: [String] = ["public"]) throws -> [String] {
        try connection.transaction {
            try connection.executeScript(installSQL)
            return try connection.query(trackSQL, [schemas]).map { try $0.decode(String.self, at: 0) }
        }
    }

    /// Removes every trigger `enable` installed, in any schema, and Relate's schema, in one
    /// transaction: the database is as it was before. Answers the tables that were tracked.
    ///
    /// - Parameter connection: A connection as a role that may drop the triggers and the schema.
    /// - Returns: The names of the tables that were tracked.
    /// - Throws: A `PostgresError` from the server; nothing is removed then.
    @discardableResult
    public static func disable(on connection: Connection) throws -> [String] {
        try connection.transaction {
            let tables = try connection.query(trackedTablesSQL).map { try $0.decode(String.self, at: 0) }
            // The triggers depend on the schema's function: they go with it.
            try connection.execute("DROP SCHEMA IF EXISTS relate_tracking CASCADE")
            return tables
        }
    }

    /// Whether `enable` has run on the connection's database. Asked of the catalog, so that
    /// it needs no privilege on `relate_tracking`.
    ///
    /// - Parameter connection: A connection to the database.
    /// - Returns: `true` when Relate's schema and triggers are installed.
    /// - Throws: A `PostgresError` when the catalog cannot be read.
    public static func isEnabled(on connection: Connection) throws -> Bool {
        try connection.query(
            """
            SELECT EXISTS (SELECT FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                            WHERE n.nspname = 'relate_tracking' AND p.proname = 'track')
            """)[0].decode(Bool.self, at: 0)
    }

    /// Grants `role` what a context running as it needs to read changes by triggers, and
    /// nothing more: `USAGE` on the schema `relate_tracking` and `SELECT` on its table of long
    /// payloads (a statement's notification over NOTIFY's 8,000 bytes is kept there). Writers
    /// need nothing (the triggers run as the role that ran `enable`); a reader also needs
    /// `SELECT` on the tables it reads, which this does not grant. The same as:
    ///
    /// ```sql
    /// GRANT USAGE ON SCHEMA relate_tracking TO app_reader;
    /// GRANT SELECT ON relate_tracking.change TO app_reader;
    /// ```
    ///
    /// - Throws: ``RelateError`` when `enable` has not run or the role does not exist
    ///   (the server's SQLSTATE, 42704).
    ///
    /// - Parameters:
    ///   - role: The role that reads changes.
    ///   - connection: A connection as a role that may grant on `relate_tracking`.
    public static func grant(readingTo role: String, on connection: Connection) throws {
        guard try isEnabled(on: connection) else {
            throw RelateError(kind: .invalidRequest, message: "change tracking is not enabled in this database: run `relate enable` first")
        }
        let name = try connection.quoteIdentifier(role)
        try DatabaseContext.wrappingErrors {
            try connection.transaction {
                try connection.execute("GRANT USAGE ON SCHEMA relate_tracking TO \(name)")
                try connection.execute("GRANT SELECT ON relate_tracking.change TO \(name)")
            }
        }
    }
}
