import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// The seeds' schema the committed `Generated/` types were made from: `seed_person_email`
/// with `title` and `person_title_rel` of `seed_person_title` beside it.
enum TypedSeeds {
    static let titles = """
        CREATE TABLE title (
                id SERIAL PRIMARY KEY,
                name VARCHAR (255)
        );

        CREATE TABLE person_title_rel (
                person_id INTEGER REFERENCES person (id),
                title_id INTEGER REFERENCES title (id),
                PRIMARY KEY (person_id, title_id)
        );
        """

    /// Ada (emails 1, 2; Countess) and Grace (email 3; Rear Admiral, Doctor).
    static let rows = ObjectFixture.peopleWithEmails + """

        INSERT INTO title (name) VALUES ('Countess'), ('Rear Admiral'), ('Doctor');
        INSERT INTO person_title_rel VALUES (1, 1), (2, 2), (2, 3);
        """

    /// A fixture over the seeds' schema, with rows unless `empty`.
    static func with<Result>(empty: Bool = false, _ body: (ObjectFixture) throws -> Result) throws -> Result {
        try ObjectFixture.with("seed_person_email", extraSQL: titles + (empty ? "" : "\n" + rows), body)
    }

    /// `Tests/RelateIntegrationTests/Generated`.
    static let generatedDirectory = TestDatabase.repository.appendingPathComponent("Tests/RelateIntegrationTests/Generated")

    /// A fresh generation for `model`, as `relate generate` makes it.
    static func files(for model: Model) throws -> [Generator.File] {
        try Generator(ModelSnapshot(json: Data(model.jsonDescription().utf8))).files()
    }

    /// An executable SwiftPM built beside the test bundle.
    static func executable(_ name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path),
            directory.pathComponents.count > 1
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// The contents of every file of `directory`, by name.
    static func contents(of directory: URL) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            result[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return result
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("relate-typed-" + UUID().uuidString, isDirectory: true)
    }
}
