import Foundation
import Observation
import Testing

@testable import Relate

/// A live fetch stays the request's answer after the context's own writes and another
/// client's processed commits; its differences turn one answer into the next; observers are
/// told of changes to its region and of nothing else.
@Suite struct LiveResultsTests {
    /// The primary keys of `objects`, as `Int`s.
    static func keys(_ objects: [DatabaseObject]) -> [Int] {
        objects.compactMap { $0.primaryKey.first as? Int }
    }

    /// The live answer equals a fresh fetch of the same request by a context of its own, and
    /// the difference turns the answer before into it.
    static func expectCurrent(
        _ live: LiveResults, before: [Int], _ fixture: ObjectFixture, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [Int] {
        let now = keys(try live.objects)
        let fresh = keys(try fixture.freshContext().fetch(live.request))
        #expect(now == fresh, sourceLocation: sourceLocation)
        #expect(apply(live.lastDifference, to: before) == now, sourceLocation: sourceLocation)
        return now
    }

    /// `difference` applied to `keys` as its documentation says.
    static func apply(_ difference: LiveResults.Difference, to keys: [Int]) -> [Int] {
        var keys = keys
        let out = Set(difference.removed.map(\.index) + difference.moved.map(\.from))
        keys = keys.enumerated().filter { !out.contains($0.offset) }.map(\.element)
        let into = (difference.inserted.map { ($0.index, $0.primaryKey) } + difference.moved.map { ($0.to, $0.primaryKey) })
            .sorted { $0.0 < $1.0 }
        for (index, key) in into { keys.insert(key.first as! Int, at: index) }
        return keys
    }

    @Test func ownWritesKeepTheAnswerInOrderAndLimit() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let hoppers = try context.liveFetch(
                FetchRequest("person", where: Key("surname") == "Hopper", orderBy: [.ascending("firstname")], limit: 2))
            var answer = Self.keys(try hoppers.objects)
            #expect(answer == [2])
            // A row that comes to match joins in order.
            let ann = try context.insert("person", values: ["firstname": "Ann", "surname": "Hopper"])
            answer = try Self.expectCurrent(hoppers, before: answer, fixture)
            #expect(answer == [3, 2])
            #expect(hoppers.lastDifference.inserted.map(\.index) == [0])
            // The limit holds: a third match beyond it shows nowhere.
            try context.insert("person", values: ["firstname": "Zoe", "surname": "Hopper"])
            answer = try Self.expectCurrent(hoppers, before: answer, fixture)
            #expect(answer == [3, 2])
            // A row that stops matching leaves; the one past the limit comes in.
            try ann.setValue("King", forKey: "surname")
            answer = try Self.expectCurrent(hoppers, before: answer, fixture)
            #expect(answer == [2, 4])
            // A change of the sort key moves a row.
            let grace = try #require(try context.object("person", primaryKey: 2))
            try grace.setValue("Zz", forKey: "firstname")
            answer = try Self.expectCurrent(hoppers, before: answer, fixture)
            #expect(answer == [4, 2])
            // A delete.
            try context.delete(try #require(try context.object("person", primaryKey: 4)))
            answer = try Self.expectCurrent(hoppers, before: answer, fixture)
            #expect(answer == [2])
        }
    }

    @Test func aChangeOutsideTheRegionSendsNothing() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let people = try context.liveFetch(FetchRequest("person", where: Key("surname") == "Hopper"))
            _ = try people.objects
            let email = try #require(try context.object("email", primaryKey: 1))
            try email.setValue("ada@new.example", forKey: "address")
            #expect(!people.needsUpdate)
            #expect(try fixture.sql { _ = try people.objects }.isEmpty)
            // Through a to-many, the members' table is in the region.
            let sailors = try context.liveFetch(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil"))))
            #expect(Self.keys(try sailors.objects) == [])
            try email.setValue("ada@navy.mil", forKey: "address")
            #expect(sailors.needsUpdate)
            #expect(Self.keys(try sailors.objects) == [1])
            // A new email of Grace's, inserted through her set.
            let graces = try #require(try context.object("person", primaryKey: 2)).objects(forKey: "email")
            try graces.insert(try context.insert("email", values: ["address": "grace@navy.mil"]))
            #expect(Self.keys(try sailors.objects) == [1, 2])
        }
    }

    @Test func manyToManyThroughAHelperKeepsTheAnswer() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let doctors = try context.liveFetch(FetchRequest("person", where: Key("title").any(Key("name") == "Doctor")))
            var answer = Self.keys(try doctors.objects)
            #expect(answer == [2])
            let ada = try #require(try context.object("person", primaryKey: 1))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            try ada.objects(forKey: "title").insert(doctor)
            answer = try Self.expectCurrent(doctors, before: answer, fixture)
            #expect(Set(answer) == [1, 2])
            try ada.setValue([DatabaseObject](), forKey: "title")
            answer = try Self.expectCurrent(doctors, before: answer, fixture)
            #expect(answer == [2])
        }
    }

    @Test func aRolledBackWriteLeavesTheAnswerAsTheDatabaseHasIt() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let hoppers = try context.liveFetch(FetchRequest("person", where: Key("surname") == "Hopper"))
            let answer = Self.keys(try hoppers.objects)
            struct Abandon: Error {}
            #expect(throws: Abandon.self) {
                try context.transaction {
                    try context.insert("person", values: ["firstname": "Ann", "surname": "Hopper"])
                    #expect(Self.keys(try hoppers.objects) == [2, 3])
                    throw Abandon()
                }
            }
            _ = try Self.expectCurrent(hoppers, before: [2, 3], fixture)
            #expect(Self.keys(try hoppers.objects) == answer)
        }
    }

    /// `withObservationTracking` on the answer: a write in the region fires once, one
    /// outside it never; another live result's observer is not told of this one's change.
    @Test func observersAreToldOfTheirRegionOnly() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let hoppers = try context.liveFetch(FetchRequest("person", where: Key("surname") == "Hopper"))
            let titles = try context.liveFetch(FetchRequest("title", orderBy: [.ascending("name")]))
            let peopleFired = Locked(0)
            let titlesFired = Locked(0)
            func observe(_ live: LiveResults, _ fired: Locked<Int>) {
                withObservationTracking { _ = try? live.objects } onChange: { fired.withLock { $0 += 1 } }
            }
            observe(hoppers, peopleFired)
            observe(titles, titlesFired)
            try context.insert("title", values: ["name": "Admiral"])
            #expect(peopleFired.withLock { $0 } == 0)
            #expect(titlesFired.withLock { $0 } == 1)
            #expect(try titles.objects.count == 4)
            observe(titles, titlesFired)
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue("Hopper", forKey: "surname")
            #expect(peopleFired.withLock { $0 } == 1)
            #expect(titlesFired.withLock { $0 } == 1)
            #expect(Set(Self.keys(try hoppers.objects)) == [1, 2])
        }
    }

    /// Another client's commits, once processed, keep the answer, for both mechanisms.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func anotherClientsCommitsKeepTheAnswer(_ mechanism: ChangeTracking.Mechanism) throws {
        try ChangeTrackingTests.withTrackedDatabase(mechanism) { url, setup, observer in
            let context = observer.context
            let request = FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil")), orderBy: [.ascending("id")])
            let sailors = try context.liveFetch(request)
            #expect(Self.keys(try sailors.objects) == [])
            // A row no object in memory stands for, in a table nothing loaded refers to.
            let byName = try context.liveFetch(FetchRequest("person", where: Key("surname") == "Sailor"))
            #expect(Self.keys(try byName.objects) == [])
            let fired = Locked(0)
            withObservationTracking { _ = try? sailors.objects } onChange: { fired.withLock { $0 += 1 } }
            try setup.execute("INSERT INTO person (firstname, surname) VALUES ('Ann', 'Sailor')")
            try setup.execute("INSERT INTO email (address, person_id) VALUES ('ann@navy.mil', 4), ('grace@navy.mil', 2)")
            _ = try observer.settle()
            #expect(fired.withLock { $0 } == 1)
            #expect(Self.keys(try byName.objects) == [4])
            #expect(Self.keys(try sailors.objects) == [2, 4])
            try setup.execute("DELETE FROM email WHERE address = 'grace@navy.mil'")
            _ = try observer.settle()
            #expect(Self.keys(try sailors.objects) == [4])
            let fresh = try DatabaseContext(url: url)
            #expect(Self.keys(try sailors.objects) == Self.keys(try fresh.fetch(request)))
        }
    }
}

/// 50 live requests of varied shape — through to-ones, `EXISTS` through helpers, `isEmpty`,
/// sorted, limited, offset — against a random workload of another client, for both
/// mechanisms: after the feed settles every answer equals a fresh fetch, and the
/// differences read along the way, applied to the first answer, give the last.
@Suite struct LiveWorkloadTests {
    static func requests() -> [FetchRequest] {
        var requests: [FetchRequest] = []
        for digit in 0..<10 {
            requests.append(FetchRequest("person", where: Key("surname").hasPrefix("S\(digit)"), orderBy: [.ascending("id")]))
        }
        for suffix in ["0@x", "1@x", "5@x", "@x", "7@x"] {
            requests.append(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix(suffix)), orderBy: [.descending("id")]))
        }
        for name in ["Countess", "Rear Admiral", "Doctor"] {
            requests.append(FetchRequest("person", where: Key("title").any(Key("name") == name), orderBy: [.ascending("id")]))
            requests.append(FetchRequest("title", where: Key("person").any(Key("surname").hasPrefix("S")), orderBy: [.ascending("name")]))
            requests.append(FetchRequest("person", where: !Key("title").any(Key("name") == name), orderBy: [.ascending("surname"), .ascending("id")], limit: 4))
        }
        requests.append(FetchRequest("person", where: Key("email").isEmpty, orderBy: [.ascending("id")]))
        requests.append(FetchRequest("person", where: Key("title").isEmpty, orderBy: [.ascending("id")]))
        requests.append(FetchRequest("person", where: Key("email").all(Key("address").hasSuffix("@x")), orderBy: [.ascending("id")]))
        for offset in 0..<5 {
            requests.append(FetchRequest("person", orderBy: [.descending("id")], limit: 3, offset: offset))
            requests.append(FetchRequest("email", where: Key("person.surname").hasPrefix("S\(offset)"), orderBy: [.ascending("id")]))
            requests.append(FetchRequest("email", orderBy: [.ascending("person.surname", nulls: .last), .ascending("id")], limit: 5, offset: offset))
        }
        for person in 1...4 {
            requests.append(FetchRequest("person_title_rel", where: Key("person.id") == person, orderBy: [.ascending("title_id")]))
        }
        requests.append(FetchRequest("email", where: Key("person") == nil, orderBy: [.ascending("id")]))
        requests.append(FetchRequest("person", where: Key("surname") == "Hopper" || Key("email").any(), orderBy: [.ascending("id")]))
        requests.append(FetchRequest("title", orderBy: [.descending("id")]))
        requests.append(FetchRequest("email", where: Key("address").in(["e1@x", "e2@x", "e3@x", "e40@x"]), orderBy: [.ascending("id")]))
        return requests
    }

    /// An answer's rows, by primary key.
    static func keys(_ objects: [DatabaseObject]) -> [String] {
        objects.map { "\($0.primaryKey)" }
    }

    static func apply(_ difference: LiveResults.Difference, to keys: [String]) -> [String] {
        let out = Set(difference.removed.map(\.index) + difference.moved.map(\.from))
        var keys = keys.enumerated().filter { !out.contains($0.offset) }.map(\.element)
        let into = (difference.inserted.map { ($0.index, $0.primaryKey) } + difference.moved.map { ($0.to, $0.primaryKey) })
            .sorted { $0.0 < $1.0 }
        for (index, key) in into { keys.insert("\(key)", at: index) }
        return keys
    }

    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func fiftyLiveRequestsStayTheirAnswers(_ mechanism: ChangeTracking.Mechanism) throws {
        try ChangeTrackingTests.withTrackedDatabase(mechanism) { url, setup, observer in
            let context = observer.context
            let requests = Self.requests()
            #expect(requests.count == 50)
            let lives = try requests.map { try context.liveFetch($0) }
            var answers = try lives.map { Self.keys(try $0.objects) }
            var composed = answers
            /// Reads every answer, checking that its difference turns the last into it.
            func readAll() throws {
                for (position, live) in lives.enumerated() {
                    let now = Self.keys(try live.objects)
                    if now != answers[position] {
                        composed[position] = Self.apply(live.lastDifference, to: composed[position])
                        #expect(composed[position] == now, "\(live.request.entity) #\(position)")
                        answers[position] = now
                    }
                }
            }
            // Now and then the context catches up and the answers are read mid-workload.
            try ChangeTrackingTests.randomWorkload(
                on: try Connection(url: url), seed: 29, operations: 400, surname: { "S\($0 % 10)" }, catchUpOneIn: 10
            ) {
                _ = try context.processChanges()
                try readAll()
            }
            _ = try observer.settle()
            try readAll()
            let fresh = try DatabaseContext(url: url)
            for (position, live) in lives.enumerated() {
                #expect(Self.keys(try live.objects) == Self.keys(try fresh.fetch(live.request)), "\(live.request.entity) #\(position)")
            }
        }
    }
}

extension LiveWorkloadTests {
    /// The same 50 requests through `database.observe`, against the same kind of workload
    /// (13 of them are decided from the changed rows alone, the rest read again
    /// whenever their region changes): once the feed settles every stream's last answer is
    /// a fresh fetch's, and where a stream saw every version, its differences applied to
    /// its first answer give its last.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func fiftyObservedRequestsStayTheirAnswers(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let database = try Database(url: url, maxConnections: 3)
            defer { database.close() }
            let requests = Self.requests()
            var collectors: [DatabaseObserveTests.Collector] = []
            for request in requests { collectors.append(DatabaseObserveTests.Collector(try await database.observe(request))) }
            for collector in collectors { _ = try await collector.wait(for: 1) }
            try ChangeTrackingTests.randomWorkload(
                on: try Connection(url: url), seed: 31, operations: 300, surname: { "S\($0 % 10)" }, catchUpOneIn: 1_000_000
            ) {}
            let fresh = try DatabaseContext(url: url)
            let expected = try requests.map { Self.keys(try fresh.fetch($0)) }
            func answers() -> [[String]] {
                collectors.map { $0.snapshots.withLock { $0.last?.rows.map { "\($0.primaryKey)" } ?? [] } }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while answers() != expected, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            for (position, answer) in answers().enumerated() {
                #expect(answer == expected[position], "\(requests[position].entity) #\(position)")
            }
            for collector in collectors {
                let seen = collector.snapshots.withLock { $0 }
                guard seen.map(\.version) == Array(0..<seen.count) else { continue }
                var composed: [String] = []
                for snapshot in seen { composed = Self.apply(snapshot.difference, to: composed) }
                #expect(composed == seen.last?.rows.map { "\($0.primaryKey)" })
            }
            let deciding = try requests.filter { try $0.decidesFromChangedRows(in: database.layout.withLock { $0 }) }.count
            #expect(deciding == 13)
        }
    }
}

/// Live results of a generated type.
@Suite struct TypedLiveResultsTests {
    @Test func aTypedLiveFetchStaysItsAnswer() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            let hoppers = try context.liveFetch(Person.self, where: { $0.surname == "Hopper" }, orderBy: { [$0.firstname.ascending] })
            #expect(try hoppers.objects.map { try $0.firstname } == ["Grace"])
            let fired = Locked(0)
            withObservationTracking { _ = try? hoppers.objects } onChange: { fired.withLock { $0 += 1 } }
            try context.insert(Person.self) { $0.firstname = "Ann"; $0.surname = "Hopper" }
            #expect(fired.withLock { $0 } == 1)
            #expect(try hoppers.objects.map { try $0.firstname } == ["Ann", "Grace"])
            #expect(hoppers.lastDifference.inserted.map(\.index) == [0])
        }
    }
}
