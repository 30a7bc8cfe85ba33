import Foundation
import Testing

@testable import Relate

/// Roles made for one test (LOGIN, a password, nothing else: PUBLIC's CONNECT on every
/// database), dropped afterwards; roles are the cluster's, so the names are random.
final class TestRoles {
    private(set) var names: [String] = []
    private let admin: Connection

    init() throws {
        admin = try TestDatabase.connect()
    }

    /// A new role that may log in with `password`, and nothing more.
    func make(_ purpose: String) throws -> (name: String, password: String) {
        let name = "\(purpose)_" + UUID().uuidString.prefix(8).lowercased()
        let password = "pw" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16)
        try admin.execute("CREATE ROLE \(name) LOGIN PASSWORD '\(password)'")
        names.append(name)
        return (name, password)
    }

    /// `url` (a URL or conninfo) as `role`.
    static func url(_ url: String, as role: (name: String, password: String)) -> String {
        if var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true {
            components.user = role.name
            components.password = role.password
            return components.string ?? url
        }
        return url + " user=\(role.name) password=\(role.password)"
    }

    deinit {
        for name in names.reversed() {
            _ = try? admin.execute("DROP OWNED BY \(name)")
            _ = try? admin.execute("DROP ROLE IF EXISTS \(name)")
        }
    }
}

/// Change tracking in a database other roles share (issue 26, items 1 and 2): a notification
/// is a hint that anyone who may connect can send, and the triggers never make another
/// program's write fail.
@Suite struct TrackingTrustTests {
    /// A role with nothing but CONNECT sends every kind of forged payload; the context keeps
    /// working (no error, sticky or not), reads rows again at worst, and agrees with the
    /// database afterwards; a real change still arrives.
    @Test func forgedNotificationsFromAConnectOnlyRoleCostAtMostARereading() throws {
        let roles = try TestRoles()
        let intruder = try roles.make("intruder")
        try ChangeTrackingTests.withTrackedDatabase(.triggers) { url, setup, observer in
            let context = observer.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emailOID = try setup.query("SELECT 'email'::regclass::oid::int8")[0].decode(Int.self, at: 0)
            let personOID = try setup.query("SELECT 'person'::regclass::oid::int8")[0].decode(Int.self, at: 0)
            // A table of the same name elsewhere, with other columns.
            try setup.executeScript("CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.person (x int)")
            let elsewhereOID = try setup.query("SELECT 'elsewhere.person'::regclass::oid::int8")[0].decode(Int.self, at: 0)
            let forger = try Connection(url: TestRoles.url(url, as: intruder))
            let storedByOwner = try setup.query("SELECT count(*) FROM relate_tracking.change")[0].decode(Int.self, at: 0)
            #expect(storedByOwner == 0)

            let huge = "{\"x\":9,\"s\":\"public\",\"t\":\"person\",\"k\":\"U\",\"keys\":["
                + (1...1_000).map { "[\($0)]" }.joined(separator: ",") + "]}"
            let payloads: [String] = [
                // The issue's: person's name with email's oid.
                #"{"x":2,"r":\#(emailOID),"s":"public","t":"person","k":"U","keys":[[4]]}"#,
                // email's oid under a name that exists nowhere; another schema's person.
                #"{"x":3,"r":\#(emailOID),"s":"public","t":"nope","k":"I","keys":[[1]]}"#,
                #"{"x":3,"r":\#(elsewhereOID),"s":"elsewhere","t":"person","k":"U","keys":[[1]]}"#,
                #"{"x":3,"r":\#(elsewhereOID),"s":"public","t":"person","k":"U","keys":[[1]]}"#,
                #"{"x":3,"r":999999999,"s":"public","t":"person","k":"D","keys":[[1]]}"#,
                // Not JSON, not an object, empty.
                "not json {", "[1,2,3]", "", "null", #""a string""#,
                // Every field of the wrong type.
                #"{"x":"y","r":"z","s":1,"t":[],"k":5,"keys":"abc","old":7}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"Z","keys":"abc"}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[["abc"]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[{"a":1}]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[1,2,3]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[1e308]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[99999999999999999999999]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[null]],"old":[[true]]}"#,
                #"{"x":4,"s":"public","t":"person","k":"U","keys":[[]]}"#,
                // A forged delete of a row that exists: read again, not deleted.
                #"{"x":5,"r":\#(personOID),"s":"public","t":"person","k":"D","keys":[[1]]}"#,
                // A stored payload's id that does not exist, and one that is not a number.
                #"{"x":6,"id":999999,"r":\#(personOID),"s":"public","t":"person","k":"U"}"#,
                #"{"x":6,"id":-1}"#, #"{"x":6,"id":"1"}"#,
                // As many keys as NOTIFY carries.
                huge,
            ]
            for payload in payloads {
                _ = try forger.query("SELECT pg_notify('relate_changes', $1)", [payload])
                #expect(throws: Never.self, "\(payload.prefix(80))") { _ = try context.waitForChanges(timeout: .milliseconds(100)) }
            }
            // NOTIFY refuses what is over its limit: the forger's problem.
            #expect(throws: (any Error).self) {
                _ = try forger.query("SELECT pg_notify('relate_changes', $1)", [String(repeating: "x", count: 9_000)])
            }
            #expect(!ada.isDeleted)
            #expect(try observer.disagreements() == [])

            // A CONNECT-only role cannot store a payload, nor install or remove triggers.
            for statement in [
                "INSERT INTO relate_tracking.change (payload) VALUES ('{}')",
                "SELECT relate_tracking.track('person')", "SELECT relate_tracking.untrack('person')",
            ] {
                let error = #expect(throws: PostgresError.self, "\(statement)") { try forger.execute(statement) }
                #expect(error?.sqlState?.rawValue == "42501", "\(statement)")
            }

            // Real changes still arrive, and the context never got stuck.
            let other = try Connection(url: url)
            try other.execute("UPDATE person SET surname = 'King' WHERE id = 1")
            #expect(try observer.settle().map(\.description).contains("update person (surname)"))
            #expect(try ada.value(forKey: "surname") as? String == "King")
            #expect(try observer.disagreements() == [])
        }
    }

    /// A table renamed after the model was read: its oid's name is not the model's, and the
    /// notifications of its writes (under the new name) say so.
    @Test func aRenamedTableIsASchemaChange() throws {
        try ChangeTrackingTests.withTrackedDatabase(.triggers) { url, setup, observer in
            try setup.execute("ALTER TABLE title RENAME TO honour")
            try setup.execute("UPDATE honour SET name = 'Lady' WHERE id = 1")
            let error = #expect(throws: RelateError.self) { _ = try observer.settle() }
            #expect(error?.kind == .schemaChanged)
            #expect(error?.message.contains("now named public.honour") == true)
        }
    }
}
