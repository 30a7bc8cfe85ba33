import ArgumentParser
import Foundation
import Relate

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Walk through BaseTen's example schema: objects, proxies, inverses, delete rules.",
        discussion: """
            Without a URL, a throwaway PostgreSQL server is started from the system's packages
            and removed afterwards. With one, the demo works in a schema of its own (--schema).
            Each step prints what it does and the SQL it sent.
            """)

    @Argument(help: "A postgresql:// URL or conninfo string; none for a throwaway server.")
    var url: String?

    @Option(help: "The schema the demo creates and works in.")
    var schema = "relate_demo"

    func run() throws {
        guard let url else {
            print("Starting a throwaway PostgreSQL server…")
            let server = try TemporaryServer()
            let interruptions = server.stopOnInterrupt()
            defer {
                interruptions.forEach { $0.cancel() }
                server.stop()
            }
            try walkThrough(url: try server.start())
            print("\nThe throwaway server is stopped and removed.")
            return
        }
        try walkThrough(url: url)
    }

    private func walkThrough(url: String) throws {
        let setup = try Connection(conninfo: url)
        if try setup.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]).count > 0 {
            throw ValidationError("schema \"\(schema)\" exists already; pass --schema with another name, or drop it")
        }
        let quoted = try setup.quoteIdentifier(schema)
        try setup.execute("CREATE SCHEMA \(quoted)")
        try setup.execute("SET search_path TO \(quoted)")
        try setup.executeScript(Self.seedSchema)
        print("Loaded BaseTen's example schema into \(schema): person, email, title, person_title_rel.\n")

        let context = try DatabaseContext(connection: setup, schemas: [schema])
        var sent: [String] = []
        context.connection.trace = { sent.append($0) }
        func step(_ title: String, _ body: () throws -> String) {
            sent.removeAll()
            print("▸ \(title)")
            let outcome: String
            switch Result(catching: body) {
            case .success(let text): outcome = text
            case .failure(let error): outcome = "error: \(error)"
            }
            for sql in sent { print("    SQL  \(sql)") }
            print("    →    \(outcome)\n")
        }
        func names(_ set: RelationshipSet, _ key: String) -> String {
            "[" + set.map { "\((try? $0.value(forKey: key)).flatMap { $0 }.map { "\($0)" } ?? "?")" }.sorted().joined(separator: ", ") + "]"
        }

        var ada: DatabaseObject!
        var grace: DatabaseObject!
        step("Insert two people (INSERT … RETURNING, so the serial ids show)") {
            ada = try context.insert("person", values: ["firstname": "Ada", "surname": "Lovelace"])
            grace = try context.insert("person", values: ["firstname": "Grace", "surname": "Hopper"])
            return "\(ada!) and \(grace!)"
        }
        step("Give them emails and titles") {
            _ = try context.insert("email", values: ["address": "ada@example.com", "person": ada])
            _ = try context.insert("email", values: ["address": "ada@analytical.engine", "person": ada])
            _ = try context.insert("email", values: ["address": "grace@navy.mil", "person": grace])
            for name in ["Countess", "Rear Admiral", "Doctor"] { _ = try context.insert("title", values: ["name": name]) }
            return "3 emails, 3 titles"
        }
        step("Fetch Ada by name: the same object, from the identity map") {
            let found = try context.fetch("person", where: "firstname = $1", ["Ada"])
            return "\(found[0]) — same instance: \(found[0] === ada)"
        }
        step("person.email is a collection: the fault loads all of it in one query") {
            names(try ada.objects(forKey: "email"), "address")
        }
        step("email.person is an object (the key is the constraint's name, `person`)") {
            let email = try ada.objects(forKey: "email").allObjects[0]
            return "\(email).person = \(try email.object(forKey: "person").map { "\($0)" } ?? "nil")"
        }
        step("person.title goes through the helper table person_title_rel") {
            names(try ada.objects(forKey: "title"), "name")
        }
        step("Insert into the title proxy: one INSERT into the helper table") {
            let countess = try context.fetch("title", where: "name = $1", ["Countess"])[0]
            try ada.objects(forKey: "title").insert(countess)
            return "Ada's titles \(names(try ada.objects(forKey: "title"), "name")); the Countess's people \(names(try countess.objects(forKey: "person"), "firstname"))"
        }
        step("Replace Grace's titles: only the difference is written, in one pipeline") {
            let titles = try context.fetch("title", where: "name <> $1", ["Countess"])
            try grace.setValue(titles, forKey: "title")
            return names(try grace.objects(forKey: "title"), "name")
        }
        step("Move an email from Ada to Grace: one UPDATE; both sets follow in memory") {
            let email = try context.fetch("email", where: "address = $1", ["ada@analytical.engine"])[0]
            try grace.objects(forKey: "email").insert(email)
            return "Ada \(names(try ada.objects(forKey: "email"), "address")), Grace \(names(try grace.objects(forKey: "email"), "address"))"
        }
        step("Remove a title: one DELETE of the helper row") {
            let doctor = try context.fetch("title", where: "name = $1", ["Doctor"])[0]
            try grace.objects(forKey: "title").remove(doctor)
            return names(try grace.objects(forKey: "title"), "name")
        }
        step("Delete Grace: her emails and titles still refer to her (NO ACTION), so the delete is denied") {
            try context.delete(grace)
            return "deleted"
        }
        step("Empty her collections (UPDATE … SET NULL, DELETE from the helper), then delete her") {
            try grace.setValue(nil, forKey: "email")
            try grace.setValue(nil, forKey: "title")
            try context.delete(grace)
            return "Grace deleted: \(grace.isDeleted); people left: \(try context.fetch("person").map(\.description))"
        }
        step("A transaction that fails rolls back the database and the objects") {
            struct Oops: Error {}
            do {
                try context.transaction {
                    try ada.setValue("Byron", forKey: "surname")
                    throw Oops()
                }
            } catch is Oops {}
            return "Ada's surname is still \(try ada.value(forKey: "surname") ?? "nil")"
        }
    }

    /// BaseTen's two examples (seed 000) in one schema.
    static let seedSchema = """
        CREATE TABLE person (
                id SERIAL PRIMARY KEY,
                firstname VARCHAR (255),
                surname VARCHAR (255)
        );
        CREATE TABLE email (
                id SERIAL PRIMARY KEY,
                address VARCHAR (255),
                person_id INTEGER CONSTRAINT person REFERENCES person (id)
        );
        CREATE TABLE title (
                id SERIAL PRIMARY KEY,
                name VARCHAR (255)
        );
        CREATE TABLE person_title_rel (
                person_id INTEGER REFERENCES person (id),
                title_id INTEGER REFERENCES title (id),
                PRIMARY KEY (person_id, title_id)
        );
        """
}
