import Foundation
import Testing

@testable import Relate

/// Fetch requests: the exact SQL each condition and sort sends, with its bound values, and
/// the objects it answers against the database.
@Suite struct FetchRequestTests {
    /// People: Ada (emails ada@example.com, ada@work.example), Grace (grace@navy.mil,
    /// g_h@50%.example), Nobody (no surname, no email). Email 5 has no person.
    static let people = """
        INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper'), ('Nobody', NULL);
        INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1), ('ada@work.example', 1),
            ('grace@navy.mil', 2), ('g_h@50%.example', 2), ('lost@example.com', NULL);
        """

    /// The SQL a request sends, its bound values as text, and the primary keys it answers.
    struct Sent {
        var sql: String
        var values: [String]
        var keys: [Int]
    }

    static func send(_ request: FetchRequest, in fixture: ObjectFixture) throws -> Sent {
        let (_, statement) = try request.selectStatement(fixture.context.layout)
        var objects: [DatabaseObject] = []
        let sql = try fixture.sql { objects = try fixture.context.fetch(request) }
        #expect(sql == [statement.sql])
        let keys = objects.compactMap { $0.primaryKey.first as? Int }
        return Sent(sql: statement.sql, values: statement.statement.parameters.map { $0.map { "\($0)" } ?? "NULL" }, keys: keys)
    }

    @Test func comparisonsOnAttributesAndThroughToOnes() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.people) { fixture in
            let s = "\"\(fixture.schema)\""
            let person = "SELECT t0.\"id\", t0.\"firstname\", t0.\"surname\" FROM \(s).\"person\" t0"
            let email = "SELECT t0.\"id\", t0.\"address\", t0.\"person_id\" FROM \(s).\"email\" t0"

            var sent = try Self.send(FetchRequest("person", where: Key("surname") == "Hopper"), in: fixture)
            #expect(sent.sql == person + " WHERE t0.\"surname\" = $1")
            #expect(sent.values == ["Hopper"])
            #expect(sent.keys == [2])

            // Swift's !=: a missing surname differs from "Hopper".
            sent = try Self.send(FetchRequest("person", where: Key("surname") != "Hopper", orderBy: [.ascending("id")]), in: fixture)
            #expect(sent.sql == person + " WHERE t0.\"surname\" IS DISTINCT FROM $1 ORDER BY t0.\"id\" ASC")
            #expect(sent.keys == [1, 3])

            sent = try Self.send(FetchRequest("person", where: !(Key("surname") == "Hopper"), orderBy: [.ascending("id")]), in: fixture)
            #expect(sent.sql == person + " WHERE (t0.\"surname\" = $1) IS NOT TRUE ORDER BY t0.\"id\" ASC")
            #expect(sent.keys == [1, 3])

            sent = try Self.send(FetchRequest("person", where: Key("surname") == nil), in: fixture)
            #expect(sent.sql == person + " WHERE t0.\"surname\" IS NULL")
            #expect(sent.values == [] && sent.keys == [3])

            // Through a to-one: a join, made once however often the path is used.
            sent = try Self.send(
                FetchRequest(
                    "email", where: Key("person.surname") == "Hopper" || Key("person.firstname").hasPrefix("A"),
                    orderBy: [.descending("person.surname"), .ascending("address")], limit: 3, offset: 1),
                in: fixture)
            #expect(
                sent.sql == email + " LEFT JOIN \(s).\"person\" t1 ON t1.\"id\" = t0.\"person_id\""
                    + " WHERE (t1.\"surname\" = $1 OR t1.\"firstname\" LIKE $2)"
                    + " ORDER BY t1.\"surname\" DESC, t0.\"address\" ASC LIMIT $3 OFFSET $4")
            #expect(sent.values == ["Hopper", "A%", "3", "1"])
            #expect(sent.keys == [2, 4, 3])

            // The key a single-column foreign key refers to is read from the foreign key: no join.
            sent = try Self.send(FetchRequest("email", where: Key("person.id") == 1, orderBy: [.ascending("id")]), in: fixture)
            #expect(sent.sql == email + " WHERE t0.\"person_id\" = $1 ORDER BY t0.\"id\" ASC")
            #expect(sent.keys == [1, 2])

            sent = try Self.send(FetchRequest("email", where: Key("person") == nil), in: fixture)
            #expect(sent.sql == email + " WHERE t0.\"person_id\" IS NULL")
            #expect(sent.keys == [5])

            sent = try Self.send(FetchRequest("email", where: Key("person") != nil && Key("person.surname") == nil), in: fixture)
            #expect(
                sent.sql == email + " LEFT JOIN \(s).\"person\" t1 ON t1.\"id\" = t0.\"person_id\""
                    + " WHERE (t0.\"person_id\" IS NOT NULL AND t1.\"surname\" IS NULL)")
            #expect(sent.keys == [])

            sent = try Self.send(FetchRequest("person", where: Key("id").in([1, 3, nil]), orderBy: [.ascending("id")]), in: fixture)
            #expect(sent.sql == person + " WHERE (t0.\"id\" = ANY($1) OR t0.\"id\" IS NULL) ORDER BY t0.\"id\" ASC")
            #expect(sent.values == ["[1, 3]"])
            #expect(sent.keys == [1, 3])

            sent = try Self.send(FetchRequest("person", where: Key("id").in([])), in: fixture)
            #expect(sent.sql == person + " WHERE FALSE")
            #expect(sent.keys == [])

            sent = try Self.send(FetchRequest("person", where: Key("id") >= 2 && Key("id") < 3), in: fixture)
            #expect(sent.sql == person + " WHERE (t0.\"id\" >= $1 AND t0.\"id\" < $2)")
            #expect(sent.keys == [2])
        }
    }

    @Test func textMatchesEscapeTheirWildcards() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.people) { fixture in
            let email = "SELECT t0.\"id\", t0.\"address\", t0.\"person_id\" FROM \"\(fixture.schema)\".\"email\" t0"
            var sent = try Self.send(FetchRequest("email", where: Key("address").contains("_h@50%")), in: fixture)
            #expect(sent.sql == email + " WHERE t0.\"address\" LIKE $1")
            #expect(sent.values == [#"%\_h@50\%%"#])
            #expect(sent.keys == [4])

            sent = try Self.send(FetchRequest("email", where: Key("address").hasSuffix("@NAVY.MIL", caseInsensitive: true)), in: fixture)
            #expect(sent.sql == email + " WHERE t0.\"address\" ILIKE $1")
            #expect(sent.values == ["%@NAVY.MIL"])
            #expect(sent.keys == [3])

            sent = try Self.send(FetchRequest("email", where: Key("address").like("ada@%.example"), orderBy: [.ascending("id")]), in: fixture)
            #expect(sent.values == ["ada@%.example"])
            #expect(sent.keys == [2])
        }
    }

    @Test func toManyConditionsAreExistsThroughTheForeignKey() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.people) { fixture in
            let s = "\"\(fixture.schema)\""
            let person = "SELECT t0.\"id\", t0.\"firstname\", t0.\"surname\" FROM \(s).\"person\" t0"
            var sent = try Self.send(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil"))), in: fixture)
            #expect(sent.sql == person + " WHERE EXISTS (SELECT 1 FROM \(s).\"email\" t1 WHERE t1.\"person_id\" = t0.\"id\" AND t1.\"address\" LIKE $1)")
            #expect(sent.values == ["%@navy.mil"])
            #expect(sent.keys == [2])

            sent = try Self.send(FetchRequest("person", where: Key("email").isEmpty), in: fixture)
            #expect(sent.sql == person + " WHERE NOT EXISTS (SELECT 1 FROM \(s).\"email\" t1 WHERE t1.\"person_id\" = t0.\"id\")")
            #expect(sent.keys == [3])

            // Every email of theirs starts with "ada": Ada, and Nobody, who has none.
            sent = try Self.send(FetchRequest("person", where: Key("email").all(Key("address").hasPrefix("ada")), orderBy: [.ascending("id")]), in: fixture)
            #expect(
                sent.sql == person
                    + " WHERE NOT EXISTS (SELECT 1 FROM \(s).\"email\" t1 WHERE t1.\"person_id\" = t0.\"id\" AND (t1.\"address\" LIKE $1) IS NOT TRUE)"
                    + " ORDER BY t0.\"id\" ASC")
            #expect(sent.keys == [1, 3])

            // A to-one inside a to-many: its join is the subquery's own.
            sent = try Self.send(FetchRequest("email", where: Key("person.email").any(Key("person.surname") == "Hopper") && Key("id") != 4), in: fixture)
            #expect(
                sent.sql == "SELECT t0.\"id\", t0.\"address\", t0.\"person_id\" FROM \(s).\"email\" t0"
                    + " LEFT JOIN \(s).\"person\" t1 ON t1.\"id\" = t0.\"person_id\""
                    + " WHERE (EXISTS (SELECT 1 FROM \(s).\"email\" t2 LEFT JOIN \(s).\"person\" t3 ON t3.\"id\" = t2.\"person_id\""
                    + " WHERE t2.\"person_id\" = t1.\"id\" AND t3.\"surname\" = $1) AND t0.\"id\" IS DISTINCT FROM $2)")
            #expect(sent.keys == [3])
        }
    }

    @Test func manyToManyConditionsGoThroughTheHelper() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles + "INSERT INTO title (name) VALUES ('Vacant');") { fixture in
            let s = "\"\(fixture.schema)\""
            let title = "SELECT t0.\"id\", t0.\"name\" FROM \(s).\"title\" t0"
            var sent = try Self.send(FetchRequest("title", where: Key("person").isEmpty), in: fixture)
            #expect(sent.sql == title + " WHERE NOT EXISTS (SELECT 1 FROM \(s).\"person_title_rel\" t1 WHERE t1.\"title_id\" = t0.\"id\")")
            #expect(sent.keys == [4])

            sent = try Self.send(FetchRequest("person", where: Key("title").any(Key("name") == "Doctor")), in: fixture)
            #expect(
                sent.sql == "SELECT t0.\"id\", t0.\"firstname\", t0.\"surname\" FROM \(s).\"person\" t0"
                    + " WHERE EXISTS (SELECT 1 FROM \(s).\"person_title_rel\" t1 JOIN \(s).\"title\" t2 ON t2.\"id\" = t1.\"title_id\""
                    + " WHERE t1.\"person_id\" = t0.\"id\" AND t2.\"name\" = $1)")
            #expect(sent.values == ["Doctor"])
            #expect(sent.keys == [2])

            sent = try Self.send(FetchRequest("title", where: Key("person").none(Key("surname") == "Hopper"), orderBy: [.ascending("id")]), in: fixture)
            #expect(sent.keys == [1, 4])
        }
    }

    @Test func hardCasesCompositeKeysSelfReferencesHelpersAndSchemas() throws {
        let data = """
            INSERT INTO warehouse VALUES ('eu', 'A', 'Antwerp'), ('us', 'A', 'Albany');
            INSERT INTO shelf (region, warehouse_code, label) VALUES ('eu', 'A', 'top'), ('us', 'A', 'bottom');
            INSERT INTO employee (name, manager_id) VALUES ('Boss', NULL), ('Middle', 1), ('Low', 2);
            INSERT INTO person (name) VALUES ('Has passport'), ('No passport');
            INSERT INTO passport (number, holder_id) VALUES ('P1', 1);
            INSERT INTO member (name) VALUES ('Kasparov'), ('Loner');
            INSERT INTO club (name) VALUES ('Chess');
            INSERT INTO membership (member_id, club_id) VALUES (1, 1);
            """
        try ObjectFixture.with("hard_cases", extraSQL: data) { fixture in
            let s = "\"\(fixture.schema)\""
            // A composite foreign key: joined on both columns, never shortened to one.
            var sent = try Self.send(FetchRequest("shelf", where: Key("warehouse.code") == "A" && Key("warehouse.name") == "Albany"), in: fixture)
            #expect(
                sent.sql.hasSuffix(
                    " FROM \(s).\"shelf\" t0 LEFT JOIN \(s).\"warehouse\" t1 ON t1.\"region\" = t0.\"region\" AND t1.\"code\" = t0.\"warehouse_code\""
                        + " WHERE (t1.\"code\" = $1 AND t1.\"name\" = $2)"))
            #expect(sent.keys == [2])

            sent = try Self.send(FetchRequest("warehouse", where: Key("shelf").any(Key("label") == "top")), in: fixture)
            #expect(
                sent.sql.hasSuffix(
                    " WHERE EXISTS (SELECT 1 FROM \(s).\"shelf\" t1 WHERE t1.\"region\" = t0.\"region\" AND t1.\"warehouse_code\" = t0.\"code\" AND t1.\"label\" = $1)"))
            #expect(try fixture.context.fetch(FetchRequest("warehouse", where: Key("shelf").any(Key("label") == "top"))).map { try $0.value(forKey: "name") as? String } == ["Antwerp"])

            // A self-reference, two levels: each level its own join.
            sent = try Self.send(FetchRequest("employee", where: Key("manager.manager.name") == "Boss"), in: fixture)
            #expect(
                sent.sql.hasSuffix(
                    " FROM \(s).\"employee\" t0 LEFT JOIN \(s).\"employee\" t1 ON t1.\"id\" = t0.\"manager_id\""
                        + " LEFT JOIN \(s).\"employee\" t2 ON t2.\"id\" = t1.\"manager_id\" WHERE t2.\"name\" = $1"))
            #expect(sent.keys == [3])
            sent = try Self.send(FetchRequest("employee", where: Key("employee").isEmpty), in: fixture)
            #expect(sent.keys == [3])

            // A one-to-one whose foreign key is on the other side: the joined row is there or not.
            sent = try Self.send(FetchRequest("person", where: Key("passport") == nil), in: fixture)
            #expect(
                sent.sql.hasSuffix(
                    " FROM \(s).\"person\" t0 LEFT JOIN \(s).\"passport\" t1 ON t1.\"holder_id\" = t0.\"id\" WHERE t1.\"holder_id\" IS NULL"))
            #expect(sent.keys == [2])

            // A helper with a column of its own.
            sent = try Self.send(FetchRequest("member", where: Key("club").any(Key("name") == "Chess")), in: fixture)
            #expect(sent.sql.contains("FROM \(s).\"membership\" t1 JOIN \(s).\"club\" t2 ON t2.\"id\" = t1.\"club_id\" WHERE t1.\"member_id\" = t0.\"id\""))
            #expect(sent.keys == [1])

            // Across schemas: price in this one, currency in the other.
            try fixture.context.connection.executeScript(
                "INSERT INTO \(fixture.schema)_other.currency (code, name) VALUES ('EUR', 'Euro'), ('USD', 'Dollar');"
                    + "INSERT INTO price (amount, currency_id) VALUES (1.50, 1), (2.00, 2)")
            sent = try Self.send(FetchRequest("price", where: Key("currency.code") == "USD"), in: fixture)
            #expect(sent.sql.contains("LEFT JOIN \"\(fixture.schema)_other\".\"currency\" t1 ON t1.\"id\" = t0.\"currency_id\""))
            #expect(sent.keys == [2])
        }
    }

    @Test func countsAreCountedByTheDatabase() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.people) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            var count = 0
            var sql = try fixture.sql { count = try context.count("person", where: Key("email").any()) }
            #expect(count == 2)
            #expect(sql == ["SELECT count(*) FROM \(s).\"person\" t0 WHERE EXISTS (SELECT 1 FROM \(s).\"email\" t1 WHERE t1.\"person_id\" = t0.\"id\")"])

            sql = try fixture.sql { count = try context.count(FetchRequest("email", orderBy: [.ascending("address")], limit: 2, offset: 4)) }
            #expect(count == 1)
            #expect(sql == ["SELECT count(*) FROM (SELECT 1 FROM \(s).\"email\" t0 LIMIT $1 OFFSET $2) page"])

            sql = try fixture.sql { count = try context.count("person", where: "surname = $1", ["Hopper"]) }
            #expect(count == 1)
            #expect(sql == ["SELECT count(*) FROM \(s).\"person\" WHERE surname = $1"])
            #expect(try context.count("email") == 5)
            // Nothing was loaded.
            #expect(context.graph.registries.allSatisfy { $0.isEmpty })
        }
    }

    @Test func badRequestsAreErrorsNamingTheKeyBeforeAnythingIsSent() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.people) { fixture in
            let context = fixture.context
            let cases: [(FetchRequest, RelateError.Kind, [String])] = [
                (FetchRequest("person", where: Key("surnme") == "x"), .unknownKey, [#""surnme""#, #"did you mean "surname"?"#]),
                (FetchRequest("person", where: Key("email.address") == "x"), .unknownKey, ["\"email.address\"", "to-many", #"Key("email").any"#]),
                (FetchRequest("person", where: Key("id") == "one"), .typeMismatch, ["\"id\"", "int4", "String"]),
                (FetchRequest("person", where: Key("email") == nil), .typeMismatch, ["isEmpty"]),
                (FetchRequest("email", where: Key("person") == 1), .typeMismatch, ["\"person\"", "person.id"]),
                (FetchRequest("email", where: Key("person").any()), .typeMismatch, ["to-many"]),
                (FetchRequest("person", where: Key("id").hasPrefix("1")), .typeMismatch, ["text column"]),
                (FetchRequest("person", where: Key("id") < nil as Int?), .typeMismatch, ["nil"]),
                (FetchRequest("person", where: Key("email").any(Key("nope") == 1)), .unknownKey, [#""nope""#, "email"]),
                (FetchRequest("person", orderBy: [.ascending("email.address")]), .unknownKey, ["sorted by", "to-many"]),
                (FetchRequest("email", orderBy: [.ascending("person")]), .typeMismatch, ["sort by an attribute"]),
                (FetchRequest("email", where: Key("person..id") == 1), .unknownKey, [#""person..id""#]),
                (FetchRequest("persn"), .unknownEntity, [#"did you mean "person"?"#]),
                (FetchRequest("person", limit: -1), .invalidRequest, ["limit"]),
            ]
            for (request, kind, words) in cases {
                let sql = fixture.sql {
                    let error = #expect(throws: RelateError.self) { try context.fetch(request) }
                    #expect(error?.kind == kind, "\(error?.message ?? "")")
                    for word in words { #expect(error?.message.contains(word) == true, "\(error?.message ?? "") lacks \(word)") }
                    #expect(throws: RelateError.self) { try context.count(request) }
                }
                #expect(sql.isEmpty)
            }
        }
    }
}
