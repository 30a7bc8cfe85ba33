import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// Generated code for every file of `sql/examples/` (`awkward_identifiers.sql` among them)
/// compiles (Swift 6 mode, against the `Relate` module this test run built).
/// Serialized: each case runs the compiler, and several at once would starve the
/// timing-sensitive tests that run beside them on a 2-core machine.
@Suite(.serialized) struct TypedCompileTests {
    /// The directory SwiftPM put this run's modules in, beside the test bundle.
    static func modulesDirectory() -> URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while directory.pathComponents.count > 1 {
            let modules = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("Relate.swiftmodule").path) { return modules }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// Type-checks `files` with `swiftc` against this run's `Relate`; the compiler's
    /// messages, `nil` when it passed.
    static func typecheck(_ files: [Generator.File]) throws -> String? {
        guard let modules = modulesDirectory() else { return "no Relate.swiftmodule beside \(CommandLine.arguments[0])" }
        let directory = TypedSeeds.temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for file in files {
            try Data(file.contents.utf8).write(to: directory.appendingPathComponent(file.name))
        }
        let includes = try InspectCommandTests.run(URL(fileURLWithPath: "/usr/bin/env"), ["pkg-config", "--cflags-only-I", "libpq"])
            .output.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        let moduleMap = TestDatabase.repository.appendingPathComponent("Sources/CLibPQ/module.modulemap").path
        var arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-warnings-as-errors", "-I", modules.path,
                         "-Xcc", "-fmodule-map-file=\(moduleMap)"]
        for include in includes { arguments += ["-Xcc", include] }
        arguments += files.map { directory.appendingPathComponent($0.name).path }
        let run = try InspectCommandTests.run(URL(fileURLWithPath: "/usr/bin/env"), arguments)
        return run.status == 0 ? nil : run.errors + run.output
    }

    @Test(arguments: ["seed_person_email", "seed_person_email_one_to_one", "seed_person_title", "hard_cases", "awkward_identifiers"])
    func examplesCompile(example: String) throws {
        try ObjectFixture.with(example) { fixture in
            let files = try TypedSeeds.files(for: fixture.context.model)
            #expect(files.count == fixture.context.model.entities.count + 1)
            let errors = try Self.typecheck(files)
            #expect(errors == nil, "\(errors ?? "")")
        }
    }

    @Test func awkwardIdentifiersCompile() throws {
        try ObjectFixture.with("awkward_identifiers") { fixture in
            let context = fixture.context
            let files = try TypedSeeds.files(for: context.model)
            let all = files.map(\.contents).joined()
            for expected in ["public struct OrderLine", "public struct ValuesEntity", "public struct _2024Sales", "public struct Class:",
                             "public var `default`: String?", "public var größe: Decimal?", "public var qty: Int?",
                             "public var objectColumn: UUID?", "public var `let`: String?", "public var selfColumn: String?",
                             "public var prefixColumn: String?", "public func setOwnerRelationship(_ owner: person_title?)",
                             "public struct PersonTitle:", "public enum Mood: String, TypedEnum, CaseIterable", "case soSo = \"so-so\"",
                             "public var feeling: Mood?", "public struct person_title:", "public var selfColumn_2: String?"] {
                #expect(all.contains(expected), "\(expected)")
            }
            let errors = try Self.typecheck(files)
            #expect(errors == nil, "\(errors ?? "")")
        }
    }

    /// Enum labels that differ only in their Unicode form (a composed and a decomposed `é`,
    /// two labels to PostgreSQL, one `String` to Swift) generate code that compiles, with a
    /// case for each and a raw-value initializer that tells them apart by bytes.
    @Test func enumLabelsThatDifferOnlyInTheirUnicodeFormCompile() throws {
        try ObjectFixture.inSchema(made: #"""
            CREATE TYPE accent AS ENUM (U&'caf\00E9', U&'cafe\0301', 'plain');
            CREATE TABLE menu (id int PRIMARY KEY, dish accent);
            """#) { fixture in
            let files = try TypedSeeds.files(for: fixture.context.model)
            let all = files.map(\.contents).joined()
            for expected in [#"case café = "caf\u{e9}""#, #"case café_2 = "cafe\u{301}""#, "public init?(rawValue: String)"] {
                #expect(all.contains(expected), "\(expected)")
            }
            let errors = try Self.typecheck(files)
            #expect(errors == nil, "\(errors ?? "")")
        }
    }

    /// An unknown key, or a value of the wrong type, in a typed request is a compile error.
    @Test func wrongKeysAndValueTypesDoNotCompile() throws {
        try TypedSeeds.with(empty: true) { fixture in
            let files = try TypedSeeds.files(for: fixture.context.model)
            let good = Generator.File(name: "Use.swift", contents: """
                import Relate
                func use(_ context: DatabaseContext) throws {
                    _ = try context.fetch(Person.self, where: { $0.surname == "Hopper" && $0.email.any { $0.address.hasSuffix("@navy.mil") } },
                                          orderBy: { [$0.surname.ascending] }, limit: 10)
                    _ = try context.count(Email.self, where: { $0.person.firstname == nil || $0.id > 3 })
                }
                """)
            let goodErrors = try Self.typecheck(files + [good])
            #expect(goodErrors == nil, "\(goodErrors ?? "")")
            let cases = [
                ("$0.surnam == \"Hopper\"", "has no member 'surnam'"),
                ("$0.id == \"one\"", "cannot convert value of type 'String'"),
                ("$0.email == \"x\"", "ToManyColumn"),
                ("$0.id.hasPrefix(\"1\")", "hasPrefix"),
            ]
            for (condition, message) in cases {
                let bad = Generator.File(name: "Use.swift", contents: """
                    import Relate
                    func use(_ context: DatabaseContext) throws {
                        _ = try context.fetch(Person.self, where: { \(condition) })
                    }
                    """)
                let errors = try Self.typecheck(files + [bad])
                #expect(errors?.contains(message) == true, "\(condition): \(errors ?? "compiled")")
            }
        }
    }
}
