import Foundation
import Testing

@testable import RelatePostgres

/// The type mappings' pure parts, without a server: what is sent, and reading forms the
/// server can send but a round trip may not reach.
@Suite struct CodecTests {
    func encoded(_ value: some PostgresEncodable) throws -> String {
        var bytes: [UInt8] = []
        try value.encode(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A JSON number read from its digits is what Foundation's parse of its text gives: the
    /// same value and description, with and without an exponent, past 64 bits and at zero.
    @Test func jsonNumbersReadAsTheirText() throws {
        var texts = ["0", "-0", "0.0", "-0.000", "1e3", "1.5E-2", "12.500", "-7", "18446744073709551615", "18446744073709551616",
                     "123456789012345678901234567890.5", "0.0000000000000000000000001", "100", "-100.00100"]
        var seed: UInt64 = 42
        for _ in 0..<2000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let digits = String(seed >> 20)
            let scale = Int(seed % 12)
            let text = scale == 0 ? digits : scale < digits.count ? digits.prefix(digits.count - scale) + "." + digits.suffix(scale) : "0." + digits
            texts.append((seed % 3 == 0 ? "-" : "") + text)
        }
        let array = try JSONValue(json: Array("[\(texts.joined(separator: ","))]".utf8))
        guard case .array(let numbers) = array else { Issue.record("not an array: \(array)"); return }
        #expect(numbers.count == texts.count)
        for (text, number) in zip(texts, numbers) {
            let parsed = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
            guard case .number(let value) = number else { Issue.record("\(text) read as \(number)"); continue }
            #expect(value == parsed && value.description == parsed.description, "\(text): \(value)")
        }
    }

    /// A text array's literal, for statements that take one as text: quoted, escaped.
    @Test func textArrayLiteralsAreQuoted() throws {
        func literal<Element>(_ array: [Element]) throws -> String where Element: PostgresArrayMember {
            var bytes: [UInt8] = []
            try array.encodeText(into: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(try literal(["a\"b", "c\\d", "e,f"]) == #"{"a\"b","c\\d","e,f"}"#)
        #expect(try literal(["x", nil] as [String?]) == #"{"x",NULL}"#)
        #expect(try literal([String]()) == "{}")
    }

    /// A text array is sent in binary, `text` elements as their UTF-8 bytes: no quoting.
    @Test func textArraysAreSentInBinary() throws {
        var bytes: [UInt8] = []
        try (["ab", nil] as [String?]).encode(into: &bytes)
        #expect([String].postgresFormat == .binary)
        #expect([String?].postgresType == .textArray)
        // One dimension, has NULL, element type text (25), 2 elements from 1, "ab", NULL.
        #expect(bytes == [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 25, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 97, 98, 255, 255, 255, 255])
        var nul: [UInt8] = []
        #expect(throws: PostgresEncodingError.self) { try ["a\u{0}b"].encode(into: &nul) }
    }

    /// Elements sent in binary make a binary array: dimensions, has-NULL flag, element
    /// type, length and lower bound, then each element's length (-1 for NULL) and bytes.
    @Test func binaryArraysHaveTheServersLayout() throws {
        func bytes(_ value: some PostgresEncodable) throws -> [UInt8] {
            var bytes: [UInt8] = []
            try value.encode(into: &bytes)
            return bytes
        }
        func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        func int64(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        #expect([Int].postgresType == .int8Array && [Int].postgresFormat == .binary)
        #expect(try bytes([1, 2]) == int32(1) + int32(0) + int32(20) + int32(2) + int32(1) + int32(8) + int64(1) + int32(8) + int64(2))
        #expect(try bytes([7, nil] as [Int?]) == int32(1) + int32(1) + int32(20) + int32(2) + int32(1) + int32(8) + int64(7) + int32(-1))
        #expect(try bytes([Int]()) == int32(0) + int32(0) + int32(20))
        #expect(try bytes([true]) == int32(1) + int32(0) + int32(16) + int32(1) + int32(1) + int32(1) + [1])
    }

    @Test func datesAreSentInUTC() throws {
        var text: [UInt8] = []
        Date(timeIntervalSince1970: 1_709_190_296.789).encodeText(into: &text)
        #expect(String(decoding: text, as: UTF8.self) == "2024-02-29 07:04:56.789000+00")
        text = []
        Date(timeIntervalSince1970: -62_198_755_200).encodeText(into: &text)
        #expect(String(decoding: text, as: UTF8.self) == "0002-01-01 00:00:00.000000+00 BC")
    }

    @Test func textTimestampsWithOffsets() throws {
        let reference = Date(timeIntervalSince1970: 1_709_190_296.5)
        #expect(try decode(Date.self, text: "2024-02-29 07:04:56.5+00", type: .timestamptz) == reference)
        #expect(try decode(Date.self, text: "2024-02-29 12:34:56.5+05:30", type: .timestamptz) == reference)
        #expect(try decode(Date.self, text: "2024-02-29 03:04:56.5-04", type: .timestamptz) == reference)
        #expect(try decode(Date.self, text: "1900-01-01 00:53:28+00:53:28", type: .timestamptz) == Date(timeIntervalSince1970: -2_208_988_800))
        #expect(throws: PostgresDecodingError.self) { try decode(Date.self, text: "yesterday", type: .date) }
    }

    @Test func binaryNumerics() throws {
        // 12345.678: ndigits 3, weight 1, positive, dscale 3, digits 1 2345 6780
        let value: [UInt8] = [0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]
        #expect(try decode(Decimal.self, binary: value, type: .numeric) == Decimal(string: "12345.678"))
        // -0.0005: ndigits 1, weight -1, negative, dscale 4, digits 5
        let small: [UInt8] = [0, 1, 0xff, 0xff, 0x40, 0, 0, 4, 0, 5]
        #expect(try decode(Decimal.self, binary: small, type: .numeric) == Decimal(string: "-0.0005"))
        // 20000: ndigits 1, weight 1, digits 2
        let round: [UInt8] = [0, 1, 0, 1, 0, 0, 0, 0, 0, 2]
        #expect(try decode(Decimal.self, binary: round, type: .numeric) == Decimal(20000))
    }

    @Test func textArraysWithEscapesAndBounds() throws {
        #expect(try decode([String?].self, text: #"{a,"b c","d\"e",NULL,"NULL"}"#, type: .textArray) == ["a", "b c", "d\"e", nil, "NULL"])
        #expect(try decode([Int].self, text: "[3:4]={5,6}", type: .int4Array) == [5, 6])
        #expect(try decode([Double].self, text: "{1.5,-Infinity}", type: .float8Array) == [1.5, -.infinity])
        #expect(throws: PostgresDecodingError.self) { try decode([Int].self, text: "{1,", type: .int4Array) }
    }

    @Test func integersRejectGarbageAndOverflow() throws {
        #expect(try decode(Int.self, text: "-9223372036854775808", type: .int8) == .min)
        #expect(throws: PostgresDecodingError.self) { try decode(Int.self, text: "9223372036854775808", type: .int8) }
        #expect(throws: PostgresDecodingError.self) { try decode(Int.self, text: "12a", type: .int4) }
        #expect(throws: PostgresDecodingError.self) { try decode(Int.self, text: "1", type: .text) }
    }

    @Test func errorDescriptionKeepsDetailOut() {
        let error = PostgresError(
            kind: .server, message: "duplicate key value violates unique constraint \"k\"",
            sqlState: .uniqueViolation, detail: "Key (email)=(ada@example.com) already exists.",
            schema: "public", table: "account", constraint: "k", sql: "INSERT INTO account VALUES ($1)")
        #expect(error.description == """
            server error 23505: duplicate key value violates unique constraint "k" (constraint "k", table "public"."account")
            SQL: INSERT INTO account VALUES ($1)
            """)
        #expect(error.debugDescription.contains("ada@example.com"))
    }

    @Test func connectionStringSecretsAreFoundAndRedacted() {
        let secrets = ConnectionString.secrets(in: "postgresql://me:p%40ss@localhost/db")
        #expect(secrets.contains("p@ss"))
        #expect(ConnectionString.redact("password p@ss was wrong", secrets: secrets) == "password ******** was wrong")
        let problem = ConnectionString.syntaxProblem(in: "host=x password hunter2")
        #expect(problem != nil)
        #expect(problem?.contains("hunter2") == false)
        #expect(ConnectionString.syntaxProblem(in: "host=x password=hunter2") == nil)
    }
}
