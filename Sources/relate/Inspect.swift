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

    @OptionGroup var source: ModelSource

    @Option(help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: Format = .text

    func run() throws {
        let model = try source.model()
        switch format {
        case .text: print(model.textDescription(), terminator: "")
        case .json: print(try model.jsonDescription())
        case .mermaid: print(model.mermaidDescription(), terminator: "")
        case .dot: print(model.dotDescription(), terminator: "")
        }
    }
}
