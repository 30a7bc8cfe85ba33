import ArgumentParser
import Relate

struct Enable: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn on change tracking: triggers that notify every context of what others commit.",
        discussion: """
            Installs the schema "relate_tracking" (a trigger function, a table for long payloads) and three
            statement-level triggers on every table of the schemas given, in one transaction.
            Running it again changes nothing but the triggers of tables added since.
              relate enable postgresql://me@localhost/app --schema public
              relate enable --print-sql > change_tracking.sql
            """)

    @Argument(help: "A postgresql:// URL or conninfo string; empty for the PG* environment.")
    var url: String = ""

    @Option(name: .customLong("schema"), help: "A schema whose tables to track (repeatable); default: public.")
    var schemas: [String] = []

    @Flag(help: "Print the SQL installed once per database, and do nothing else.")
    var printSQL = false

    func run() throws {
        if printSQL {
            print(ChangeTracking.installSQL)
            return
        }
        let connection = try Connection(conninfo: url)
        let tables = try ChangeTracking.enable(on: connection, schemas: schemas.isEmpty ? ["public"] : schemas)
        print("change tracking enabled on \(tables.count) table\(tables.count == 1 ? "" : "s")" + (tables.isEmpty ? "" : ": " + tables.joined(separator: ", ")))
    }
}

struct Disable: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn off change tracking: remove every trigger and the schema that `relate enable` installed.")

    @Argument(help: "A postgresql:// URL or conninfo string; empty for the PG* environment.")
    var url: String = ""

    func run() throws {
        let connection = try Connection(conninfo: url)
        let tables = try ChangeTracking.disable(on: connection)
        print("change tracking disabled on \(tables.count) table\(tables.count == 1 ? "" : "s")")
    }
}
