import Foundation
import Testing

@testable import Relate

/// `database.observe` follows writes by condition and bulk inserts made through a
/// `Database` unit: they are commits like any other, whichever change feed carries them.
@Suite struct SetWriteObserveTests {
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func observersFollowWritesByCondition(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let database = try Database(url: url, maxConnections: 2)
            defer { database.close() }
            let hoppers = DatabaseObserveTests.Collector(
                try await database.observe(FetchRequest("person", where: Key("surname") == "Hopper", orderBy: [.ascending("id")])))
            #expect(DatabaseObserveTests.ids(try await hoppers.wait(for: 1, timeout: .seconds(300)).last) == [2])

            let renamed = try await database.write { try $0.update("person", where: Key("email").any(Key("address").hasSuffix("example.com")), values: ["surname": "Hopper"]) }
            #expect(renamed == 2)
            #expect(DatabaseObserveTests.ids(try await hoppers.wait(for: 2, timeout: .seconds(300)).last) == [1, 2])

            let made = try await database.write { try $0.insert("person", rows: [["firstname": "Ann", "surname": "Hopper"], ["firstname": "Bob", "surname": "Hopper"]]).count }
            #expect(made == 2)
            #expect(DatabaseObserveTests.ids(try await hoppers.wait(for: 3, timeout: .seconds(300)).last) == [1, 2, 4, 5])

            let gone = try await database.write { try $0.delete("person", where: Key("firstname").in(["Ada", "Ann"])) }
            #expect(gone == 2)
            #expect(DatabaseObserveTests.ids(try await hoppers.wait(for: 4, timeout: .seconds(300)).last) == [2, 5])
        }
    }
}
