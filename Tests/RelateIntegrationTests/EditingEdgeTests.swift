import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Pending writes that memory must keep, or give back, through a refresh, a rolled-back
/// transaction, an undo and a save: each found by a review, each failing before its fix.
@Suite struct EditingEdgeTests {
    static func with(_ sql: String, _ body: (ObjectFixture) throws -> Void) throws { try WriteEdgeTests.with(sql, body) }

    /// `refresh()` of an object whose key is changed pending: its row is under the old key,
    /// and it was marked deleted, the key change never saved.
    @Test func aRefreshKeepsAPendingKeyChange() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let grace = try #require(try context.object("person", primaryKey: 2))
            try grace.setValue(20, forKey: "id")
            try context.refresh(grace)
            #expect(!grace.isDeleted)
            try context.save()
            let rows = try context.connection.query("SELECT id FROM \"\(fixture.schema)\".person ORDER BY id")
            #expect(try rows.map { try $0.decode(Int.self, at: 0) } == [1, 20])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `refresh()` of a pending insert: it has no row yet, and was marked deleted.
    @Test func aRefreshKeepsAPendingInsert() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let new = try context.insert("person", values: ["name": "Mary"])
            try context.refreshAll()
            #expect(!new.isDeleted)
            #expect(context.insertedObjects.count == 1)
            try context.save()
            #expect(try context.connection.query("SELECT count(*)::int8 FROM \"\(fixture.schema)\".person")[0].decode(Int.self, at: 0) == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `save()` inside a `transaction {}` that then rolls back: the changes are pending
    /// again, memory as before the save (they were gone, memory holding the unsaved value).
    @Test func aSaveInATransactionThatRollsBackLeavesTheChangesPending() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue("King", forKey: "name")
            let new = try context.insert("person", values: ["name": "Mary"])
            struct Boom: Error {}
            #expect(throws: Boom.self) { try context.transaction { try context.save(); throw Boom() } }
            #expect(context.hasChanges)
            #expect(try ada.value(forKey: "name") as? String == "King")
            #expect(context.insertedObjects.map(ObjectIdentifier.init) == [ObjectIdentifier(new)])
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try context.connection.query("SELECT count(*)::int8 FROM \"\(fixture.schema)\".person")[0].decode(Int.self, at: 0) == 3)
        }
    }
}
