import Foundation
import Testing

@testable import Relate

/// Batched fetching: a cursor read batch by batch, and the objects nobody holds let go of
/// after each batch, while an object the program keeps stays the one for its row.
@Suite struct BatchFetchTests {
    /// 2,500 people; each of the first 100 has two emails.
    static let data = """
        INSERT INTO person (firstname, surname) SELECT 'P' || n, 'S' || (n % 7) FROM generate_series(1, 2500) n;
        INSERT INTO email (address, person_id) SELECT 'e' || n || '@example.com', 1 + (n - 1) / 2 FROM generate_series(1, 200) n;
        """

    final class Weak {
        weak var object: DatabaseObject?
        init(_ object: DatabaseObject) { self.object = object }
    }

    @Test func aWalkReadsACursorAndLetsGoOfWhatNobodyHolds() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.data) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            var sizes: [Int] = []
            var weak: [Weak] = []
            var kept: DatabaseObject?
            let request = FetchRequest("person", where: Key("id") > 0, orderBy: [.ascending("id")])
            let sql = try fixture.sql {
                try context.fetch(request, batchSize: 1_000) { batch in
                    sizes.append(batch.count)
                    weak += batch.map(Weak.init)
                    if kept == nil { kept = batch[4] }
                }
            }
            #expect(sizes == [1_000, 1_000, 500])
            let select = "SELECT t0.\"id\", t0.\"firstname\", t0.\"surname\" FROM \(s).\"person\" t0 WHERE t0.\"id\" > $1 ORDER BY t0.\"id\" ASC"
            // One batch first; then as many as fit (rows this narrow: ten batches, 10,000 rows).
            #expect(
                sql == [
                    "BEGIN", "DECLARE relate_cursor_1 NO SCROLL CURSOR FOR \(select)", "FETCH FORWARD 1000 FROM relate_cursor_1",
                    "FETCH FORWARD 10000 FROM relate_cursor_1", "CLOSE relate_cursor_1", "COMMIT",
                ])
            // Only the kept object is still alive, and it is still the one for its row.
            #expect(weak.filter { $0.object != nil }.count == 1)
            let person = try context.entityIndex(named: "person")
            #expect(context.graph.registries[person].all.count == 1)
            let trips = context.connection.roundTrips
            #expect(try context.object("person", primaryKey: 5) === kept)
            #expect(context.connection.roundTrips == trips)
            #expect(try kept?.value(forKey: "firstname") as? String == "P5")
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Each batch's cells go where the batch before's were, once nothing holds them: freed
    /// and allocated again, they made the allocator give memory back and fault it in again.
    @Test func aBatchReusesTheCellsOfTheOneBeforeAndKeptObjectsKeepTheirValues() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.data) { fixture in
            let context = fixture.context
            // Weak: a strong reference would itself keep the cells from being reused.
            weak var first: ValueStorage?
            var reused: [Bool] = []
            var kept: [DatabaseObject] = []
            try context.fetch(FetchRequest("person", orderBy: [.ascending("id")]), batchSize: 1_000) { batch in
                if first == nil { first = batch[0].storage } else { reused.append(first === batch[0].storage) }
                kept.append(batch[999 % batch.count])
            }
            #expect(reused == [true, true])
            #expect(try kept.map { try $0.value(forKey: "firstname", as: String.self) } == ["P1000", "P2000", "P2500"])
            #expect(Set(kept.map { ObjectIdentifier($0.storage) }).count == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A `FETCH` asks for whole batches: as many as make about 4 MB of rows, 10,000 rows at
    /// most, one at least.
    @Test func aFetchAsksForWholeBatchesWithinItsBounds() {
        #expect(DatabaseContext.batchesPerFetch(batchSize: 1_000, rowBytes: 125) == 10)
        #expect(DatabaseContext.batchesPerFetch(batchSize: 1, rowBytes: 100) == 10_000)
        #expect(DatabaseContext.batchesPerFetch(batchSize: 1_000, rowBytes: 1_000) == 4)
        #expect(DatabaseContext.batchesPerFetch(batchSize: 1_000, rowBytes: 100_000) == 1)
        #expect(DatabaseContext.batchesPerFetch(batchSize: 20_000, rowBytes: 50) == 1)
        #expect(DatabaseContext.batchesPerFetch(batchSize: 3_000, rowBytes: 0) == 3)
    }

    @Test func objectsLoadedInTheBodyAreLetGoOfTooAndHeldSetsStay() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.data) { fixture in
            let context = fixture.context
            var emails: [Weak] = []
            var keptPerson: DatabaseObject?
            var keptSet: RelationshipSet?
            var keptEmail: DatabaseObject?
            try context.fetch(FetchRequest("person", where: Key("id") <= 150, orderBy: [.ascending("id")]), batchSize: 40) { batch in
                try context.prefetch(["email"], for: batch)
                for person in batch {
                    for email in try person.objects(forKey: "email") { emails.append(Weak(email)) }
                }
                if keptPerson == nil {
                    keptPerson = batch[0]
                    keptSet = try batch[0].objects(forKey: "email")
                    keptEmail = try batch[1].objects(forKey: "email").allObjects.first
                }
            }
            #expect(emails.count == 200)
            // Ada's two emails (held through her set), and the one email kept: that email's
            // person was let go of, so its to-one is loaded again when touched.
            #expect(emails.filter { $0.object != nil }.count == 3)
            #expect(context.graph.loadedBoxes.count <= 3)
            let trips = context.connection.roundTrips
            #expect(try keptPerson?.objects(forKey: "email") === keptSet)
            #expect(keptSet?.count == 2)
            #expect(context.connection.roundTrips == trips)
            let owner = try keptEmail?.object(forKey: "person")
            #expect(try owner?.value(forKey: "firstname") as? String == "P2")
            #expect(try fixture.disagreements() == [])

            // Writes through a kept object still keep memory and database in step.
            let moved = try #require(keptSet?.allObjects.first)
            try moved.setValue(owner, forKey: "person")
            #expect(keptSet?.count == 1)
            #expect(try owner?.objects(forKey: "email").contains(moved) == true)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aBodyThatThrowsRollsTheWalkBack() throws {
        struct Stop: Error {}
        try ObjectFixture.with("seed_person_email", extraSQL: Self.data) { fixture in
            let context = fixture.context
            var seen = 0
            do {
                try context.fetch(FetchRequest("person", orderBy: [.ascending("id")]), batchSize: 500) { batch in
                    seen += batch.count
                    try batch[0].setValue("Changed", forKey: "surname")
                    if seen == 1_000 { throw Stop() }
                }
                Issue.record("the body's error was lost")
            } catch is Stop {}
            #expect(seen == 1_000)
            #expect(try context.count("person", where: Key("surname") == "Changed") == 0)
            #expect(context.connection.isInTransaction == false)
            #expect(try fixture.disagreements() == [])
            // Inside a transaction of the program's own: a savepoint.
            try context.transaction {
                var count = 0
                try context.fetch(FetchRequest("person"), batchSize: 2_000) { count += $0.count }
                #expect(count == 2_500)
            }
            do {
                try context.fetch(FetchRequest("person"), batchSize: 0, { _ in })
                Issue.record("a batch size of 0 was taken")
            } catch let error as RelateError {
                #expect(error.kind == .invalidRequest)
            }
        }
    }
}
