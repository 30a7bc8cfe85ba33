import Testing

@testable import Relate

/// What memory learns from the database inside a transaction (a conflict's correction, a
/// set loaded there) survives the transaction's roll-back: undoing its memory changes must
/// not put back what the database had already disproved. (Each conflict of
/// `StaleWriteTests` is also tried inside a transaction that rolls back.)
@Suite struct RollbackAfterConflictTests {
    struct Stop: Error {}

    /// Runs `body` in a transaction of `context` that rolls back, whatever it throws.
    static func rolledBack(_ context: DatabaseContext, _ body: () throws -> Void) {
        do {
            try context.transaction {
                try body()
                throw Stop()
            }
        } catch {}
    }

    /// A conflict in a savepoint, then the enclosing transaction rolls back too.
    @Test func theCorrectionSurvivesAnEnclosingRollback() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let adas = try ada.objects(forKey: "email")
            let home = try #require(try context.object("email", primaryKey: 1))
            try TestDatabase.connect().execute("UPDATE \(fixture.schema).email SET person_id = 2 WHERE id = 1")
            Self.rolledBack(context) {
                Self.rolledBack(context) { try adas.remove(home) }
                #expect((try? home.value(forKey: "person_id", as: Int.self)) == 2)
            }
            #expect(try home.value(forKey: "person_id", as: Int.self) == 2)
            #expect(!adas.contains(home))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A set first loaded in a transaction that rolls back stays the set handed out, and
    /// holds what the database holds once the transaction is undone.
    @Test func aSetFirstLoadedInARolledBackTransactionIsRefilledNotDetached() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            var adas: RelationshipSet?
            Self.rolledBack(context) {
                let set = try ada.objects(forKey: "email")
                adas = set
                try set.insert(try context.insert("email", values: ["address": "new@example.com"]))
                #expect(set.count == 3)
            }
            let held = try #require(adas)
            #expect(try ada.objects(forKey: "email") === held)
            #expect(held.count == 2)
            let ids = try held.allObjects.map { try $0.value(forKey: "id", as: Int.self) ?? 0 }
            #expect(ids.sorted() == [1, 2])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// The identity map's placeholder for removed objects holds no values; a test's report
    /// reflecting on a context reached it and crashed describing it.
    @Test func anObjectWithoutValuesDescribesItselfWithoutAKey() throws {
        try ObjectFixture.with("seed_person_email") { fixture in
            let person = try fixture.context.entityIndex(named: "person")
            let placeholder = DatabaseObject(storage: ValueStorage(table: fixture.context.graph.tables[person], capacity: 0), base: 0)
            #expect(placeholder.description == "<person>")
        }
    }
}
