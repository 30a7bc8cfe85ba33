import Foundation
import Relate

// The cost of the typed API against the dynamic layer it is built on (issue 23): a typed
// read against `value(forKey:as:)`, a typed fetch against the untyped one. Makes its own
// schema (BaseTen's person / email / title, 10,000 people) in RELATE_TEST_URL's database,
// and drops it afterwards.
//
//   RELATE_TEST_URL=postgresql://… swift run -c release --package-path Examples/TypedPeople TypedReads

guard let url = ProcessInfo.processInfo.environment["RELATE_TEST_URL"] ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
    print("set RELATE_TEST_URL to a database to measure in")
    exit(2)
}
let admin = try Connection(url: url)
let schema = "typed_reads_\(ProcessInfo.processInfo.processIdentifier)"
try admin.executeScript("""
    DROP SCHEMA IF EXISTS \(schema) CASCADE; CREATE SCHEMA \(schema); SET search_path TO \(schema);
    CREATE TABLE person (id SERIAL PRIMARY KEY, firstname VARCHAR (255), surname VARCHAR (255));
    CREATE TABLE email (id SERIAL PRIMARY KEY, address VARCHAR (255), person_id INTEGER CONSTRAINT person REFERENCES person (id));
    CREATE TABLE title (id SERIAL PRIMARY KEY, name VARCHAR (255));
    CREATE TABLE person_title_rel (person_id INTEGER REFERENCES person (id), title_id INTEGER REFERENCES title (id),
                                   PRIMARY KEY (person_id, title_id));
    INSERT INTO person (firstname, surname) SELECT 'First' || g, 'Surname' || g FROM generate_series(1, 10000) g;
    """)
defer { _ = try? admin.execute("DROP SCHEMA \(schema) CASCADE") }

let context = try DatabaseContext(connection: Connection(url: url), schemas: [schema])
let people = try context.fetch(Person.self)
let objects = people.map(\.object)

@inline(never) func blackHole(_ value: Int) { if value == -1 { print(value) } }

@inline(never) func untypedReads(_ objects: [DatabaseObject]) throws -> Int {
    var total = 0
    for object in objects {
        total &+= try object.value(forKey: "id", as: Int.self) ?? 0
        total &+= try object.value(forKey: "firstname", as: String.self)?.utf8.count ?? 0
        total &+= try object.value(forKey: "surname", as: String.self)?.utf8.count ?? 0
    }
    return total
}

@inline(never) func typedReads(_ people: [Person]) throws -> Int {
    var total = 0
    for person in people {
        total &+= try person.id
        total &+= try person.firstname?.utf8.count ?? 0
        total &+= try person.surname?.utf8.count ?? 0
    }
    return total
}

/// The best of `rounds` timings of `body`, in milliseconds.
func best(_ rounds: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<rounds {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return best
}

let untyped = try best(30) { for _ in 0..<20 { blackHole(try untypedReads(objects)) } }
let typed = try best(30) { for _ in 0..<20 { blackHole(try typedReads(people)) } }
print(String(format: "reads, 20 × 10,000 people × 3 attributes: value(forKey:as:) %.2f ms, typed %.2f ms: %.3f×", untyped, typed, typed / untyped))

var fetches = (untyped: Double.infinity, typed: Double.infinity)
for _ in 0..<60 {
    context.reset()
    fetches.typed = min(fetches.typed, try best(1) { blackHole(try context.fetch(Person.self).count) })
    context.reset()
    fetches.untyped = min(fetches.untyped, try best(1) { blackHole(try context.fetch(FetchRequest("person")).count) })
}
print(String(format: "fetch of 10,000 people: untyped %.2f ms, typed %.2f ms: %.3f×", fetches.untyped, fetches.typed, fetches.typed / fetches.untyped))
