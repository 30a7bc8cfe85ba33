import Foundation
import Observation
import Testing

@testable import Relate

/// The examples of Relate's "Live objects and live queries" article
/// (`Sources/Relate/Relate.docc/LiveObjects.md`), as the article prints them, against
/// another client's commits. Change the two together.
@Suite struct LiveObjectsArticleTests {
    @Test func aLiveFetchAndItsObserver() throws {
        try ChangeTrackingTests.withTrackedDatabase(.triggers) { _, setup, observer in
            let context = observer.context
            let sailors = try context.liveFetch(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil"))))
            #expect(try sailors.objects.isEmpty)        // read again (one query) only when its tables changed
            let told = Locked<[String]>([])
            withObservationTracking { _ = try? sailors.objects } onChange: { told.withLock { $0.append("sailors changed") } }
            try setup.execute("INSERT INTO email (address, person_id) VALUES ('grace@navy.mil', 2)")
            _ = try observer.settle()                    // another client added a navy address: sailors is stale
            #expect(told.withLock { $0 } == ["sailors changed"])
            #expect(try sailors.objects.map { try $0.value(forKey: "firstname", as: String.self) } == ["Grace"])
            #expect(sailors.lastDifference.inserted.map(\.index) == [0])   // inserted / removed / moved
        }
    }

    @Test func objectsAndSetsUnderObservation() throws {
        try ChangeTrackingTests.withTrackedDatabase(.triggers) { _, _, observer in
            let context = observer.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let told = Locked<[String]>([])
            context.isObservable = true
            withObservationTracking { _ = try? ada.value(forKey: "surname") } onChange: { told.withLock { $0.append("surname changed") } }
            withObservationTracking { _ = try? ada.objects(forKey: "email").count } onChange: { told.withLock { $0.append("emails changed") } }
            try ada.setValue("King", forKey: "surname")  // "surname changed"; the emails' observer is not told
            #expect(told.withLock { $0 } == ["surname changed"])
        }
    }

    @Test func aServerObservesARequest() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTracking.enable(on: setup)
            let database = try Database(url: url, maxConnections: 2)
            defer { database.close() }
            let pushed = Locked<[[String]]>([])
            func push(_ rows: [LiveRow]) { pushed.withLock { $0.append(rows.compactMap { $0.values["surname"] as? String }) } }
            let stream = try await database.observe(FetchRequest("person", orderBy: [.ascending("surname")]))
            let server = Task {
                for try await snapshot in stream {
                    push(snapshot.rows)                  // server-sent events, a WebSocket
                    if snapshot.version == 1 { break }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            try setup.execute("INSERT INTO person (firstname, surname) VALUES ('Charles', 'Babbage')")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.value }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    server.cancel()
                }
                try await group.next()
                group.cancelAll()
            }
            #expect(pushed.withLock { $0 } == [["Hopper", "Lovelace", "Turing"], ["Babbage", "Hopper", "Lovelace", "Turing"]])
        }
    }
}
