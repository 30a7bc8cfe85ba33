import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// `COPY`: rows loaded with no objects (`copy(into:rows:)`) and a request's rows streamed out
/// (`copy(_:format:to:)`), with memory kept right and the connection usable after a failure.
@Suite struct CopyTests {
    /// 10,000 rows in binary `COPY`, in one transaction; rows that leave a key out take its
    /// default; a live result is told.
    @Test func rowsGoInByBinaryCopy() throws {
        try SetWriteTests.withLeague { fixture in
            let context = fixture.context
            let everyone = try context.liveFetch(FetchRequest("player"))
            #expect(try everyone.objects.count == 6)
            let rows: [[String: Any?]] = (0..<10_000).map { n in
                n % 2 == 0 ? ["name": "P\(n)", "score": n, "team_id": 1, "updated": Date(timeIntervalSince1970: 1_800_000_000)] : ["name": "Q\(n)", "nickname": "n\(n)"]
            }
            var copied = 0
            let sql = try fixture.sql { copied = try context.copy(into: "player", rows: rows) }
            #expect(copied == 10_000)
            let s = "\"\(fixture.schema)\""
            #expect(sql.filter { $0.hasPrefix("COPY") } == [
                "COPY \(s).\"player\" (\"name\", \"score\", \"team_id\", \"updated\") FROM STDIN (FORMAT binary)",
                "COPY \(s).\"player\" (\"name\", \"nickname\") FROM STDIN (FORMAT binary)",
            ])
            let row = try context.connection.query(
                "SELECT count(*)::int, sum(score)::int8, count(*) FILTER (WHERE team_id = 1 AND updated = to_timestamp(1800000000))::int FROM \(s).player WHERE name ~ '^[PQ]'")[0]
            #expect(try row.decode(Int.self, at: 0) == 10_000)
            #expect(try row.decode(Int.self, at: 1) == (0..<10_000).filter { $0 % 2 == 0 }.reduce(0, +))
            #expect(try row.decode(Int.self, at: 2) == 5_000)
            #expect(try everyone.objects.count == 10_006)
        }
    }

    /// Rows by position: typed values straight into one binary copy, NULLs and columns left
    /// out (defaults) included; a live result is told.
    @Test func rowsByPositionGoInByBinaryCopy() throws {
        try SetWriteTests.withLeague { fixture in
            let context = fixture.context
            let everyone = try context.liveFetch(FetchRequest("player"))
            #expect(try everyone.objects.count == 6)
            let stamp = Date(timeIntervalSince1970: 1_800_000_000)
            var copied = 0
            let sql = try fixture.sql {
                copied = try context.copy(into: "player", columns: ["name", "score", "team_id", "updated", "nickname"]) { rows in
                    for n in 0..<5_000 {
                        try rows.append("P\(n)", n, n % 2 == 0 ? 1 : nil, stamp, n % 3 == 0 ? "n\(n)" : nil)
                    }
                }
            }
            #expect(copied == 5_000)
            let s = "\"\(fixture.schema)\""
            #expect(sql.filter { $0.hasPrefix("COPY") } == [
                "COPY \(s).\"player\" (\"name\", \"score\", \"team_id\", \"updated\", \"nickname\") FROM STDIN (FORMAT binary)"
            ])
            let row = try context.connection.query("""
                SELECT count(*)::int, sum(score)::int8, count(team_id)::int, count(nickname)::int,
                       count(*) FILTER (WHERE updated = to_timestamp(1800000000) AND joined = '2026-01-01')::int
                FROM \(s).player WHERE name ~ '^P'
                """)[0]
            #expect(try row.decode(Int.self, at: 0) == 5_000)
            #expect(try row.decode(Int.self, at: 1) == (0..<5_000).reduce(0, +))
            #expect(try row.decode(Int.self, at: 2) == 2_500)
            #expect(try row.decode(Int.self, at: 3) == (0..<5_000).filter { $0 % 3 == 0 }.count)
            #expect(try row.decode(Int.self, at: 4) == 5_000)
            #expect(try everyone.objects.count == 5_006)
        }
    }

    /// By position: a row of another length, a value that does not fit its column (an
    /// integer too wide, text for a number) or an error of the caller's own leave nothing
    /// of the copy; a relationship's key is refused before anything is sent; a column
    /// without a binary form the copy sends (a date) and rows toward a loaded set go as
    /// statements, and the set takes its rows.
    @Test func rowsByPositionStayAllOrNothingAndMemoryRight() throws {
        try SetWriteTests.withLeague { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            func count() throws -> Int { try context.connection.query("SELECT count(*)::int FROM \(s).player")[0].decode(Int.self, at: 0) }
            let short = try #require(throws: RelateError.self) {
                try context.copy(into: "player", columns: ["name", "score"]) { rows in
                    try rows.append("Ok", 1)
                    try rows.append("Short")
                }
            }
            #expect(short.kind == .invalidWrite && short.description.contains("1 values"))
            let wide = try #require(throws: RelateError.self) {
                try context.copy(into: "player", columns: ["name", "score"]) { rows in
                    for n in 0..<3_000 { try rows.append("W\(n)", n == 2_999 ? Int.max : n) }
                }
            }
            #expect(wide.kind == .typeMismatch && wide.key == "score", "\(wide)")
            let text = try #require(throws: RelateError.self) {
                try context.copy(into: "player", columns: ["name", "score"]) { rows in try rows.append("T", "many") }
            }
            #expect(text.kind == .typeMismatch && text.key == "score")
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try context.copy(into: "player", columns: ["name"]) { rows in
                    try rows.append("S")
                    throw Stop()
                }
            }
            let relationship = try #require(throws: RelateError.self) {
                try context.copy(into: "player", columns: ["name", "team"]) { rows in try rows.append("R", 1) }
            }
            #expect(relationship.key == "team" && relationship.description.contains("foreign key"))
            #expect(try count() == 6)

            let dated = try fixture.sql {
                _ = try context.copy(into: "player", columns: ["name", "joined"]) { rows in try rows.append("Old", Date(timeIntervalSince1970: 0)) }
            }
            #expect(dated.filter { $0.hasPrefix("INSERT INTO") }.count == 1 && !dated.contains { $0.hasPrefix("COPY") })
            let red = try #require(try context.object("team", primaryKey: 1))
            let redPlayers = try red.objects(forKey: "player")
            #expect(try context.copy(into: "player", columns: ["name", "team_id"]) { rows in try rows.append("New", 1) } == 1)
            #expect(redPlayers.count == 3)
            #expect(try count() == 8)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A refused row leaves nothing of the copy; a value with no binary form of its column
    /// (a date) goes as statements; rows toward a loaded set go as a bulk insert, and the
    /// set takes them.
    @Test func copiesStayAllOrNothingAndMemoryRight() throws {
        try SetWriteTests.withLeague { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let error = try #require(throws: RelateError.self) {
                try context.copy(into: "player", rows: [["name": "Ok", "score": 1], ["name": "Also", "score": 2], ["name": nil, "score": 3]])
            }
            #expect(error.postgresError?.sqlState == .notNullViolation)
            #expect(try context.connection.query("SELECT count(*)::int FROM \(s).player")[0].decode(Int.self, at: 0) == 6)
            // A value that does not fit its column, after rows that did: nothing stays either.
            let rows: [[String: Any?]] = (0..<3_000).map { ["name": "R\($0)", "score": $0 == 2_999 ? "many" : $0] }
            let mismatch = try #require(throws: RelateError.self) { try context.copy(into: "player", rows: rows) }
            #expect(mismatch.kind == .typeMismatch && mismatch.key == "score")
            #expect(try context.connection.query("SELECT count(*)::int FROM \(s).player")[0].decode(Int.self, at: 0) == 6)

            let dated = try fixture.sql { _ = try context.copy(into: "player", rows: [["name": "Old", "joined": Date(timeIntervalSince1970: 0)]]) }
            #expect(dated.filter { $0.hasPrefix("INSERT INTO") }.count == 1 && !dated.contains { $0.hasPrefix("COPY") })

            let red = try #require(try context.object("team", primaryKey: 1))
            let redPlayers = try red.objects(forKey: "player")
            #expect(try context.copy(into: "player", rows: [["name": "New", "team": red]]) == 1)
            #expect(redPlayers.count == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A request's rows out as CSV: the condition's values (a quote in a string, an
    /// integer) quoted by libpq and typed, never pasted; text that needs CSV quoting quoted.
    @Test func aRequestStreamsOutAsCSV() throws {
        try SetWriteTests.withLeague { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            try context.connection.execute("INSERT INTO \(s).player (name, score, nickname) VALUES ('O''Brien', 9, 'the \"boss\", really')")
            var csv = Data()
            var sql: [String] = []
            let request = FetchRequest(
                "player", where: Key("name") == "O'Brien" || (Key("score") >= 20 && Key("nickname") == nil), orderBy: [.ascending("id")])
            let rows = try fixture.sql { try context.copy(request, format: .csv(header: true)) { csv.append(contentsOf: $0) } }
            sql = rows
            let text = String(decoding: csv, as: UTF8.self)
            let lines = text.split(separator: "\n")
            #expect(lines.count == 4)
            #expect(lines[0] == "id,name,score,nickname,team_id,joined,updated")
            #expect(lines[1].hasPrefix("2,Bob,20,,1,"))
            #expect(lines[3].hasPrefix("7,O'Brien,9,\"the \"\"boss\"\", really\",,"))
            // Logs and traces show the statement with its placeholders, never the values it
            // was sent with.
            let copy = try #require(sql.first { $0.hasPrefix("COPY") })
            #expect(copy.contains("$1") && copy.contains("$2"))
            #expect(!copy.contains("Brien") && !copy.contains("'20'"))

            // The receiver throws: the copy is read to its end and the connection goes on.
            struct Enough: Error {}
            #expect(throws: Enough.self) { try context.copy(FetchRequest("player"), format: .text) { _ in throw Enough() } }
            #expect(try context.count(FetchRequest("player")) == 7)
        }
    }

    /// The connection's own `copyIn`: a statement that is not a copy is refused, and a
    /// producer that throws ends the copy with nothing written.
    @Test func theConnectionsCopyRefusesWhatIsNotACopy() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("CREATE TABLE t (n int)")
            let notCopy = try #require(throws: PostgresError.self) { try connection.copyIn("SELECT 1") { _ in } }
            #expect(notCopy.kind == .invalidInput)
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try connection.copyIn("COPY t FROM STDIN") { send in
                    try send(Array("1\n2\n".utf8))
                    throw Stop()
                }
            }
            #expect(try connection.copyIn("COPY t FROM STDIN") { send in try send(Array("3\n4\n".utf8)) } == 2)
            #expect(try connection.query("SELECT sum(n)::int FROM t")[0].decode(Int.self, at: 0) == 7)
        }
    }
}
