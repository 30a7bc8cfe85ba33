import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// The committed `Generated/` types are what a fresh generation makes from the live schema,
/// and `relate generate` and the plugin's tool make the same bytes.
@Suite struct TypedGenerationTests {
    @Test func committedCodeEqualsAFreshGeneration() throws {
        try TypedSeeds.with(empty: true) { fixture in
            let fresh = try TypedSeeds.files(for: fixture.context.model)
            let committed = try TypedSeeds.contents(of: TypedSeeds.generatedDirectory)
            #expect(Set(committed.keys) == Set(fresh.map(\.name)))
            for file in fresh {
                #expect(committed[file.name] == file.contents, "\(file.name) differs from a fresh generation: run relate generate")
            }
        }
    }

    @Test func cliAndPluginToolWriteTheSameBytes() throws {
        try TypedSeeds.with(empty: true) { fixture in
            let url = try TestDatabase.url()
            let cli = TypedSeeds.temporaryDirectory()
            let tool = TypedSeeds.temporaryDirectory()
            defer {
                try? FileManager.default.removeItem(at: cli)
                try? FileManager.default.removeItem(at: tool)
            }
            let generate = try InspectCommandTests.relate(["generate", url, "--schema", fixture.schema, "--output", cli.path])
            #expect(generate.status == 0, "\(generate.errors)")
            let inspect = try InspectCommandTests.relate(["inspect", url, "--schema", fixture.schema, "--format", "json"])
            #expect(inspect.status == 0, "\(inspect.errors)")
            try FileManager.default.createDirectory(at: tool, withIntermediateDirectories: true)
            let json = tool.appendingPathComponent("relate-model.json")
            try Data(inspect.output.utf8).write(to: json)
            let output = tool.appendingPathComponent("out")
            let run = try InspectCommandTests.run(TypedSeeds.executable("relate-generate-tool"), [json.path, output.path])
            #expect(run.status == 0, "\(run.errors)")
            let fromCLI = try TypedSeeds.contents(of: cli)
            let fromTool = try TypedSeeds.contents(of: output)
            #expect(!fromCLI.isEmpty)
            #expect(fromCLI == fromTool)
            #expect(fromCLI == (try TypedSeeds.contents(of: TypedSeeds.generatedDirectory)))
        }
    }

    @Test func checkExitsOneWhenTheCodeIsOutOfDate() throws {
        try TypedSeeds.with(empty: true) { fixture in
            let url = try TestDatabase.url()
            let directory = TypedSeeds.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let arguments = ["generate", url, "--schema", fixture.schema, "--output", directory.path]
            #expect(try InspectCommandTests.relate(arguments).status == 0)
            let upToDate = try InspectCommandTests.relate(arguments + ["--check"])
            #expect(upToDate.status == 0, "\(upToDate.errors)")
            try fixture.context.connection.execute("ALTER TABLE email ADD COLUMN verified boolean NOT NULL DEFAULT false")
            let stale = try InspectCommandTests.relate(arguments + ["--check"])
            #expect(stale.status == 1)
            #expect(stale.errors.contains("changed: RelateModel+email.swift"), "\(stale.errors)")
            #expect(!stale.errors.contains("RelateModel+person.swift"), "\(stale.errors)")
            // The committed types still match: the live check allows a column added at the end.
            #expect(try InspectCommandTests.relate(["generate", url, "--schema", fixture.schema, "--output", TypedSeeds.generatedDirectory.path, "--check"]).status == 1)
            let context = try fixture.freshContext()
            #expect(try context.object(Email.self, primaryKey: 1) == nil)
        }
    }
}

extension TypedGenerationTests {
    @Test func overridesFileRenamesAndBadFilesAreUsageErrors() throws {
        try TypedSeeds.with(empty: true) { fixture in
            let url = try TestDatabase.url()
            let directory = TypedSeeds.temporaryDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let overrides = directory.appendingPathComponent("overrides.json")
            try Data(#"[{"rename": {"table": "person", "key": "email", "to": "addresses"}}]"#.utf8).write(to: overrides)
            let output = directory.appendingPathComponent("out")
            let run = try InspectCommandTests.relate(
                ["generate", url, "--schema", fixture.schema, "--overrides", overrides.path, "--output", output.path])
            #expect(run.status == 0, "\(run.errors)")
            let person = try String(contentsOf: output.appendingPathComponent("RelateModel+person.swift"), encoding: .utf8)
            #expect(person.contains("public var addresses: RelatedObjects<Email>"))
            #expect(person.contains("try RelatedObjects(object.objects(forKey: \"addresses\"))"))

            try Data(#"[{"rename": {"table": "person"}}]"#.utf8).write(to: overrides)
            let bad = try InspectCommandTests.relate(
                ["generate", url, "--schema", fixture.schema, "--overrides", overrides.path, "--output", output.path])
            #expect(bad.status == 2)
            #expect(bad.errors.contains("overrides"), "\(bad.errors)")
        }
    }
}
