import Foundation
import Testing

@testable import Relate

/// `hard_cases.sql`'s `capital INHERITS place`: the parent known, the parent's foreign key
/// applied to the child, a fetch of the parent handing out the child's rows as objects of
/// the child, `FetchRequest.only`, and statements on a parent's objects kept to its own rows.
@Suite struct InheritanceTests {
    static let data = """
        INSERT INTO country (code, name) VALUES ('FR', 'France'), ('IT', 'Italy');
        INSERT INTO place (name, country_id) VALUES ('Lyon', 1), ('Milano', 2);
        INSERT INTO capital (name, country_id, since) VALUES ('Paris', 1, 508), ('Roma', 2, 1871);
        """

    @Test func theParentAndItsForeignKeyAreRead() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.data) { fixture in
            let model = fixture.context.model
            #expect(try model.entity("capital").parent == "place")
            #expect(try model.entity("place").parent == nil)
            // Partitions are not children: the partitioned tables' leaves are no entities at all.
            #expect(try model.entity("measurement").parent == nil)
            let country = try model.entity("capital").relationship(forKey: "country")
            #expect(country.constraint == "place_country_id_fkey" && country.kind == .manyToOne)
            #expect(try model.entity("country").relationship(forKey: "capital").kind == .oneToMany)
        }
    }

    @Test func aFetchOfTheParentHandsOutTheChildsRowsAsItsObjects() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.data) { fixture in
            let context = fixture.context
            var places: [DatabaseObject] = []
            let statements = try fixture.sql { places = try context.fetch(FetchRequest("place", orderBy: [Ordering("id")])) }
            // The parent's query, then one for the child's rows by key.
            #expect(statements.count == 2, "\(statements)")
            #expect(statements.first?.contains("CASE t0.tableoid WHEN $1::regclass THEN 1 ELSE 0 END") == true, "\(statements)")
            #expect(places.map(\.entity.name) == ["place", "place", "capital", "capital"])
            #expect(try places.map { try $0.value(forKey: "name", as: String.self) } == ["Lyon", "Milano", "Paris", "Roma"])
            // The child's own columns are there, and each row is one object.
            #expect(try places[2].value(forKey: "since", as: Int.self) == 508)
            #expect(try context.object("capital", primaryKey: 3) === places[2])
            #expect(try context.fetch("place", orderBy: "id").map(ObjectIdentifier.init) == places.map(ObjectIdentifier.init))
            // Only the parent's own rows.
            let own = try context.fetch(FetchRequest("place", orderBy: [Ordering("id")], only: true))
            #expect(own.map(ObjectIdentifier.init) == places.prefix(2).map(ObjectIdentifier.init))
            #expect(try context.count(FetchRequest("place")) == 4)
            #expect(try context.count(FetchRequest("place", only: true)) == 2)
        }
    }

    /// A parent's objects are its own rows: opened by key, loaded through relationships and
    /// written with `ONLY`; the child's rows come through the child's relationships.
    @Test func statementsOnAParentsObjectsKeepToItsOwnRows() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.data) { fixture in
            let context = fixture.context
            #expect(try context.object("place", primaryKey: 3) == nil)
            let france = try #require(try context.object("country", primaryKey: 1))
            #expect(try france.objects(forKey: "place").allObjects.map { try $0.value(forKey: "name", as: String.self) } == ["Lyon"])
            let paris = try #require(try france.objects(forKey: "capital").allObjects.first)
            #expect(paris.entity.name == "capital")
            #expect(try paris.object(forKey: "country") === france)
            let lyon = try #require(try context.object("place", primaryKey: 1))
            let update = try fixture.sql { try lyon.setValue("Lyon (69)", forKey: "name") }
            #expect(update.first?.hasPrefix("UPDATE ONLY ") == true, "\(update)")
            try paris.setValue(509, forKey: "since")
            #expect(try fixture.disagreements().isEmpty)
        }
    }

    /// `save()`'s one statement for many rows keeps to the parent's rows too: a child's
    /// row under the same key (keys are not inherited) is neither written nor answered.
    @Test func aSavedBatchOfAParentsObjectsKeepsToItsOwnRows() throws {
        let extra = Self.data + "INSERT INTO capital (id, name, country_id, since) VALUES (1, 'Lyon', 1, 43);"
        try ObjectFixture.with("hard_cases", extraSQL: extra) { fixture in
            let context = fixture.context
            context.autocommits = false
            let places = try context.fetch(FetchRequest("place", orderBy: [Ordering("id")], only: true))
            #expect(places.count == 2)
            for place in places { try place.setValue("\(try place.value(forKey: "name", as: String.self) ?? "") (own)", forKey: "name") }
            let sent = try fixture.sql { try context.save() }
            #expect(sent.contains { $0.hasPrefix("UPDATE ONLY ") && $0.contains("unnest(") }, "\(sent)")
            let rows = try fixture.context.connection.query("SELECT name FROM capital WHERE id = 1")
            #expect(try rows[0].decode(String.self, at: 0) == "Lyon")
            let names = try places.map { try $0.value(forKey: "name", as: String.self) }
            #expect(names == ["Lyon (own)", "Milano (own)"], "\(names)")
        }
    }

    @Test func aChildWithoutAKeyIsAnErrorThatSaysWhatToDo() throws {
        let extra = Self.data + """
            CREATE TABLE village (population integer) INHERITS (place);
            INSERT INTO village (name, population) VALUES ('Èze', 2300);
            """
        try ObjectFixture.with("hard_cases", extraSQL: extra) { fixture in
            let context = fixture.context
            #expect(try context.model.entity("village").parent == "place")
            let error = #expect(throws: RelateError.self) { try context.fetch(FetchRequest("place")) }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains("\"village\" has no key") == true, "\(error?.message ?? "")")
            #expect(try context.fetch(FetchRequest("place", only: true)).count == 2)
            // The other child's rows still come as before when the keyless one has none.
            try fixture.context.connection.execute("DELETE FROM village")
            #expect(try context.fetch(FetchRequest("place")).count == 4)
        }
    }
}
