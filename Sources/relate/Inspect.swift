import ArgumentParser
import Relate

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the entities and relationships Relate infers from a schema.",
        discussion: """
            The URL (or conninfo string) defaults to the PG* environment variables, as with psql.
              relate inspect postgresql://me@localhost/app --schema public --format json
              relate inspect --format dot | dot -Tpng -o schema.png
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, mermaid, dot
    }

    enum Rule: String, ExpressibleByArgument, CaseIterable {
        case keyed, strict, any

        var manyToMany: ManyToManyRule {
            switch self {
            case .keyed: .keyed
            case .strict: .strict
            case .any: .anyTwoForeignKeys
            }
        }
    }

    @Argument(help: "A postgresql:// URL or conninfo string; empty for the PG* environment.")
    var url: String = ""

    @Option(name: .customLong("schema"), help: "A schema to read (repeatable); default: the search_path.")
    var schemas: [String] = []

    @Option(help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: Format = .text

    @Option(name: .customLong("many-to-many"), help: "Helper-table rule: keyed (default), strict, any.")
    var manyToMany: Rule = .keyed

    func run() throws {
        let connection = try Connection(conninfo: url)
        let catalog = try Catalog.introspect(connection, schemas: schemas.isEmpty ? nil : schemas)
        let model = try Model(catalog: catalog, options: ModelOptions(manyToMany: manyToMany.manyToMany))
        switch format {
        case .text: print(model.textDescription(), terminator: "")
        case .json: print(try model.jsonDescription())
        case .mermaid: print(model.mermaidDescription(), terminator: "")
        case .dot: print(model.dotDescription(), terminator: "")
        }
    }
}
