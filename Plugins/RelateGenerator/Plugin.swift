import Foundation
import PackagePlugin

/// Generates typed models at build time from the `relate-model.json` among a target's
/// files (`relate inspect --format json > Sources/App/relate-model.json`): the same Swift
/// that `relate generate` writes, without a database (build plugins have no network).
/// A `relate-generate.json` beside it gives JSON columns `Codable` types (see
/// `GeneratorConfiguration`).
///
/// ```swift
/// .executableTarget(name: "App", dependencies: [.product(name: "Relate", package: "Relate")],
///                   plugins: [.plugin(name: "RelateGenerator", package: "Relate")])
/// ```
@main
struct RelateGenerator: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let inputs = target.sourceFiles.filter { $0.url.lastPathComponent == "relate-model.json" }.map(\.url)
        guard let input = inputs.first else { return [] }
        if inputs.count > 1 {
            Diagnostics.error("target \(target.name) has \(inputs.count) relate-model.json files; keep one")
            return []
        }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("RelateModel", isDirectory: true)
        let files = try Self.outputNames(of: Data(contentsOf: input))
        let configuration = target.sourceFiles.map(\.url).first {
            $0.lastPathComponent == "relate-generate.json" && $0.deletingLastPathComponent() == input.deletingLastPathComponent()
        }
        return [
            .buildCommand(
                displayName: "Generating typed models from \(input.lastPathComponent)",
                executable: try context.tool(named: "relate-generate-tool").url,
                arguments: [input.path, output.path] + (configuration.map { [$0.path] } ?? []),
                inputFiles: [input] + (configuration.map { [$0] } ?? []),
                outputFiles: files.map { output.appendingPathComponent($0) })
        ]
    }

    /// The files the tool writes for a model: `RelateModel.swift` and one per entity, named
    /// as `Generator.fileName(ofEntity:)` names them (a plugin cannot use the generator's
    /// target, so the rule is repeated here; a test holds the two equal).
    static func outputNames(of json: Data) throws -> [String] {
        struct Snapshot: Decodable {
            struct Entity: Decodable { var schema: String; var name: String; var modelName: String? }
            var entities: [Entity]
        }
        let snapshot = try JSONDecoder().decode(Snapshot.self, from: json)
        var counts: [String: Int] = [:]
        for entity in snapshot.entities { counts[entity.schema, default: 0] += 1 }
        let first = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.first?.key ?? "public"
        let names = Set(snapshot.entities.map { $0.modelName ?? ($0.schema == first ? $0.name : "\($0.schema).\($0.name)") })
        return ["RelateModel.swift"] + names.sorted().map { name in
            var escaped = ""
            for byte in name.utf8 {
                if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                    || byte == 0x2E || byte == 0x2D
                {
                    escaped.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    escaped += "_" + String(byte, radix: 16, uppercase: true)
                }
            }
            return "RelateModel+\(escaped).swift"
        }
    }
}
