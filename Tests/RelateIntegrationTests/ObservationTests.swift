import Foundation
import Observation
import Testing

@testable import Relate

/// Objects and relationship sets under Swift's Observation: each kind of change fires the
/// observers that read what changed, and no other.
@Suite struct ObservationTests {
    /// Counts how often the observers of what `read` reads were told of a change. Each
    /// `withObservationTracking` fires at most once; `observe` registers again.
    final class Observed {
        let fired = Locked(0)
        let read: () -> Void
        init(_ read: @escaping () -> Void) {
            self.read = read
            observe()
        }
        func observe() {
            withObservationTracking(read) { [fired] in fired.withLock { $0 += 1 } }
        }
        var count: Int { fired.withLock { $0 } }
    }

    static func attribute(_ object: DatabaseObject, _ key: String) -> Observed {
        Observed { _ = try? object.value(forKey: key) }
    }

    @Test func offByDefault() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            #expect(!fixture.context.isObservable)
            let ada = try #require(try fixture.context.object("person", primaryKey: 1))
            let surname = Self.attribute(ada, "surname")
            try ada.setValue("King", forKey: "surname")
            #expect(surname.count == 0)
        }
    }

    /// An own write fires the attribute it wrote, read any way, and not its neighbours.
    @Test func anOwnWriteFiresWhatItChanged() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.isObservable = true
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let surname = Self.attribute(ada, "surname")
            let typed = Observed { _ = try? ada.value(forKey: "surname", as: String.self) }
            let firstname = Observed { _ = try? ada.value(forKey: "firstname", as: String.self) }
            let gracesSurname = Self.attribute(grace, "surname")
            let snapshot = Observed { _ = try? grace.snapshot() }
            try ada.setValue("King", forKey: "surname")
            #expect(surname.count == 1)
            #expect(typed.count == 1)
            #expect(firstname.count == 0)
            #expect(gracesSurname.count == 0)
            #expect(snapshot.count == 0)
            // Writing the value it holds changes nothing.
            surname.observe()
            try ada.setValue("King", forKey: "surname")
            #expect(surname.count == 1)
            try grace.setValue("Brewster", forKey: "firstname")
            #expect(snapshot.count == 1)
            #expect(gracesSurname.count == 0)
            #expect(try ada.value(forKey: "surname", as: String.self) == "King")
        }
    }

    /// A set's members: an insert or a remove fires the set's observers, not its owner's
    /// attributes'; the other owner's set is not told. A to-one follows its foreign key.
    @Test func membershipAndToOnes() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.isObservable = true
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let adasEmails = try ada.objects(forKey: "email")
            let gracesEmails = try grace.objects(forKey: "email")
            let email = try #require(adasEmails.allObjects.first)
            let adas = Observed { _ = adasEmails.count }
            let graces = Observed { _ = gracesEmails.allObjects }
            let owner = Observed { _ = try? email.object(forKey: "person") }
            let address = Self.attribute(email, "address")
            let adasName = Self.attribute(ada, "surname")

            try gracesEmails.insert(email)          // UPDATE email SET person_id = 2
            #expect(adas.count == 1)
            #expect(graces.count == 1)
            #expect(owner.count == 1)
            #expect(address.count == 0)
            #expect(adasName.count == 0)
            #expect(try email.object(forKey: "person") === grace)

            owner.observe()
            try grace.setValue("Hopper-King", forKey: "surname")
            #expect(owner.count == 1)               // the to-one's answer is the same object

            let new = try context.insert("email", values: ["address": "new@example.com"])
            adas.observe()
            graces.observe()
            try adasEmails.insert(new)
            #expect(adas.count == 2)
            #expect(graces.count == 1)
        }
    }

    /// A many-to-many set replaced whole (members that leave, members that join) fires its
    /// observers; the other person's set is not told.
    @Test func aReplacedManyToManyFiresItsSet() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            context.isObservable = true
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let adas = try ada.objects(forKey: "title")
            let graces = try grace.objects(forKey: "title")
            let adasObserved = Observed { _ = adas.allObjects }
            let gracesObserved = Observed { _ = graces.count }
            let titles = try context.fetch("title")
            try ada.setValue(titles, forKey: "title")
            #expect(adasObserved.count == 1)
            #expect(gracesObserved.count == 0)
            #expect(adas.count == 3)
        }
    }

    /// Deleting an object fires every observer of it; a roll-back that brings it back fires
    /// them again.
    @Test func deleteAndRollBack() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.isObservable = true
            let ada = try #require(try context.object("person", primaryKey: 1))
            let email = try #require(try context.object("email", primaryKey: 3))
            struct Undo: Error {}
            var firstname: Observed?
            var surname: Observed?
            #expect(throws: Undo.self) {
                try context.transaction {
                    try ada.setValue("King", forKey: "surname")
                    try context.delete(email)
                    // Observed now: the roll-back is the next change.
                    surname = Self.attribute(ada, "surname")
                    firstname = Self.attribute(ada, "firstname")
                    throw Undo()
                }
            }
            #expect(surname?.count == 1)
            #expect(firstname?.count == 0)
            #expect(try ada.value(forKey: "surname", as: String.self) == "Lovelace")
            #expect(!email.isDeleted)

            let address = Self.attribute(email, "address")
            try context.delete(email)
            #expect(address.count == 1)
            #expect(firstname?.count == 0)
        }
    }

    /// A refresh fires what the database changed since, and nothing it left alone.
    @Test func aRefreshFiresWhatChanged() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.isObservable = true
            let ada = try #require(try context.object("person", primaryKey: 1))
            let surname = Self.attribute(ada, "surname")
            let firstname = Self.attribute(ada, "firstname")
            let other = try fixture.freshContext()
            _ = try other.update("person", primaryKey: 1, values: ["surname": "King"])
            #expect(surname.count == 0)
            try context.refresh(ada)
            #expect(surname.count == 1)
            #expect(firstname.count == 0)
        }
    }

    /// Another client's commits, once processed, fire what they changed, for both mechanisms.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func anotherClientsCommit(_ mechanism: ChangeTracking.Mechanism) throws {
        try ChangeTrackingTests.withTrackedDatabase(mechanism) { _, setup, observer in
            let context = observer.context
            context.isObservable = true
            let ada = try #require(try context.object("person", primaryKey: 1))
            let alan = try #require(try context.object("person", primaryKey: 3))
            let surname = Self.attribute(ada, "surname")
            let firstname = Self.attribute(ada, "firstname")
            let alans = Self.attribute(alan, "surname")
            let adasEmails = try ada.objects(forKey: "email")
            let alansEmails = try alan.objects(forKey: "email")
            let adasSet = Observed { _ = adasEmails.count }
            let alansSet = Observed { _ = alansEmails.count }
            try setup.execute("UPDATE person SET surname = 'King' WHERE id = 1")
            try setup.execute("INSERT INTO email (address, person_id) VALUES ('alan@example.com', 3)")
            _ = try observer.settle()
            #expect(surname.count == 1)
            #expect(firstname.count == 0)
            #expect(alans.count == 0)
            #expect(adasSet.count == 0)
            #expect(alansSet.count == 1)
            #expect(try ada.value(forKey: "surname", as: String.self) == "King")
            #expect(alansEmails.count == 1)
        }
    }

    /// Generated getters register as `value(forKey:)` does.
    @Test func typedGetters() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            context.isObservable = true
            let ada = try #require(try context.object(Person.self, primaryKey: 1))
            let firstname = Observed { _ = try? ada.firstname }
            let surname = Observed { _ = try? ada.surname }
            try ada.update { $0.firstname = "Augusta" }
            #expect(firstname.count == 1)
            #expect(surname.count == 0)
            // Off again: reads go the direct way and register nothing.
            context.isObservable = false
            let again = Observed { _ = try? ada.firstname }
            try ada.update { $0.firstname = "Ada" }
            #expect(again.count == 0)
            #expect(try ada.firstname == "Ada")
        }
    }
}
