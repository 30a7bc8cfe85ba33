import ArgumentParser
import Foundation
import Relate
import RelateCodeGen

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate typed Swift models from a schema.",
        discussion: """
            One file per entity and RelateModel.swift, the bytes the RelateGenerator plugin makes from `relate inspect --format json`.
              relate generate postgresql://me@localhost/app --output Sources/App/Model
              relate generate --output Sources/App/Model --check   # exit 1: out of date
              relate generate … --type account.settings=Settings   # a jsonb column as a Codable type
            """)

    @OptionGroup var source: ModelSource

    @Option(help: "The directory to write the Swift files into.")
    var output: String

    @Flag(help: "Write nothing; exit 1 when the directory differs from a fresh generation.")
    var check = false

    @Option(help: ArgumentHelp(
        "A relate-generate.json: Codable types of JSON columns and their coder.", valueName: "file"))
    var configuration: String?

    @Option(name: .customLong("type"), help: ArgumentHelp(
        "A json or jsonb column's Codable Swift type (repeatable; over the configuration's).", valueName: "table.column=Type"))
    var types: [String] = []

    func run() throws {
        let model = try source.model()
        var settings = GeneratorConfiguration()
        if let configuration {
            settings = try GeneratorConfiguration(json: Data(contentsOf: URL(fileURLWithPath: configuration)))
        }
        for type in types { try settings.addType(type) }
        let files: [Generator.File]
        do {
            files = try Self.files(for: model, configuration: settings)
        } catch let error as Generator.GeneratorError {
            throw ValidationError(error.description)
        }
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        if check {
            let differences = Self.differences(files, in: directory)
            guard differences.isEmpty else {
                FileHandle.standardError.write(Data(
                    ("relate generate --check: \(output) is out of date:\n" + differences.map { "  \($0)\n" }.joined()
                        + "run relate generate without --check to update it\n").utf8))
                throw ExitCode(1)
            }
            return
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in files {
            let url = directory.appendingPathComponent(file.name)
            if let existing = try? Data(contentsOf: url), existing == Data(file.contents.utf8) { continue }
            try Data(file.contents.utf8).write(to: url, options: .atomic)
            print("wrote \(url.path)")
        }
        for stale in Self.generatedFiles(in: directory).subtracting(files.map(\.name)).sorted() {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(stale))
            print("removed \(directory.appendingPathComponent(stale).path)")
        }
    }

    /// The files for `model`: through its JSON description, exactly as the plugin reads
    /// `relate-model.json`, so that both give the same bytes.
    static func files(for model: Model, configuration: GeneratorConfiguration = GeneratorConfiguration()) throws -> [Generator.File] {
        try Generator(ModelSnapshot(json: Data(model.jsonDescription().utf8)), configuration: configuration).files()
    }

    /// The names of files in `directory` that a generation made.
    static func generatedFiles(in directory: URL) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return Set(names.filter { $0 == Generator.modelFileName || ($0.hasPrefix("RelateModel+") && $0.hasSuffix(".swift")) })
    }

    /// What differs between `files` and `directory`, one line each.
    static func differences(_ files: [Generator.File], in directory: URL) -> [String] {
        var differences: [String] = []
        for file in files {
            switch try? Data(contentsOf: directory.appendingPathComponent(file.name)) {
            case nil: differences.append("missing: \(file.name)")
            case let existing? where existing != Data(file.contents.utf8): differences.append("changed: \(file.name)")
            default: break
            }
        }
        for stale in generatedFiles(in: directory).subtracting(files.map(\.name)).sorted() {
            differences.append("no longer generated: \(stale)")
        }
        return differences
    }
}
