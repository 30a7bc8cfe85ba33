import Foundation
import Testing

@testable import Relate

/// Counts without loading: from a loaded set with no query, else one `count(*)`; for many
/// objects one grouped query; never a count that outlives a write.
@Suite struct CountTests {
    @Test func aCountComesFromTheLoadedSetOrFromOneQuery() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: FetchRequestTests.people) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let ada = try #require(try context.object("person", primaryKey: 1))
            var count = 0
            var sql = try fixture.sql { count = try ada.count(forKey: "email") }
            #expect(count == 2)
            #expect(sql == ["SELECT \"person_id\", count(*) FROM \(s).\"email\" WHERE \"person_id\" = $1 GROUP BY \"person_id\""])
            // Kept: no second query, and nothing was loaded.
            sql = try fixture.sql { count = try ada.count(forKey: "email") }
            #expect(count == 2 && sql == [])
            let emailIndex = try context.entityIndex(named: "email")
            #expect(ada.sets[0] == nil && context.graph.registries[emailIndex].isEmpty)

            // A write of this context starts over: the next count asks again.
            let nobody = try #require(try context.object("person", primaryKey: 3))
            try context.insert("email", values: ["address": "new@example.com", "person": ada])
            sql = try fixture.sql { count = try ada.count(forKey: "email") }
            #expect(count == 3 && sql.count == 1)
            #expect(try nobody.count(forKey: "email") == 0)

            // A loaded set answers itself.
            let emails = try ada.objects(forKey: "email")
            sql = try fixture.sql { count = try ada.count(forKey: "email") }
            #expect(count == emails.count && sql == [])
        }
    }

    @Test func prefetchCountsIsOneGroupedQueryForAllObjects() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: FetchRequestTests.people) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let people = try context.fetch("person")
            _ = try people[1].objects(forKey: "email")  // Grace's set is loaded: not counted again
            let sql = try fixture.sql { try context.prefetchCounts(["email"], for: people) }
            #expect(sql == ["SELECT \"person_id\", count(*) FROM \(s).\"email\" WHERE \"person_id\" = ANY($1) GROUP BY \"person_id\""])
            var counted: [Int] = []
            let counts = try fixture.sql { counted = try people.map { try $0.count(forKey: "email") } }
            #expect(counted == [2, 2, 0] && counts == [])

            // A row read again whose foreign key another client moved starts over too
            // (rows never read before are issue 11's change tracking).
            _ = try context.fetch("email")
            try context.prefetchCounts(["email"], for: people)
            let other = try TestDatabase.connect()
            try other.execute("UPDATE \(fixture.schema).email SET person_id = 3 WHERE id = 1")
            _ = try context.fetch("email")
            #expect(try people.map { try $0.count(forKey: "email") } == [1, 2, 1])
        }
    }

    @Test func manyToManyCountsCountHelperRowsWithRepeats() throws {
        let data = """
            INSERT INTO item (name) VALUES ('box'), ('bag');
            INSERT INTO tag (label) VALUES ('red'), ('big');
            INSERT INTO tag_link VALUES (1, 1), (1, 1), (1, 2);
            INSERT INTO member (name) VALUES ('Kasparov'), ('Loner');
            INSERT INTO club (name) VALUES ('Chess'), ('Go');
            INSERT INTO membership (member_id, club_id) VALUES (1, 1), (1, 2);
            """
        try ObjectFixture.with("hard_cases", manyToMany: .anyTwoForeignKeys, extraSQL: data) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let items = try context.fetch("item", where: Key("id") > 0, orderBy: [.ascending("id")])
            let sql = try fixture.sql { try context.prefetchCounts(["tag"], for: items) }
            #expect(sql == ["SELECT \"item_id\", count(*) FROM \(s).\"tag_link\" WHERE \"item_id\" = ANY($1) GROUP BY \"item_id\""])
            #expect(try items.map { try $0.count(forKey: "tag") } == [3, 0])
            // The loaded counted set agrees: red twice, big once.
            let box = items[0]
            box.loaded?.counts.removeAll()
            let tags = try box.objects(forKey: "tag")
            #expect(tags.count == 2 && tags.totalCount == 3)
            #expect(try box.count(forKey: "tag") == 3)

            let members = try context.fetch("member", where: Key("id") > 0, orderBy: [.ascending("id")])
            try context.prefetchCounts(["club", "membership"], for: members)
            #expect(try members.map { try $0.count(forKey: "club") } == [2, 0])
            #expect(try members.map { try $0.count(forKey: "membership") } == [2, 0])
            // Taking a club away through the set: the kept count of the other key goes too.
            let kasparov = members[0]
            let clubs = try kasparov.objects(forKey: "club")
            try clubs.remove(try #require(clubs.allObjects.first))
            #expect(try kasparov.count(forKey: "membership") == 1)
        }
    }

    @Test func compositeKeysCountThroughBothColumns() throws {
        let data = """
            INSERT INTO warehouse VALUES ('eu', 'A', 'Antwerp'), ('us', 'A', 'Albany'), ('us', 'B', 'Boston');
            INSERT INTO shelf (region, warehouse_code, label) VALUES ('eu', 'A', 'top'), ('us', 'A', 'bottom'), ('us', 'A', 'middle');
            """
        try ObjectFixture.with("hard_cases", extraSQL: data) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let warehouses = try context.fetch("warehouse", where: Key("region") != "", orderBy: [.ascending("region"), .ascending("code")])
            let sql = try fixture.sql { try context.prefetchCounts(["shelf"], for: warehouses) }
            #expect(
                sql == [
                    "SELECT \"region\", \"warehouse_code\", count(*) FROM \(s).\"shelf\" WHERE (\"region\", \"warehouse_code\") IN (SELECT * FROM unnest($1, $2))"
                        + " GROUP BY \"region\", \"warehouse_code\""
                ])
            #expect(try warehouses.map { try $0.count(forKey: "shelf") } == [1, 2, 0])
            // One warehouse alone: one count(*) by both columns.
            let boston = warehouses[2]
            boston.loaded?.counts.removeAll()
            var count = -1
            let sent = try fixture.sql { count = try boston.count(forKey: "shelf") }
            #expect(count == 0 && sent.count == 1)
            #expect(sent.first?.contains("WHERE \"region\" = $1 AND \"warehouse_code\" = $2 GROUP BY") == true)
        }
    }

    @Test func badCountsAreErrorsBeforeAnythingIsSent() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: FetchRequestTests.people) { fixture in
            let context = fixture.context
            let people = try context.fetch("person")
            let email = try #require(try context.object("email", primaryKey: 1))
            let sql = fixture.sql {
                var error = #expect(throws: RelateError.self) { try people[0].count(forKey: "emial") }
                #expect(error?.kind == .unknownKey && error?.message.contains(#"did you mean "email"?"#) == true)
                error = #expect(throws: RelateError.self) { try email.count(forKey: "person") }
                #expect(error?.message.contains("to-one") == true)
                error = #expect(throws: RelateError.self) { try context.prefetchCounts(["email", "surname"], for: people) }
                #expect(error?.message.contains("attribute") == true)
                error = #expect(throws: RelateError.self) { try context.prefetchCounts(["email"], for: people + [email]) }
                #expect(error?.kind == .invalidObject)
            }
            #expect(sql == [])
        }
    }
}
