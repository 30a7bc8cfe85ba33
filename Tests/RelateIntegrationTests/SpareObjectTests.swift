import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// `reset()` keeps the objects nothing else holds as spares, and the next fetch of their
/// entity makes them its rows' objects. No program can tell: an object anything still
/// refers to (strongly, weakly or unowned, or through the array a fetch returned) is never
/// reused, a reused object reads its new row and nothing of its old one, and the values of
/// the old rows are let go of at the reset, as freeing the objects would have.
@Suite struct SpareObjectTests {
    /// People and emails (as `seed_person_email`), and `ledger`, whose `numeric` column
    /// makes its fetches keep cells of their own rather than raw ones.
    static let data = ObjectFixture.peopleWithEmails + """
        INSERT INTO person (firstname, surname) VALUES ('Edsger', 'Dijkstra');
        CREATE TABLE ledger (id int4 PRIMARY KEY, amount numeric NOT NULL);
        INSERT INTO ledger VALUES (1, 1.5), (2, 2.25), (3, 3.125);
        CREATE TABLE numbers (id int4 PRIMARY KEY);
        INSERT INTO numbers SELECT generate_series(1, 500);
        """

    static func with(_ body: (ObjectFixture) throws -> Void) throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.data, body)
    }

    /// The identities of the objects a fetch made, the objects themselves let go of.
    static func identities(_ context: DatabaseContext, _ entity: String, where condition: String? = nil) throws -> [ObjectIdentifier] {
        try context.fetch(entity, where: condition, orderBy: "id").map(ObjectIdentifier.init)
    }

    static func surnames(_ objects: [DatabaseObject]) throws -> [String?] {
        try objects.map { try $0.value(forKey: "surname", as: String.self) }
    }

    #if canImport(Glibc)
    /// An object is 40 bytes, a 48-byte block of glibc's malloc (see
    /// `DatabaseObject.storedBase`): a field more, or `base` back at 64 bits, and it is a
    /// 64-byte block, 1.6 MB more for 100,000 rows. The smallest block of 500 objects:
    /// glibc may hand one request a larger block than it needs, when what is left of a free
    /// chunk would be too small to keep.
    @Test func anObjectTakesAFortyEightByteBlock() throws {
        try Self.with { fixture in
            let objects = try fixture.context.fetch("numbers")
            #expect(objects.count == 500)
            // glibc's <malloc.h>, which the Glibc module does not bring.
            let symbol = try #require(dlsym(dlopen(nil, RTLD_NOW), "malloc_usable_size"))
            let usableSize = unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
            #expect(objects.map { usableSize(Unmanaged.passUnretained($0).toOpaque()) }.min() == 40)
        }
    }
    #endif

    @Test func theObjectsNobodyHoldsBecomeTheNextFetchsAndReadTheirNewRows() throws {
        try Self.with { fixture in
            let context = fixture.context
            let before = try Self.identities(context, "person")
            context.reset()
            do {
                // Fewer rows than spares: the first spares, the rest freed.
                let dijkstra = try context.fetch("person", where: "surname = $1", ["Dijkstra"])
                #expect(dijkstra.map(ObjectIdentifier.init) == [before[0]])
                #expect(try Self.surnames(dijkstra) == ["Dijkstra"])
                #expect(try dijkstra[0].value(forKey: "id", as: Int.self) == 3)
            }
            context.reset()
            // More rows than spares: the spare, then new objects.
            let people = try context.fetch("person", orderBy: "id")
            #expect(people.count == 3 && ObjectIdentifier(people[0]) == before[0])
            #expect(try Self.surnames(people) == ["Lovelace", "Hopper", "Dijkstra"])
            #expect(try context.object("person", primaryKey: 2) === people[1])
        }
    }

    @Test func anObjectHeldAcrossAResetKeepsItsRowAndIsNotReused() throws {
        try Self.with { fixture in
            let context = fixture.context
            let ada = try #require(try context.fetch("person", orderBy: "id").first)
            context.reset()
            let people = try context.fetch("person", orderBy: "id")
            #expect(!people.contains { $0 === ada })
            #expect(try ada.value(forKey: "surname", as: String.self) == "Lovelace")
            #expect(try Self.surnames(people) == ["Lovelace", "Hopper", "Dijkstra"])
            // The other two were spares; the held one's storage kept its values.
            #expect(try people[0].value(forKey: "firstname", as: String.self) == "Ada")
        }
    }

    @Test func theArrayAFetchReturnedKeepsAllItsObjects() throws {
        try Self.with { fixture in
            let context = fixture.context
            let first = try context.fetch("ledger", orderBy: "id")
            context.reset()
            let second = try context.fetch("ledger", orderBy: "id")
            #expect(Set(first.map(ObjectIdentifier.init)).isDisjoint(with: second.map(ObjectIdentifier.init)))
            let amounts = ["1.5", "2.25", "3.125"].map { Decimal(string: $0) }
            #expect(try first.map { try $0.value(forKey: "amount") as? Decimal } == amounts)
            #expect(try second.map { try $0.value(forKey: "amount") as? Decimal } == amounts)
        }
    }

    @Test func aWeaklyHeldObjectIsFreedNotReused() throws {
        try Self.with { fixture in
            let context = fixture.context
            weak var weakAda: DatabaseObject?
            do {
                let ada = try #require(try context.fetch("person", orderBy: "id").first)
                weakAda = ada
            }
            context.reset()
            #expect(weakAda == nil)
            let people = try context.fetch("person", orderBy: "id")
            #expect(weakAda == nil)
            #expect(people.count == 3)
        }
    }

    /// Holds an object unowned: reading it after it was freed would trap, so it is never read.
    struct UnownedHolder {
        unowned let object: DatabaseObject
    }

    @Test func anUnownedReferenceKeepsTheObjectFromBeingReused() throws {
        try Self.with { fixture in
            let context = fixture.context
            var holder: UnownedHolder?
            var held: ObjectIdentifier?
            do {
                let people = try context.fetch("person", orderBy: "id")
                holder = UnownedHolder(object: people[1])
                held = ObjectIdentifier(people[1])
            }
            context.reset()
            // Freed but not deallocated while the unowned reference lives: its address is
            // not any new object's either way; reused, it would be one of these.
            let people = try context.fetch("person", orderBy: "id")
            #expect(!people.map(ObjectIdentifier.init).contains(try #require(held)))
            #expect(try Self.surnames(people) == ["Lovelace", "Hopper", "Dijkstra"])
            withExtendedLifetime(holder) {}
        }
    }

    @Test func aResetLetsGoOfTheResultTheSparesReadFrom() throws {
        try Self.with { fixture in
            let context = fixture.context
            weak var result: PostgresResult?
            do {
                let people = try context.fetch("person", orderBy: "id")
                #expect(people[0].storage.isRaw)
                result = people[0].storage.result
                #expect(result != nil)
            }
            context.reset()
            #expect(result == nil)
            // The cells' memory stays for the next fetch, which reads right from it.
            #expect(try Self.surnames(try context.fetch("person", orderBy: "id")) == ["Lovelace", "Hopper", "Dijkstra"])
        }
    }

    /// The result of a fetch some of whose objects are not spares at the reset (one written
    /// to, which moves it to values of its own; one deleted; one held): the spares keep none
    /// of it alive, so it goes at the reset, or as soon as the held object does.
    @Test func sparesKeepNoValuesAliveWhenTheirStorageHasOtherObjects() throws {
        try Self.with { fixture in
            let context = fixture.context
            weak var written: PostgresResult?
            do {
                let people = try context.fetch("person", orderBy: "id")
                written = people[0].storage.result
                try people[0].setValue("Byron", forKey: "surname")
            }
            context.reset()
            #expect(written == nil)

            weak var deleted: PostgresResult?
            do {
                let people = try context.fetch("person", orderBy: "id")
                deleted = people[0].storage.result
                try context.delete(people[2])
            }
            context.reset()
            #expect(deleted == nil)

            weak var held: PostgresResult?
            var ada: DatabaseObject?
            do {
                let people = try context.fetch("person", orderBy: "id")
                held = people[0].storage.result
                ada = people[0]
            }
            context.reset()
            #expect(held != nil)
            #expect(try ada?.value(forKey: "surname", as: String.self) == "Byron")
            ada = nil
            #expect(held == nil)
            #expect(try Self.surnames(try context.fetch("person", orderBy: "id")) == ["Byron", "Hopper"])
        }
    }

    /// More objects than a context keeps: the first 131,072 are kept, the rest freed, and
    /// none of them keeps the result alive.
    @Test func aFetchPastTheLimitKeepsNoValuesAlive() throws {
        try Self.with { fixture in
            let context = fixture.context
            let count = ObjectGraph.spareLimit + 10
            try context.connection.executeScript("CREATE TABLE many (id int4 PRIMARY KEY); INSERT INTO many SELECT generate_series(1, \(count))")
            let fresh = try DatabaseContext(connection: context.connection, schemas: [fixture.schema])
            weak var result: PostgresResult?
            do {
                let rows = try fresh.fetch("many")
                #expect(rows.count == count)
                result = rows[0].storage.result
            }
            fresh.reset()
            #expect(result == nil)
            let again = try fresh.fetch("many", orderBy: "id")
            #expect(again.count == count)
            #expect(try again.first?.value(forKey: "id", as: Int.self) == 1)
            #expect(try again.last?.value(forKey: "id", as: Int.self) == count)
        }
    }

    @Test func cellsOfTheirOwnAreReusedToo() throws {
        try Self.with { fixture in
            let context = fixture.context
            let before = try Self.identities(context, "ledger")
            context.reset()
            let again = try context.fetch("ledger", orderBy: "id")
            #expect(again.map(ObjectIdentifier.init) == before)
            #expect(!again[0].storage.isRaw)
            let amounts = ["1.5", "2.25", "3.125"].map { Decimal(string: $0) }
            #expect(try again.map { try $0.value(forKey: "amount") as? Decimal } == amounts)
        }
    }

    @Test func aReusedObjectKnowsNothingOfItsOldRowsRelationshipsOrDeletion() throws {
        try Self.with { fixture in
            let context = fixture.context
            var before: [ObjectIdentifier] = []
            do {
                let people = try context.fetch("person", orderBy: "id")
                before = people.map(ObjectIdentifier.init)
                #expect(try people[0].objects(forKey: "email").count == 2)
                #expect(try people[1].objects(forKey: "email").count == 1)
                let emails = try context.fetch("email", orderBy: "id")
                #expect(try emails[2].object(forKey: "person") === people[1])
            }
            context.reset()
            do {
                let people = try context.fetch("person", where: "id <> 1", orderBy: "id")
                // Grace in Ada's old object, Dijkstra in Grace's: each set loads afresh.
                #expect(people.map(ObjectIdentifier.init) == Array(before.prefix(2)))
                #expect(try people[0].objects(forKey: "email").count == 1)
                #expect(try people[1].objects(forKey: "email").count == 0)
                try context.delete(people[1])
                #expect(people[1].isDeleted)
            }
            context.reset()
            let again = try context.fetch("person", orderBy: "id")
            #expect(again.allSatisfy { !$0.isDeleted })
            #expect(try Self.surnames(again) == ["Lovelace", "Hopper"])
            let emails = try context.fetch("email", orderBy: "id")
            #expect(try emails.map { try $0.object(forKey: "person")?.value(forKey: "firstname", as: String.self) } == ["Ada", "Ada", "Grace"])
        }
    }

    @Test func objectsHeldByATransactionAreNotReused() throws {
        try Self.with { fixture in
            let context = fixture.context
            var inside: [ObjectIdentifier] = []
            try context.transaction {
                inside = try Self.identities(context, "ledger")
                context.reset()
                let again = try Self.identities(context, "ledger")
                #expect(Set(inside).isDisjoint(with: again))
            }
            #expect(try context.fetch("ledger", orderBy: "id").map { try $0.value(forKey: "id", as: Int.self) } == [1, 2, 3])
        }
    }
}
