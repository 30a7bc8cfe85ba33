import ArgumentParser
import Relate

/// Where a model comes from, as `relate inspect` and `relate generate` take it: a URL, the
/// schemas, the many-to-many rule and an overrides file.
struct ModelSource: ParsableArguments {
    @Argument(help: "A postgresql:// URL or conninfo string; empty for the PG* environment.")
    var url: String = ""

    @Option(name: .customLong("schema"), help: "A schema to read (repeatable); default: the search_path.")
    var schemas: [String] = []

    @Option(name: .customLong("many-to-many"), help: "Helper-table rule: keyed (default), strict, any.")
    var manyToMany: Inspect.Rule = .keyed

    @Option(help: "A JSON file of overrides: foreign keys and keys the schema lacks, renamed keys, ignored tables.")
    var overrides: String?

    /// Reads the catalog and builds the model.
    func model() throws -> Model {
        let connection = try Connection(conninfo: url)
        let catalog = try Catalog.introspect(connection, schemas: schemas.isEmpty ? nil : schemas)
        let options = ModelOptions(manyToMany: manyToMany.manyToMany, overrides: try overrides.map(OverridesFile.read) ?? [])
        return try Model(catalog: catalog, options: options)
    }
}
