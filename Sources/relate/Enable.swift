import ArgumentParser
import Relate

struct Enable: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn on change tracking: triggers that notify every context of what others commit.",
        discussion: """
            Installs the schema "relate_tracking" (a trigger function, a table for long payloads) and four
            statement-level triggers (insert, update, delete, truncate) on every table of the schemas given,
            in one transaction.
            Running it again changes nothing but the triggers of tables added since.
            The trigger functions run as the role that runs this (SECURITY DEFINER, search_path pinned):
            writers need nothing on relate_tracking; --grant-to ROLE lets ROLE read long payloads.
            With --logical, nothing is installed on the tables: a publication "relate_changes" over them
            lets contexts stream the write-ahead log by logical decoding (the server needs
            wal_level=logical; the user needs the REPLICATION attribute). Tables without a primary key get
            REPLICA IDENTITY FULL, or with --replica-identity-index the unique index Relate keys them by
            (REPLICA IDENTITY USING INDEX) where they have one; with --full-identity-under-row-security, tables
            with row-level security get REPLICA IDENTITY FULL too, so that an update says which columns it
            changed instead of being tested once for each principal; `relate disable` gives the default back.
              relate enable postgresql://me@localhost/app --schema public
              relate enable --logical postgresql://me@localhost/app
              relate enable postgresql://owner@localhost/app --grant-to app_reader
              relate enable --print-sql > change_tracking.sql
            """)

    @Argument(help: "A postgresql:// URL or conninfo string; empty for the PG* environment.")
    var url: String = ""

    @Option(name: .customLong("schema"), help: "A schema whose tables to track (repeatable); default: public.")
    var schemas: [String] = []

    @Flag(help: "Print the SQL installed once per database, and do nothing else.")
    var printSQL = false

    @Flag(help: "Track changes by logical decoding (a publication) instead of triggers.")
    var logical = false

    @Flag(help: "With --logical: a table without a primary key is identified by the unique index Relate keys it by (REPLICA IDENTITY USING INDEX), where it has one, instead of FULL.")
    var replicaIdentityIndex = false

    @Flag(help: "With --logical: tables with row-level security get REPLICA IDENTITY FULL (the server logs each updated row whole), so live queries under many principals learn which columns an update changed.")
    var fullIdentityUnderRowSecurity = false

    @Option(
        name: .customLong("grant-to"),
        help: "A role that reads changes (repeatable): granted USAGE on relate_tracking and SELECT on its table of long payloads. Writers need nothing.")
    var readers: [String] = []

    func run() throws {
        if printSQL {
            print(ChangeTracking.installSQL)
            return
        }
        let connection = try Connection(conninfo: url)
        let schemas = schemas.isEmpty ? ["public"] : schemas
        if logical {
            let tables = try ChangeTracking.enable(logicalDecodingOn: connection, schemas: schemas, usingUniqueIndexes: replicaIdentityIndex,
                fullIdentityUnderRowSecurity: fullIdentityUnderRowSecurity)
            print("logical decoding enabled: publication \(ChangeTracking.publication) over \(tables.count) table\(tables.count == 1 ? "" : "s")")
            for reader in readers {
                print("\(reader) needs the REPLICATION attribute to stream changes: ALTER ROLE \(try connection.quoteIdentifier(reader)) REPLICATION")
            }
            return
        }
        let tables = try ChangeTracking.enable(on: connection, schemas: schemas)
        print("change tracking enabled on \(tables.count) table\(tables.count == 1 ? "" : "s")" + (tables.isEmpty ? "" : ": " + tables.joined(separator: ", ")))
        for reader in readers {
            try ChangeTracking.grant(readingTo: reader, on: connection)
            print("\(reader) may read changes (USAGE on relate_tracking, SELECT on relate_tracking.change)")
        }
    }
}

struct Disable: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn off change tracking: remove every trigger, the schema and the publication that `relate enable` made.")

    @Argument(help: "A postgresql:// URL or conninfo string; empty for the PG* environment.")
    var url: String = ""

    func run() throws {
        let connection = try Connection(conninfo: url)
        let tables = try ChangeTracking.disable(on: connection)
        try ChangeTracking.disable(logicalDecodingOn: connection)
        print("change tracking disabled on \(tables.count) table\(tables.count == 1 ? "" : "s")")
    }
}
