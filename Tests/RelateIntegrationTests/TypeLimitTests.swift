import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Values at the edges of their types (an adversarial review's findings, each failing
/// before its fix): values Swift cannot negate, a database's own output style, arrays of a
/// shape a Swift array cannot hold, enum arrays held pending.
@Suite struct TypeLimitTests {
    static func count(_ connection: Connection, _ sql: String) throws -> Int {
        try connection.query(sql)[0].decode(Int.self, at: 0)
    }

    /// The least day count the server sends prints; an offset with no negation is refused,
    /// never a trap.
    @Test func extremesPrintAndEncodeWithoutATrap() throws {
        let connection = try TestDatabase.connect()
        let interval = try connection.query("SELECT interval '-2147483648 days'", format: .binary)[0].decode(PostgresInterval.self, at: 0)
        #expect(interval.days == Int32.min)
        #expect(interval.description == "-2147483648 days")
        var buffer: [UInt8] = []
        #expect(throws: PostgresEncodingError.self) { try PostgresTime(microseconds: 0, utcOffset: Int32.min).encode(into: &buffer) }
        #expect(throws: PostgresEncodingError.self) { try PostgresTime(microseconds: 0, utcOffset: 16 * 3600).encode(into: &buffer) }
        let east = try connection.query("SELECT $1::timetz::text", [PostgresTime(hour: 9, minute: 0, utcOffset: 15 * 3600 + 59 * 60)])[0]
        #expect(try east.decode(String.self, at: 0) == "09:00:00+15:59")
    }

    /// A database whose intervals print in another style: a connection reads them in text
    /// all the same (the session takes `postgres`, as it takes ISO dates).
    @Test func intervalsReadUnderADatabasesIntervalStyle() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.execute("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET IntervalStyle = %L', current_database(), 'iso_8601'); END $$")
            let connection = try Connection(url: url)
            let row = try connection.query("SELECT interval '1 mon 2 days 03:04:05'")[0]
            #expect(try row.decode(PostgresInterval.self, at: 0) == PostgresInterval(months: 1, days: 2, microseconds: 11_045_000_000))
        }
    }
}

extension TypeLimitTests {
    /// Values the library sends as their text (an enum array's literal, a JSON document for a
    /// `json` column, an array of ranges) are held pending as a read gives them, and saved.
    @Test func valuesSentAsTextAreHeldPendingAsTheyRead() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TYPE mood AS ENUM ('happy', 'sad');
                CREATE TABLE e (id int PRIMARY KEY, moods mood[], raw json, ranges int4range[]);
                INSERT INTO e VALUES (1, '{happy}', NULL, NULL);
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let row = try #require(try context.object("e", primaryKey: 1))
            let read = try row.value(forKey: "moods")
            context.autocommits = false
            try row.setValue(["sad", "happy"], forKey: "moods")
            try row.setValue(JSONValue.object(["a": 1]), forKey: "raw")
            try row.setValue([PostgresRange(1..<3)], forKey: "ranges")
            #expect(try row.value(forKey: "moods").map { "\(Swift.type(of: $0))" } == read.map { "\(Swift.type(of: $0))" })
            #expect(try row.value(forKey: "moods") as? [String] == ["sad", "happy"])
            #expect(try row.value(forKey: "raw") as? JSONValue == ["a": 1])
            #expect(try row.value(forKey: "ranges") as? [PostgresRange<Int>] == [PostgresRange(1..<3)])
            try row.setValue(["sad", "angry"], forKey: "moods")
            let refused = #expect(throws: RelateError.self) { try context.save() }
            #expect(refused?.kind == .validationFailed)
            try row.setValue(["sad", "happy"], forKey: "moods")
            let added = try context.insert("e", values: ["id": 2, "moods": ["happy"], "raw": JSONValue.array([1, "x"])])
            #expect(try added.value(forKey: "moods") as? [String] == ["happy"])
            try context.save()
            #expect(try Self.count(connection, "SELECT count(*)::int FROM e WHERE moods = '{happy}' AND raw::text = '[1,\"x\"]'") == 1)
            // A json column's text given as a String is written as given (its order, its
            // spacing, a name twice), never rewritten.
            let given = #"{"b": 1, "a": 2, "a": 3}"#
            try added.setValue(given, forKey: "raw")
            #expect(try added.value(forKey: "raw") as? String == given)
            try context.save()
            #expect(try Self.count(connection, "SELECT count(*)::int FROM e WHERE raw::text = '\(given)'") == 1)
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            let saved = try #require(try fresh.object("e", primaryKey: 1))
            #expect(try saved.value(forKey: "moods") as? [String] == ["sad", "happy"])
            #expect(try saved.value(forKey: "raw") as? JSONValue == ["a": 1])
            #expect(try saved.value(forKey: "ranges") as? [PostgresRange<Int>] == [PostgresRange(1..<3)])
            #expect(try row.value(forKey: "moods") as? [String] == ["sad", "happy"])
        }
    }
}

extension TypeLimitTests {
    /// Arrays a Swift array cannot hold as they are (two dimensions, a first index other
    /// than 1) read as their text, in binary and text form: the table's other rows still
    /// read, and the value goes back, compares and saves as the same array.
    @Test func arraysOfAnotherShapeReadAsTheirText() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE a (id int PRIMARY KEY, m int4[][], v text[], note text);
                INSERT INTO a VALUES (1, '{{1,2},{3,NULL}}', '[0:1]={x,"y z"}', 'one'), (2, '{5}', '{w}', 'two');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let rows = try context.fetch(FetchRequest("a", orderBy: [.ascending("id")]))
            #expect(rows.count == 2)
            #expect(try rows[0].value(forKey: "m") as? String == #"{{"1","2"},{"3",NULL}}"#)
            #expect(try rows[0].value(forKey: "v") as? String == #"[0:1]={"x","y z"}"#)
            #expect(try rows[1].value(forKey: "m") as? [Int] == [5])
            let printed = Array(try connection.query("SELECT m FROM a WHERE id = 1")[0].decode(String.self, at: 0).utf8)
            #expect(try printed.withUnsafeBytes { try PostgresValue.decode(from: $0, type: .int4Array, format: .text) } as? String == "{{1,2},{3,NULL}}")
            let m = try rows[0].value(forKey: "m")
            let v = try rows[0].value(forKey: "v")
            #expect(try context.count(FetchRequest("a", where: Key("m") == (m as? String) && Key("v") == (v as? String))) == 1)
            try rows[1].setValue(m, forKey: "m")
            #expect(try Self.count(connection, "SELECT count(*)::int FROM a WHERE m = '{{1,2},{3,NULL}}'") == 2)
            context.autocommits = false
            try rows[0].setValue("edited", forKey: "note")
            try rows[1].setValue(v, forKey: "v")
            try context.save()
            #expect(try Self.count(connection, "SELECT count(*)::int FROM a WHERE v = '[0:1]={x,\"y z\"}' AND array_lower(v, 1) = 0") == 2)
        }
    }
}

extension TypeLimitTests {
    /// `== nil` and `!= nil` on a composite column hold for NULL alone, as in Swift: a
    /// record of NULL fields is a record.
    @Test func aCompositeIsNilOnlyWhenItIsNull() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TYPE pair AS (a text, b int4);
                CREATE TABLE c (id int PRIMARY KEY, p pair);
                INSERT INTO c VALUES (1, ROW(NULL, NULL)), (2, NULL), (3, ROW('x', 1)), (4, ROW('y', NULL));
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            func ids(_ condition: Condition) throws -> [Int] {
                try context.fetch(FetchRequest("c", where: condition)).map { try $0.value(forKey: "id", as: Int.self)! }.sorted()
            }
            let nils = try context.fetch(FetchRequest("c")).filter { try $0.value(forKey: "p") == nil }.map { try $0.value(forKey: "id", as: Int.self)! }
            #expect(nils == [2])
            #expect(try ids(Key("p") == nil) == [2])
            #expect(try ids(Key("p") != nil) == [1, 3, 4])
            #expect(try ids(Key("p").in([nil])) == [2])
        }
    }
}

extension TypeLimitTests {
    /// A table keyed by a composite type, whose rows cannot be read again by key: a change to
    /// it lets go of its objects, and the other tables' changes of the same batch are
    /// applied, with either mechanism.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aTableThatCannotBeReadAgainDoesNotStopTheFeed(_ mechanism: ChangeTracking.Mechanism) throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE TYPE pair AS (a text, b int4);
                CREATE TABLE keyed (id pair PRIMARY KEY, note text);
                CREATE TABLE plain (id int PRIMARY KEY, note text);
                INSERT INTO keyed VALUES (ROW('a', 1), 'a'); INSERT INTO plain VALUES (1, 'a');
                """)
            switch mechanism {
            case .triggers: try ChangeTracking.enable(on: setup)
            case .logicalDecoding: try ChangeTracking.enable(logicalDecodingOn: setup)
            }
            let context = try DatabaseContext(url: url)
            try context.startTrackingChanges(using: mechanism)
            let keyed = try #require(try context.fetch("keyed").first)
            let plain = try #require(try context.object("plain", primaryKey: 1))
            try setup.executeScript("BEGIN; UPDATE keyed SET note = 'b'; UPDATE plain SET note = 'b'; COMMIT")
            let deadline = ContinuousClock.now + .seconds(10)
            while try plain.value(forKey: "note") as? String != "b", ContinuousClock.now < deadline {
                _ = try context.waitForChanges(timeout: .milliseconds(200))
            }
            #expect(try plain.value(forKey: "note") as? String == "b")
            #expect(keyed.isDeleted)
        }
    }
}

extension TypeLimitTests {
    /// A write whose row comes back with a value its Swift type cannot hold (a numeric past
    /// `Decimal`, set by a default; a JSON number past it) answers as written, never an error
    /// for a write that committed: the value is held as its text.
    @Test func aWriteAnsweringAValueSwiftCannotHoldSucceeds() throws {
        try TestDatabase.withSchema { connection, schema in
            let long = "123456789012345678901234567890123456789012345"
            try connection.executeScript("""
                CREATE TABLE t (id int4 PRIMARY KEY, amount numeric DEFAULT \(long), note text, body jsonb);
                INSERT INTO t VALUES (1, \(long), 'a', '{}');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let one = try #require(try context.update("t", primaryKey: 1, values: ["note": "b"]))
            #expect(try one.value(forKey: "amount") as? String == long)
            let two = try context.insert("t", values: ["id": 2])
            #expect(try two.value(forKey: "amount") as? String == long)
            #expect(try context.insert("t", rows: [["id": 3], ["id": 4]]).count == 2)
            try one.setValue(#"{"v": 1e300}"#, forKey: "body")
            // As jsonb stores it: the number's digits.
            #expect(try one.value(forKey: "body") as? String == #"{"v": 1"# + String(repeating: "0", count: 300) + "}")
            #expect(try Self.count(connection, "SELECT count(*)::int FROM t WHERE amount::text = '\(long)'") == 4)
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            #expect(try ObjectFixture.disagreements(of: context, with: fresh) == [])
        }
    }
}

extension TypeLimitTests {
    /// Reads seeing pending changes judge values only the server can compare as it does: an
    /// interval of a month against 30 days, infinities and `NaN`, `char(n)` blind to trailing
    /// blanks, a range in another form, times, addresses and arrays in order; the answers
    /// are those a read after `save()` gives.
    @Test func pendingRowsAreJudgedAsTheServerJudgesThem() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE p (id int PRIMARY KEY, span interval, f float8, n numeric, c char(4), seats int4range, t time, host inet, tags int4[]);
                INSERT INTO p VALUES (1, '1 day', 0, 0, 'zz', '[1,2)', '00:00', '0.0.0.0', '{}'), (2, '2 days', 0, 0, 'zz', '[1,2)', '00:00', '0.0.0.0', '{}');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            context.autocommits = false
            let row = try #require(try context.object("p", primaryKey: 1))
            try row.setValue(PostgresInterval(months: 1), forKey: "span")
            try row.setValue(Double.infinity, forKey: "f")
            try row.setValue(Decimal.nan, forKey: "n")
            try row.setValue("ab", forKey: "c")
            try row.setValue(PostgresRange<Int>(lower: .inclusive(1), upper: .inclusive(5)), forKey: "seats")
            try row.setValue(PostgresTime(hour: 5, minute: 0), forKey: "t")
            try row.setValue(try PostgresInet("10.0.0.1"), forKey: "host")
            try row.setValue([3, 4], forKey: "tags")
            let requests = [
                FetchRequest("p", where: Key("span") == PostgresInterval(days: 30)), FetchRequest("p", where: Key("span") > PostgresInterval(days: 3)),
                FetchRequest("p", where: Key("f") == Double.infinity), FetchRequest("p", where: Key("f") > 1.0),
                FetchRequest("p", where: Key("n") > Decimal(1)), FetchRequest("p", where: Key("c") == "ab  "),
                FetchRequest("p", where: Key("seats") == PostgresRange(1..<6)), FetchRequest("p", where: Key("t") > PostgresTime(hour: 1, minute: 0)),
                FetchRequest("p", where: Key("host") > (try PostgresInet("1.0.0.0"))), FetchRequest("p", where: Key("tags") > [1]),
                FetchRequest("p", orderBy: [.ascending("span"), .ascending("id")]), FetchRequest("p", orderBy: [.descending("tags"), .ascending("id")]),
            ]
            func ids(_ context: DatabaseContext) throws -> [[Int]] {
                try requests.map { try context.fetch($0).map { try $0.value(forKey: "id", as: Int.self)! } }
            }
            let pending = try ids(context)
            try context.save()
            let saved = try ids(DatabaseContext(connection: TestDatabase.connect(), schemas: [schema]))
            #expect(saved == [[1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [2, 1], [1, 2]])
            #expect(pending == saved)
        }
    }
}

extension TypeLimitTests {
    /// A label added to an enum since the model was read is taken by `save()` (the server is
    /// asked), as write-through takes it; a label the server lacks too is still refused
    /// before anything is sent.
    @Test func aLabelAddedSinceTheModelWasReadIsSaved() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TYPE mood AS ENUM ('happy', 'sad');
                CREATE TABLE e (id int PRIMARY KEY, one mood, many mood[]);
                INSERT INTO e VALUES (1, 'happy', '{happy}'), (2, 'happy', NULL);
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            try connection.execute("ALTER TYPE mood ADD VALUE 'angry'")
            // The type is asked for by its OID: its name is off the session's search path.
            try connection.execute("SET search_path TO public")
            context.autocommits = false
            let row = try #require(try context.object("e", primaryKey: 2))
            try row.setValue("angry", forKey: "one")
            try row.setValue(["sad", "angry"], forKey: "many")
            try context.save()
            #expect(try Self.count(connection, "SELECT count(*)::int FROM \(schema).e WHERE one = 'angry' AND many = '{sad,angry}'") == 1)
            try row.setValue("furious", forKey: "one")
            let refused = #expect(throws: RelateError.self) { try context.save() }
            #expect(refused?.kind == .validationFailed && refused?.message.contains("happy, sad, angry") == true, "\(refused?.message ?? "")")
        }
    }
}

extension TypeLimitTests {
    /// A text given for a column while pending is stored as it is with autocommit on: sent
    /// as given for the server to judge, never parsed and written back otherwise (a scale,
    /// a json document's order, a value out of range).
    @Test(arguments: [
        ("json", #"{"b": 1.0, "a": [1, 2]}"#), ("json", #"{"a": 1, "a": 2}"#), ("jsonb", #"{"a": 1.0}"#), ("numeric[]", "{1.50}"),
        ("numrange", "[1.50,2]"), ("float8[]", "{1e400}"), ("float8[]", "{1e-400}"), ("interval", "1 day 1 day"),
        ("interval[]", #"{"1 year 1 year"}"#), ("int4range[]", #"{"[1,3)"}"#), ("text[]", "{a, b}"),
    ])
    func aTextGivenPendingIsStoredAsWithAutocommit(type: String, literal: String) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("CREATE TABLE t (id int PRIMARY KEY, v \(type))")
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            var autocommitted: (any Error)?
            do { _ = try context.insert("t", values: ["id": 1, "v": literal]) } catch { autocommitted = error }
            context.autocommits = false
            var pending: (any Error)?
            do {
                _ = try context.insert("t", values: ["id": 2, "v": literal])
                try context.save()
            } catch {
                pending = error
                context.rollback()
            }
            #expect((autocommitted == nil) == (pending == nil), "\(type) \(literal): \(String(describing: autocommitted)); \(String(describing: pending))")
            if autocommitted == nil, pending == nil {
                let stored = try connection.query("SELECT (SELECT v::text FROM t WHERE id = 1), (SELECT v::text FROM t WHERE id = 2)")[0]
                #expect(try stored.decode(String?.self, at: 0) == stored.decode(String?.self, at: 1), "\(type) \(literal)")
            }
        }
    }
}

extension TypeLimitTests {
    /// The server ranks values of a type off the session's search path (an enum array, a
    /// domain in another schema) as well: pending reads answer as after `save()`.
    @Test func pendingReadsRankTypesOffTheSearchPath() throws {
        try TestDatabase.withSchema { connection, schema in
            let other = "\(schema)_types"
            try connection.executeScript("""
                CREATE TYPE mood AS ENUM ('happy', 'sad');
                CREATE SCHEMA \(other); CREATE DOMAIN \(other).span AS interval;
                CREATE TABLE t (id int PRIMARY KEY, moods mood[], s \(other).span);
                INSERT INTO t VALUES (1, '{happy}', '1 day'), (2, '{sad}', '2 days'), (3, '{happy,sad}', '3 days');
                SET search_path TO public;
                """)
            defer { _ = try? connection.execute("DROP SCHEMA \(other) CASCADE") }
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let one = try #require(try context.object("t", primaryKey: 1))
            context.autocommits = false
            try one.setValue(["sad"], forKey: "moods")
            try one.setValue(PostgresInterval(months: 1), forKey: "s")
            let requests = [
                FetchRequest("t", where: Key("moods") == ["sad"], orderBy: [.ascending("id")]),
                FetchRequest("t", orderBy: [.ascending("s")]), FetchRequest("t", orderBy: [.descending("moods"), .ascending("id")]),
            ]
            func ids(_ context: DatabaseContext) throws -> [[Int]] {
                try requests.map { try context.fetch($0).map { try $0.value(forKey: "id", as: Int.self)! } }
            }
            let pending = try ids(context)
            try context.save()
            #expect(pending == (try ids(context)))
        }
    }

    /// `NaN` and infinities of `real` and `numeric` (this one read as its text past
    /// `Decimal`) judged pending as the server judges them.
    @Test func pendingReadsJudgeNaNAndInfinitiesOfEveryNumber() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE t (id int PRIMARY KEY, d float8, r real, n numeric, note text);
                INSERT INTO t VALUES (1, 'NaN', 'NaN', 'NaN', ''), (2, 'Infinity', 'Infinity', 'Infinity', ''),
                    (3, '-Infinity', '-Infinity', '-Infinity', ''), (4, 1, 1, 1e40, ''), (5, -1, -1, -1, '');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let rows = try context.fetch(FetchRequest("t", orderBy: [.ascending("id")]))
            context.autocommits = false
            for row in rows where try row.value(forKey: "id") as? Int != 4 { try row.setValue("x", forKey: "note") }
            let nans: [String: any Sendable] = ["d": Double.nan, "r": Float.nan, "n": Decimal.nan]
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            for key in ["d", "r", "n"] {
                for request in [
                    FetchRequest("t", orderBy: [.ascending(key)]), FetchRequest("t", where: Key(key) > 0, orderBy: [.descending(key)]),
                    FetchRequest("t", where: Key(key) == nans[key]!, orderBy: [.descending(key)]),
                ] {
                    let pending = try context.fetch(request).map { try $0.value(forKey: "id", as: Int.self)! }
                    let saved = try fresh.fetch(request).map { try $0.value(forKey: "id", as: Int.self)! }
                    #expect(pending == saved, "\(key): \(request)")
                }
            }
        }
    }
}

extension TypeLimitTests {
    /// Enum labels are told apart by their bytes, as the server tells them apart: a label
    /// that differs from the type's only in its Unicode form (a decomposed `é`) is refused
    /// by validation, naming the column, not by the server at save.
    @Test func enumLabelsAreToldApartByBytes() throws {
        try ObjectFixture.inSchema(made: """
            CREATE TYPE accent AS ENUM (U&'caf\\00E9', 'plain');
            CREATE TABLE menu (id int PRIMARY KEY, dish accent);
            INSERT INTO menu VALUES (1, 'plain');
            """) { f in
            let menu = try #require(try f.context.object("menu", primaryKey: 1))
            f.context.autocommits = false
            try menu.setValue("cafe\u{301}", forKey: "dish")
            let error = #expect(throws: RelateError.self) { try f.context.save() }
            #expect(error?.message.contains("is not a label of enum accent") == true, "\(error.map { "\($0)" } ?? "")")
            try menu.setValue("caf\u{E9}", forKey: "dish")
            try f.context.save()
            #expect(try f.context.connection.query("SELECT dish::text = U&'caf\\00E9' FROM menu")[0].decode(Bool.self, at: 0))
        }
    }
}
