import Foundation
import Testing

@testable import Relate

/// Random conditions over random people, emails and titles: what the database answers for
/// each equals what Swift answers walking the objects in memory, NULLs and empty sets
/// included.
@Suite struct ConditionPropertyTests {
    /// A condition, and the same condition in Swift over an object.
    struct Pair {
        var condition: Condition
        var holds: (DatabaseObject) throws -> Bool
        var text: String
    }

    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let surnames: [String?] = ["Hopper", "Lovelace", "Liskov", nil]
    static let domains = ["navy.mil", "example.com", "Example.COM"]

    static func string(_ object: DatabaseObject?, _ key: String) throws -> String? {
        try object?.value(forKey: key) as? String
    }

    /// A condition on an email.
    static func emailCondition(_ random: inout Generator, depth: Int) -> Pair {
        switch Int.random(in: 0..<(depth > 0 ? 6 : 4), using: &random) {
        case 0:
            let domain = domains.randomElement(using: &random)!
            let insensitive = Bool.random(using: &random)
            return Pair(
                condition: Key("address").hasSuffix("@" + domain, caseInsensitive: insensitive),
                holds: { email in
                    guard let address = try string(email, "address") else { return false }
                    return insensitive ? address.lowercased().hasSuffix("@" + domain.lowercased()) : address.hasSuffix("@" + domain)
                }, text: "address hasSuffix \(domain) \(insensitive)")
        case 1:
            let surname = surnames.randomElement(using: &random)!
            return Pair(
                condition: Key("person.surname") == surname,
                holds: { email in try string(try email.object(forKey: "person"), "surname") == surname },
                text: "person.surname == \(surname ?? "nil")")
        case 2:
            return Pair(condition: Key("person") == nil, holds: { try $0.object(forKey: "person") == nil }, text: "person == nil")
        case 3:
            let id = Int.random(in: 0...12, using: &random)
            return Pair(condition: Key("person.id") > id, holds: { email in
                guard let person = try email.object(forKey: "person") else { return false }
                return (try person.value(forKey: "id") as! Int) > id
            }, text: "person.id > \(id)")
        case 4:
            let inner = emailCondition(&random, depth: depth - 1)
            return Pair(condition: !inner.condition, holds: { try !inner.holds($0) }, text: "!(\(inner.text))")
        default:
            let title = ["Doctor", "Admiral"].randomElement(using: &random)!
            return Pair(
                condition: Key("person.title").any(Key("name") == title),
                holds: { email in
                    guard let person = try email.object(forKey: "person") else { return false }
                    return try person.objects(forKey: "title").contains { try string($0, "name") == title }
                }, text: "person.title any name == \(title)")
        }
    }

    /// A condition on a person.
    static func personCondition(_ random: inout Generator, depth: Int) -> Pair {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 4), using: &random) {
        case 0:
            let surname = surnames.randomElement(using: &random)!
            let equal = Bool.random(using: &random)
            return Pair(
                condition: equal ? Key("surname") == surname : Key("surname") != surname,
                holds: { try (string($0, "surname") == surname) == equal }, text: "surname \(equal ? "==" : "!=") \(surname ?? "nil")")
        case 1:
            let values = surnames.filter { _ in Bool.random(using: &random) }
            return Pair(
                condition: Key("surname").in(values), holds: { person in let surname = try string(person, "surname"); return values.contains { $0 == surname } },
                text: "surname in \(values)")
        case 2:
            let prefix = ["L", "Lo", "H", ""].randomElement(using: &random)!
            return Pair(condition: Key("surname").hasPrefix(prefix), holds: { try string($0, "surname")?.hasPrefix(prefix) ?? false }, text: "surname hasPrefix \(prefix)")
        case 3:
            let title = ["Doctor", "Admiral"].randomElement(using: &random)!
            return Pair(
                condition: Key("title").any(Key("name") == title),
                holds: { person in try person.objects(forKey: "title").contains { try string($0, "name") == title } }, text: "title any name == \(title)")
        case 4, 5:
            let inner = emailCondition(&random, depth: depth - 1)
            let quantifier = Int.random(in: 0..<3, using: &random)
            let condition = [Key("email").any(inner.condition), Key("email").all(inner.condition), Key("email").none(inner.condition)][quantifier]
            return Pair(
                condition: condition,
                holds: { person in
                    let emails = try person.objects(forKey: "email").allObjects
                    switch quantifier {
                    case 0: return try emails.contains { try inner.holds($0) }
                    case 1: return try emails.allSatisfy { try inner.holds($0) }
                    default: return try !emails.contains { try inner.holds($0) }
                    }
                }, text: "email \(["any", "all", "none"][quantifier]) (\(inner.text))")
        case 6:
            let inner = personCondition(&random, depth: depth - 1)
            return Pair(condition: !inner.condition, holds: { try !inner.holds($0) }, text: "!(\(inner.text))")
        case 7:
            let left = personCondition(&random, depth: depth - 1)
            let right = personCondition(&random, depth: depth - 1)
            return Pair(
                condition: left.condition && right.condition, holds: { try left.holds($0) && right.holds($0) }, text: "(\(left.text)) && (\(right.text))")
        default:
            let left = personCondition(&random, depth: depth - 1)
            let right = personCondition(&random, depth: depth - 1)
            return Pair(
                condition: left.condition || right.condition, holds: { try left.holds($0) || right.holds($0) }, text: "(\(left.text)) || (\(right.text))")
        }
    }

    @Test(arguments: [1, 2, 3])
    func theDatabaseAndSwiftAgreeOnRandomConditions(seed: UInt64) throws {
        var random = Generator(state: seed)
        var sql = "INSERT INTO title (name) VALUES ('Doctor'), ('Admiral'), ('Countess');\n"
        for person in 1...12 {
            let surname = Self.surnames.randomElement(using: &random)!
            sql += "INSERT INTO person (firstname, surname) VALUES ('P\(person)', \(surname.map { "'\($0)'" } ?? "NULL"));\n"
        }
        for email in 1...30 {
            let owner = Int.random(in: 0...13, using: &random)
            let domain = Self.domains.randomElement(using: &random)!
            sql += "INSERT INTO email (address, person_id) VALUES ('e\(email)@\(domain)', \(owner == 0 || owner == 13 ? "NULL" : "\(owner)"));\n"
        }
        for person in 1...12 {
            for title in 1...3 where Int.random(in: 0..<3, using: &random) == 0 {
                sql += "INSERT INTO person_title_rel VALUES (\(person), \(title));\n"
            }
        }
        let schema = """
            CREATE TABLE person (id SERIAL PRIMARY KEY, firstname VARCHAR(255), surname VARCHAR(255));
            CREATE TABLE email (id SERIAL PRIMARY KEY, address VARCHAR(255), person_id INTEGER CONSTRAINT person REFERENCES person (id));
            CREATE TABLE title (id SERIAL PRIMARY KEY, name VARCHAR(255));
            CREATE TABLE person_title_rel (person_id INTEGER REFERENCES person (id), title_id INTEGER REFERENCES title (id), PRIMARY KEY (person_id, title_id));
            """
        try TestDatabase.withSchema { connection, schemaName in
            try connection.executeScript(schema + sql)
            let context = try DatabaseContext(connection: connection, schemas: [schemaName])
            let people = try context.fetch("person")
            let emails = try context.fetch("email")
            for _ in 0..<150 {
                let pair = Self.personCondition(&random, depth: 3)
                let expected = try people.filter { try pair.holds($0) }.map { $0.primaryKey[0] as! Int }.sorted()
                let answered = try context.fetch("person", where: pair.condition).map { $0.primaryKey[0] as! Int }.sorted()
                #expect(answered == expected, "person where \(pair.text)")
                #expect(try context.count("person", where: pair.condition) == expected.count)
            }
            for _ in 0..<100 {
                let pair = Self.emailCondition(&random, depth: 3)
                let expected = try emails.filter { try pair.holds($0) }.map { $0.primaryKey[0] as! Int }.sorted()
                let answered = try context.fetch("email", where: pair.condition).map { $0.primaryKey[0] as! Int }.sorted()
                #expect(answered == expected, "email where \(pair.text)")
            }
        }
    }
}
