import Foundation
import Relate
import Testing

/// `relate inspect`, run as a user runs it: the binary, its output and its exit codes.
@Suite struct InspectCommandTests {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    static func run(_ executable: URL, _ arguments: [String], stdin: Data? = nil) throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self))
    }

    /// The `relate` binary SwiftPM built beside the test bundle.
    static func relate(_ arguments: [String]) throws -> Run {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("relate").path),
            directory.pathComponents.count > 1
        {
            directory.deleteLastPathComponent()
        }
        return try run(directory.appendingPathComponent("relate"), arguments)
    }

    func withSeed<Result>(_ example: String, _ body: (_ url: String, _ schema: String) throws -> Result) throws -> Result {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample(example, into: connection, schema: schema)
            return try body(try TestDatabase.url(), schema)
        }
    }

    @Test func jsonFollowsTheDesignFormat() throws {
        try withSeed("seed_person_title") { url, schema in
            let run = try Self.relate(["inspect", url, "--schema", schema, "--format", "json"])
            #expect(run.status == 0, "\(run.errors)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            let entities = try #require(json["entities"] as? [[String: Any]])
            #expect(entities.map { $0["name"] as? String } == ["person", "person_title_rel", "title"])
            for entity in entities {
                #expect(entity["schema"] as? String == schema)
                #expect(entity["primaryKey"] is [String])
                let attributes = try #require(entity["attributes"] as? [[String: Any]])
                for attribute in attributes {
                    #expect(attribute["name"] is String && attribute["type"] is String && attribute["nullable"] is Bool)
                }
            }
            let relationships = try #require(json["relationships"] as? [[String: Any]])
            #expect(relationships.count == 6)
            let kinds: Set<String> = ["one-to-many", "many-to-one", "one-to-one", "many-to-many"]
            let rules: Set<String> = ["foreign-key", "unique-foreign-key", "any-two-foreign-keys", "keyed", "strict", "override"]
            for relationship in relationships {
                #expect(relationship["key"] is String)
                #expect(kinds.contains(relationship["kind"] as? String ?? ""))
                #expect(rules.contains(relationship["rule"] as? String ?? ""))
                #expect(relationship["constraint"] is String)
                for end in ["from", "to"] {
                    let value = try #require(relationship[end] as? [String: Any])
                    #expect(value["schema"] is String && value["table"] is String && value["columns"] is [String])
                }
                let foreignKeyIn = relationship["foreignKeyIn"] as? String
                if relationship["kind"] as? String == "many-to-many" {
                    #expect(foreignKeyIn == "via")
                    let via = try #require(relationship["via"] as? [String: Any])
                    #expect(via["table"] as? String == "person_title_rel")
                    #expect(via["fromColumns"] is [String] && via["toColumns"] is [String])
                } else {
                    #expect(relationship["via"] == nil)
                    #expect(foreignKeyIn == "from" || foreignKeyIn == "to")
                }
            }
            // Each direction's inverse is the relationship with the same ends, swapped.
            let decoded = try JSONDecoder().decode(ModelDescription.self, from: Data(run.output.utf8))
            for relationship in decoded.relationships {
                let inverses = decoded.relationships.filter {
                    $0.from == relationship.to && $0.to == relationship.from && $0.key == relationship.inverse
                }
                #expect(inverses.count == 1, "\(relationship.key)")
            }
            let title = try #require(decoded.relationships.first { $0.from.table == "person" && $0.key == "title" })
            #expect(title.kind == "many-to-many" && title.rule == "keyed")
            #expect(title.via?.fromColumns == ["person_id"] && title.via?.toColumns == ["title_id"])
        }
    }

    @Test func dotOutputIsAcceptedByGraphviz() throws {
        try withSeed("hard_cases") { url, schema in
            let run = try Self.relate(["inspect", url, "--schema", schema, "--format", "dot"])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.hasPrefix("digraph schema {"))
            let dot = try #require(
                ["/usr/bin/dot", "/usr/local/bin/dot", "/opt/homebrew/bin/dot"].first { FileManager.default.isExecutableFile(atPath: $0) },
                "Graphviz's dot is not installed: scripts/install-dependencies installs it")
            let rendered = try Self.run(URL(fileURLWithPath: dot), ["-Tsvg"], stdin: Data(run.output.utf8))
            #expect(rendered.status == 0, "\(rendered.errors)")
            #expect(rendered.output.contains("<svg"))
            #expect(rendered.output.contains("LineItem"))
        }
    }

    @Test func textAndMermaid() throws {
        try withSeed("seed_person_email") { url, schema in
            let text = try Self.relate(["inspect", url, "--schema", schema])
            #expect(text.status == 0)
            #expect(text.output.contains("email      one-to-many   → email(person_id)"))
            let mermaid = try Self.relate(["inspect", url, "--schema", schema, "--format", "mermaid"])
            #expect(mermaid.output.hasPrefix("erDiagram\n"))
            #expect(mermaid.output.contains("email }o--|| person : \"person / email\""))
        }
    }

    /// Tables without a primary key show the key they take and where it comes from.
    @Test func keysWithoutAPrimaryKey() throws {
        try withSeed("hard_cases") { url, schema in
            let text = try Self.relate(["inspect", url, "--schema", schema])
            #expect(text.status == 0, "\(text.errors)")
            #expect(text.output.contains("regions  (\(schema).regions, table, key: code (unique constraint regions_code_key))"))
            #expect(text.output.contains("index_keyed  (\(schema).index_keyed, table, key: code (unique index index_keyed_code))"))
            #expect(text.output.contains("partial_code  (\(schema).partial_code, table, no key)"))
            let json = try Self.relate(["inspect", url, "--schema", schema, "--format", "json"])
            let model = try JSONDecoder().decode(ModelDescription.self, from: Data(json.output.utf8))
            let keys = Dictionary(uniqueKeysWithValues: model.entities.map { ($0.name, ($0.primaryKey, $0.keySource, $0.keyName)) })
            #expect(keys["towns"]?.0 == ["id"] && keys["towns"]?.1 == "unique-constraint" && keys["towns"]?.2 == "towns_id_key")
            #expect(keys["index_keyed"]?.1 == "unique-index" && keys["constraint_first"]?.0 == ["a", "b"])
            #expect(keys["nullable_code"]?.0 == [] && keys["nullable_code"]?.1 == nil)
            #expect(keys["shelf"]?.1 == "primary-key" && keys["shelf"]?.2 == nil)
        }
    }

    /// An overrides file declares a view's key; `relate generate` says which key each type uses.
    @Test func keyOverridesAndGeneratedKeyDocumentation() throws {
        try withSeed("hard_cases") { url, schema in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relate-keys-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let overrides = directory.appendingPathComponent("overrides.json")
            try Data(#"[{"primaryKey": {"table": "book_with_author", "columns": ["id"]}}]"#.utf8).write(to: overrides)
            let json = try Self.relate(["inspect", url, "--schema", schema, "--format", "json", "--overrides", overrides.path])
            #expect(json.status == 0, "\(json.errors)")
            let model = try JSONDecoder().decode(ModelDescription.self, from: Data(json.output.utf8))
            let view = try #require(model.entities.first { $0.name == "book_with_author" })
            #expect(view.primaryKey == ["id"] && view.keySource == "override")

            let output = directory.appendingPathComponent("out")
            let run = try Self.relate(["generate", url, "--schema", schema, "--overrides", overrides.path, "--output", output.path])
            #expect(run.status == 0, "\(run.errors)")
            func file(_ entity: String) throws -> String {
                try String(contentsOf: output.appendingPathComponent("RelateModel+\(entity).swift"), encoding: .utf8)
            }
            #expect(try file("regions").contains("/// Keyed by the unique constraint `regions_code_key` (`code`): the table has no primary key."))
            #expect(try file("book_with_author").contains("/// Keyed by `id`, as an override declares"))
            #expect(try file("partial_code").contains("/// It has no key"))
            #expect(try !file("shelf").contains("Keyed by"))

            try Data(#"[{"primaryKey": {"table": "book_with_author", "columns": ["isbn"]}}]"#.utf8).write(to: overrides)
            let bad = try Self.relate(["inspect", url, "--schema", schema, "--overrides", overrides.path])
            #expect(bad.status != 0)
            #expect(bad.errors.contains("column \"isbn\" of \"book_with_author\""), "\(bad.errors)")
        }
    }

    @Test func manyToManyRuleOption() throws {
        try withSeed("hard_cases") { url, schema in
            let keyed = try Self.relate(["inspect", url, "--schema", schema, "--format", "json"])
            let strict = try Self.relate(["inspect", url, "--schema", schema, "--format", "json", "--many-to-many", "strict"])
            let any = try Self.relate(["inspect", url, "--schema", schema, "--format", "json", "--many-to-many", "any"])
            func helpers(_ run: Run) throws -> Set<String> {
                let model = try JSONDecoder().decode(ModelDescription.self, from: Data(run.output.utf8))
                return Set(model.relationships.compactMap { $0.via?.table })
            }
            #expect(try helpers(keyed) == ["membership", "friendship"])
            #expect(try helpers(strict) == ["friendship"])
            #expect(try helpers(any) == ["membership", "friendship", "tag_link", "book"])
        }
    }

    @Test func exitCodes() throws {
        let usage = try Self.relate(["inspect", "--format", "yaml"])
        #expect(usage.status == 2)
        #expect(usage.errors.contains("yaml"))
        let secret = "Sup3r-\(UUID().uuidString.prefix(6))"
        let unreachable = try Self.relate(["inspect", "postgresql://someone:\(secret)@127.0.0.1:1/db?connect_timeout=3"])
        #expect(unreachable.status == 1)
        #expect(unreachable.errors.contains("connection failed"))
        #expect(!unreachable.errors.contains(secret))
        #expect(!unreachable.output.contains(secret))
        let missing = try Self.relate(["inspect", try TestDatabase.url(), "--schema", "publik"])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("no schema \"publik\"; did you mean \"public\"?"))
    }
}
