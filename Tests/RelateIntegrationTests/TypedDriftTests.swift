import Foundation
import Testing

@testable import Relate

/// Schema drift: a generated type that no longer matches the live model is an error naming
/// the table and column, before any value is read.
@Suite struct TypedDriftTests {
    /// Runs `alter` on the seeds' schema, then `body` on a fresh context, asserting that it
    /// throws a `.schemaChanged` error whose message holds `expected`, having sent nothing.
    func expectDrift(_ alter: String, _ expected: [String], _ body: (DatabaseContext) throws -> Void) throws {
        try TypedSeeds.with { fixture in
            try fixture.context.connection.executeScript(alter)
            let context = try fixture.freshContext()
            var sent: [String] = []
            context.connection.trace = { sent.append($0) }
            let error = #expect(throws: RelateError.self) { try body(context) }
            #expect(error?.kind == .schemaChanged)
            for text in expected {
                #expect(error?.message.contains(text) == true, "\(error?.message ?? "")")
            }
            #expect(sent.isEmpty, "sent \(sent)")
        }
    }

    @Test func droppedColumn() throws {
        try expectDrift("ALTER TABLE email DROP COLUMN address", ["column \"address\"", ".email\"", "dropped"]) { context in
            _ = try context.object(Email.self, primaryKey: 1)
        }
    }

    @Test func retypedColumn() throws {
        try expectDrift("ALTER TABLE person ALTER COLUMN surname TYPE text", ["column \"surname\"", "now of type text", "varchar"]) { context in
            _ = try context.fetch(Person.self)
        }
    }

    @Test func columnMadeNullable() throws {
        try expectDrift(
            "ALTER TABLE person_title_rel DROP CONSTRAINT person_title_rel_pkey; ALTER TABLE person_title_rel ALTER COLUMN title_id DROP NOT NULL",
            ["column \"title_id\"", "now nullable"]
        ) { context in
            _ = try context.count(PersonTitleRel.self)
        }
    }

    @Test func renamedTable() throws {
        try expectDrift("ALTER TABLE title RENAME TO heading", ["table \"title\"", "renamed"]) { context in
            _ = try context.fetch(Title.self)
        }
    }

    @Test func renamedTableSeenThroughARelationship() throws {
        try TypedSeeds.with { fixture in
            try fixture.context.connection.executeScript("ALTER TABLE title RENAME TO heading")
            let context = try fixture.freshContext()
            // Person's own relationship to titles is gone too: its check names it.
            let error = #expect(throws: RelateError.self) { _ = try context.object(Person.self, primaryKey: 1) }
            #expect(error?.kind == .schemaChanged)
            #expect(error?.message.contains("relationship \"title\"") == true, "\(error?.message ?? "")")
        }
    }

    @Test func checkedOncePerModelAndModelWideCheck() throws {
        try TypedSeeds.with { fixture in
            try RelateModel.check(fixture.context)
            #expect(RelateModel.entities.count == 4)
            // A second context of the same model checks nothing again, and a column added at
            // the end is no difference.
            try fixture.context.connection.execute("ALTER TABLE email ADD COLUMN verified boolean")
            let fresh = try fixture.freshContext()
            try RelateModel.check(fresh)
            #expect(try fresh.object(Email.self, primaryKey: 1)?.address == "ada@example.com")
        }
    }
}
