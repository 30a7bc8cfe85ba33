import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// A `json`/`jsonb` column given a `Codable` type (`relate-generate.json`, `--type`): the
/// generated code compiles, and what it calls reads, writes and compares that type against
/// the server.
@Suite(.serialized) struct TypedJSONTests {
    /// The user's type, as the generated `Values` need it: `Codable`, `Hashable`, `Sendable`.
    struct Settings: Codable, Hashable, Sendable {
        var theme: String
        var fontSize: Int
        var tags: [String]
    }

    /// A type the encoder refuses: `Double.nan` is no JSON number.
    struct Ratio: Codable, Hashable, Sendable {
        var value: Double
    }

    static let schema = """
        CREATE TABLE account (id int4 PRIMARY KEY, settings jsonb NOT NULL, extra json, plain jsonb);
        INSERT INTO account VALUES (1, '{"theme": "dark", "fontSize": 14, "tags": ["a"]}', NULL, '{"x": 1}'),
                                   (2, '{"theme": "light"}', '{"theme": "sea", "fontSize": 9, "tags": []}', NULL);
        """

    static let configuration = GeneratorConfiguration(types: ["account.settings": "Settings", "account.extra": "Settings"])

    @Test func generatedCodeCompilesWithTheType() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let snapshot = try ModelSnapshot(json: Data(context.model.jsonDescription().utf8))
            let files = try Generator(snapshot, configuration: Self.configuration).files()
            let account = try #require(files.first { $0.name == "RelateModel+account.swift" }?.contents)
            for line in [
                "public var settings: Settings {", "public var extra: Settings? {", "public var plain: JSONValue? {",
                "try object.generatedJSON(at: 1, as: Settings.self, coder: DefaultJSONCoder.self)",
                "public var extra: TypedJSONColumn<Settings?, DefaultJSONCoder>",
            ] {
                #expect(account.contains(line), "\(line)")
            }
            // Without a configuration the output is what it was: JSONValue.
            let plain = try Generator(snapshot).files().first { $0.name == "RelateModel+account.swift" }?.contents
            #expect(plain?.contains("public var settings: JSONValue {") == true)

            let use = Generator.File(name: "Use.swift", contents: """
                import Foundation
                import Relate
                public struct Settings: Codable, Hashable, Sendable { var theme: String; var fontSize: Int; var tags: [String] }
                func use(_ context: DatabaseContext) throws {
                    let made = try context.insert(Account.self) {
                        $0.id = 3
                        $0.settings = Settings(theme: "dark", fontSize: 12, tags: [])
                    }
                    let settings: Settings = try made.settings
                    let extra: Settings? = try made.extra
                    try made.update { $0.extra = Settings(theme: "sea", fontSize: 1, tags: ["x"]); $0.settings.fontSize += 1 }
                    _ = try context.fetch(Account.self, where: { $0.settings == settings && $0.extra != nil })
                    _ = try context.count(Account.self, where: { $0.settings.jsonContains(["theme": "dark"]) || $0.extra.jsonText(at: "theme", equals: "sea") })
                    _ = (extra, try made.values)
                }
                """)
            let errors = try TypedCompileTests.typecheck(files + [use])
            #expect(errors == nil, "\(errors ?? "")")

            // A column that is not JSON, or that the model lacks, is refused by name.
            #expect(throws: Generator.GeneratorError.self) {
                try Generator(snapshot, configuration: GeneratorConfiguration(types: ["account.id": "Settings"]))
            }
            #expect(throws: Generator.GeneratorError.self) {
                try Generator(snapshot, configuration: GeneratorConfiguration(types: ["account.nope": "Settings"]))
            }
        }
    }

    /// `relate generate --type` and `--configuration` give the same files, and the plugin's
    /// tool with `relate-generate.json` the same bytes again; a named coder is used.
    @Test func optionConfigurationFileAndToolAgree() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let url = try TestDatabase.url()
            let directory = TypedSeeds.temporaryDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let byOption = directory.appendingPathComponent("option"), byFile = directory.appendingPathComponent("file")
            let generateOption = try InspectCommandTests.relate([
                "generate", url, "--schema", schema, "--output", byOption.path, "--type", "account.settings=Settings",
                "--type", "account.extra=Settings",
            ])
            #expect(generateOption.status == 0, "\(generateOption.errors)")
            let configuration = directory.appendingPathComponent("relate-generate.json")
            try Data(#"{"types": {"account.settings": "Settings", "account.extra": "Settings"}}"#.utf8).write(to: configuration)
            let generateFile = try InspectCommandTests.relate(["generate", url, "--schema", schema, "--output", byFile.path, "--configuration", configuration.path])
            #expect(generateFile.status == 0, "\(generateFile.errors)")
            #expect(try TypedSeeds.contents(of: byOption) == TypedSeeds.contents(of: byFile))
            #expect(try TypedSeeds.contents(of: byFile)["RelateModel+account.swift"]?.contains("public var settings: Settings {") == true)

            let inspect = try InspectCommandTests.relate(["inspect", url, "--schema", schema, "--format", "json"])
            let model = directory.appendingPathComponent("relate-model.json")
            try Data(inspect.output.utf8).write(to: model)
            let byTool = directory.appendingPathComponent("tool")
            let tool = try InspectCommandTests.run(TypedSeeds.executable("relate-generate-tool"), [model.path, byTool.path, configuration.path])
            #expect(tool.status == 0, "\(tool.errors)")
            #expect(try TypedSeeds.contents(of: byTool) == TypedSeeds.contents(of: byFile))

            try Data(#"{"types": {"account.settings": "Settings"}, "jsonCoder": "AppJSON"}"#.utf8).write(to: configuration)
            let coded = try InspectCommandTests.run(TypedSeeds.executable("relate-generate-tool"), [model.path, byTool.path, configuration.path])
            #expect(coded.status == 0, "\(coded.errors)")
            #expect(try TypedSeeds.contents(of: byTool)["RelateModel+account.swift"]?.contains("as: Settings.self, coder: AppJSON.self)") == true)

            let bad = try InspectCommandTests.relate(["generate", url, "--schema", schema, "--output", byOption.path, "--type", "account.id=Settings"])
            #expect(bad.status != 0)
            #expect(bad.errors.contains("column \"id\" is int4"), "\(bad.errors)")
        }
    }

    /// What the generated getters, `update {}`, drafts and columns call, against the server.
    @Test func readsWritesAndConditionsTakeTheType() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let first = try #require(try context.object("account", primaryKey: 1))
            let dark = Settings(theme: "dark", fontSize: 14, tags: ["a"])
            #expect(try first.generatedJSON(at: 1, as: Settings.self, coder: DefaultJSONCoder.self) == dark)
            #expect(try first.generatedOptionalJSON(at: 2, as: Settings.self, coder: DefaultJSONCoder.self) == nil)

            // JSON that is not a Settings: typeMismatch naming the column and the type, no value.
            let second = try #require(try context.object("account", primaryKey: 2))
            let error = #expect(throws: RelateError.self) { try second.generatedJSON(at: 1, as: Settings.self, coder: DefaultJSONCoder.self) }
            #expect(error?.kind == .typeMismatch)
            #expect(error?.description.contains("column \"settings\"") == true, "\(error?.description ?? "")")
            #expect(error?.description.contains("Settings") == true)
            #expect(error?.description.contains("fontSize") == true)
            #expect(error?.description.contains("light") == false)
            #expect(try second.generatedOptionalJSON(at: 2, as: Settings.self, coder: DefaultJSONCoder.self)?.theme == "sea")

            // update {}: the value goes as its document, encoded once; the server holds it.
            let sea = Settings(theme: "sea", fontSize: 10, tags: ["b", "c"])
            try second.writeTypedChanges([TypedChange(index: 1, value: TypedJSON.encoded(sea, coder: DefaultJSONCoder.self))])
            #expect(try second.generatedJSON(at: 1, as: Settings.self, coder: DefaultJSONCoder.self) == sea)
            let stored = try connection.query("SELECT settings->>'theme', settings->'tags'->>1, jsonb_typeof(settings->'fontSize') FROM account WHERE id = 2")[0]
            #expect(try (0..<3).map { try stored.decode(String.self, at: $0) } == ["sea", "c", "number"])
            // Into the json column too (sent as its text).
            try second.writeTypedChanges([TypedChange(index: 2, value: TypedJSON.encoded(Settings?.none, coder: DefaultJSONCoder.self))])
            #expect(try second.generatedOptionalJSON(at: 2, as: Settings.self, coder: DefaultJSONCoder.self) == nil)
            try second.writeTypedChanges([TypedChange(index: 2, value: TypedJSON.encoded(Settings?.some(dark), coder: DefaultJSONCoder.self))])
            #expect(try connection.query("SELECT extra::text FROM account WHERE id = 2")[0].decode(String.self, at: 0).contains("\"dark\""))

            // A draft keeps the document and reads it back as the type.
            var draft = TypedAssignments()
            draft.set(3, forKey: "id", nullable: false)
            draft.set(TypedJSON.encoded(sea, coder: DefaultJSONCoder.self), forKey: "settings", nullable: false)
            #expect(TypedJSON.value(in: draft, forKey: "settings", as: Settings.self, coder: DefaultJSONCoder.self) == sea)
            let third = try context.insert("account", values: draft.values)
            #expect(try third.generatedJSON(at: 1, as: Settings.self, coder: DefaultJSONCoder.self) == sea)

            // Conditions compare documents as jsonb (key order does not count).
            let settings = TypedJSONColumn<Settings, DefaultJSONCoder>("settings")
            let extra = TypedJSONColumn<Settings?, DefaultJSONCoder>("extra")
            #expect(try context.count(FetchRequest("account", where: settings == sea)) == 2)
            #expect(try context.count(FetchRequest("account", where: settings != sea)) == 1)
            #expect(try context.count(FetchRequest("account", where: extra == nil)) == 2)
            #expect(try context.count(FetchRequest("account", where: extra == dark)) == 1)
            #expect(try context.count(FetchRequest("account", where: settings.jsonContains(["tags": ["c"]]))) == 2)

            // A value the coder refuses: typeMismatch naming the column and the Swift type, nothing sent.
            let refused = #expect(throws: RelateError.self) {
                try first.writeTypedChanges([TypedChange(index: 3, value: TypedJSON.encoded(Ratio(value: .nan), coder: DefaultJSONCoder.self))])
            }
            #expect(refused?.kind == .typeMismatch)
            #expect(refused?.description.contains("Ratio") == true, "\(refused?.description ?? "")")
            #expect(refused?.description.contains("column \"plain\"") == true)
            #expect(try first.value(forKey: "plain") as? JSONValue == ["x": 1])

            // A context that does not autocommit holds the document until save(), readable as the type.
            let editing = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            editing.autocommits = false
            let pending = try #require(try editing.object("account", primaryKey: 1))
            let changes = [TypedChange(index: 1, value: TypedJSON.encoded(sea, coder: DefaultJSONCoder.self)),
                           TypedChange(index: 2, value: TypedJSON.encoded(Settings?.some(sea), coder: DefaultJSONCoder.self))]
            try pending.writeTypedChanges(changes)
            #expect(try pending.generatedJSON(at: 1, as: Settings.self, coder: DefaultJSONCoder.self) == sea)
            #expect(try pending.generatedOptionalJSON(at: 2, as: Settings.self, coder: DefaultJSONCoder.self) == sea)
            try editing.save()
            #expect(try connection.query("SELECT extra->>'theme' FROM account WHERE id = 1")[0].decode(String.self, at: 0) == "sea")
        }
    }
}
