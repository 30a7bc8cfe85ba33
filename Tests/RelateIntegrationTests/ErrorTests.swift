import Foundation
import RelatePostgres
import Testing

@Suite struct ErrorTests {
    @Test func constraintViolationCarriesSQLStateAndConstraint() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("CREATE TABLE account (id int PRIMARY KEY, email text CONSTRAINT account_email_key UNIQUE)")
            try connection.execute("INSERT INTO account VALUES (1, $1)", ["ada@example.com"])
            let error = #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO account VALUES (2, $1)", ["ada@example.com"])
            }
            #expect(error?.kind == .server)
            #expect(error?.sqlState == .uniqueViolation)
            #expect(error?.constraint == "account_email_key")
            #expect(error?.table == "account")
            #expect(error?.schema == schema)
            #expect(error?.detail?.contains("ada@example.com") == true)
            // The description names the cause but never a bound value (the detail quotes it).
            let text = "\(error!)"
            #expect(text.contains("23505"))
            #expect(text.contains("account_email_key"))
            #expect(!text.contains("ada@example.com"))
            #expect(error!.debugDescription.contains("ada@example.com"))

            let notNull = #expect(throws: PostgresError.self) { try connection.execute("INSERT INTO account VALUES (NULL, 'x')") }
            #expect(notNull?.sqlState == .notNullViolation)
            #expect(notNull?.column == "id")
        }
    }

    @Test func syntaxErrorGivesPosition() throws {
        let connection = try TestDatabase.connect()
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT 1 FROM WHERE x") }
        #expect(error?.sqlState == .syntaxError)
        #expect(error?.position == 15)
        #expect(error?.sql == "SELECT 1 FROM WHERE x")
        #expect("\(error!)".contains("position 15"))
    }

    @Test func boundValuesStayOutOfDescriptions() throws {
        let connection = try TestDatabase.connect()
        let secret = "hunter2-not-a-number"
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT $1::int", [secret]) }
        #expect(error?.sqlState == .invalidTextRepresentation)
        #expect(!"\(error!)".contains(secret))
        #expect(error?.message.contains("$1") == true)
    }

    /// The value refused is found by its place among NULLs, empty texts and binary values,
    /// which take no room or another form in the parameters' buffer.
    @Test func aBoundValueAfterNullsAndEmptyTextsStaysOutToo() throws {
        let connection = try TestDatabase.connect()
        let secret = "hunter3-not-a-number"
        let error = #expect(throws: PostgresError.self) {
            try connection.query("SELECT $1::int8, $2::text, $3::text, $4::int", [5, nil, "", secret])
        }
        #expect(error?.sqlState == .invalidTextRepresentation)
        #expect(!"\(error!)".contains(secret))
        #expect(error?.message.contains("$4") == true)
    }

    @Test func wrongPasswordNeverShowsThePassword() throws {
        let url = try TestDatabase.url()
        let wrong = "Wr0ng-Pa55word-\(UUID().uuidString.prefix(8))"
        let components = URLComponents(string: url)!
        var bad = components
        bad.password = wrong
        let error = #expect(throws: PostgresError.self) { try Connection(url: bad.string!) }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.message.contains("password authentication failed") == true)
        #expect(!"\(error!)".contains(wrong))
        #expect(!error!.debugDescription.contains(wrong))

        // As a conninfo string too, and with the right password in a malformed string.
        let conninfo = "host=\(components.host!) port=\(components.port!) user=\(components.user!) password='\(wrong)' dbname=postgres"
        let viaConninfo = #expect(throws: PostgresError.self) { try Connection(conninfo: conninfo) }
        #expect(!"\(viaConninfo!)".contains(wrong))
        let malformed = #expect(throws: PostgresError.self) { try Connection(conninfo: "host=x password \(wrong)") }
        #expect(!"\(malformed!)".contains(wrong))
        // URLs libpq cannot read, whose message quotes them (a lone `"` left the quotes
        // unpaired, and the URL with the password in the error).
        for url in ["postgresql://user:\(wrong)@[::1]\"/db", "postgresql://user:\(wrong)@[::1]x/db", "postgresql://user:\(wrong)@[::1",
                    "postgresql://user:\(wrong)@h/db?%zz=1", "postgresql://user:\(wrong)\"@h/db"] {
            let error = #expect(throws: PostgresError.self, "\(url)") { try Connection(url: url) }
            #expect(!"\(error!)".contains(wrong.prefix(8)), "\(error!)")
        }
    }

    @Test func unreachableHostGivesAClearErrorWithoutPassword() throws {
        let secret = "S3cret-\(UUID().uuidString.prefix(6))"
        let error = #expect(throws: PostgresError.self) {
            try Connection(url: "postgresql://relate:\(secret)@127.0.0.1:1/postgres?connect_timeout=5")
        }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.message.contains("127.0.0.1") == true)
        #expect(!"\(error!)".contains(secret))
    }

    @Test func terminatedConnectionFailsCleanlyAndANewOneWorks() throws {
        let victim = try TestDatabase.connect()
        let pid = try victim.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0)
        let admin = try TestDatabase.connect()
        #expect(try admin.query("SELECT pg_terminate_backend($1::int)", [pid])[0].decode(Bool.self, at: 0))
        let error = #expect(throws: PostgresError.self) { try victim.query("SELECT 1") }
        #expect(error?.kind == .connectionClosed)
        #expect(!victim.isOpen)
        let again = #expect(throws: PostgresError.self) { try victim.query("SELECT 1") }
        #expect(again?.kind == .connectionClosed)
        #expect(again?.message.contains("new Connection") == true)
        #expect(throws: PostgresError.self) { try victim.pipeline([PostgresStatement("SELECT 1")]) }
        let fresh = try TestDatabase.connect()
        #expect(try fresh.query("SELECT 41 + 1")[0].decode(Int.self, at: 0) == 42)
    }

    @Test func closedConnectionThrows() throws {
        let connection = try TestDatabase.connect()
        connection.close()
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(error?.kind == .connectionClosed)
    }
}
