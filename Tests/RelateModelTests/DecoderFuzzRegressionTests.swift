import Foundation
import Testing

@testable import RelatePostgres

#if compiler(>=6.2)
/// Inputs the fuzz targets (`scripts/fuzz`, Fuzz/) found to trap a decoder, or the text
/// encoder of a value a decoder returned, each reduced to the bytes that show it. Malformed
/// bytes must throw a `PostgresDecodingError`, never trap. Each case runs in a child process
/// (an exit test), so that one which still traps fails alone instead of ending the whole
/// run; Swift 6.1's Testing has no exit tests, hence the condition.
@Suite struct DecoderFuzzRegressionTests {
    /// A binary array's element count comes from its bytes. Negative, it reached
    /// `0..<count` and trapped; 2^31 - 1, it reserved room for that many elements (51 GB
    /// for `[Decimal?]`, which fails on a machine with less) before reading the first.
    @Test func binaryArrayCountBeyondItsBytesThrows() async {
        await #expect(processExitsWith: .success) {
            // One dimension, no NULL, the element type, then the count and the lower bound.
            let negative = header(elementType: .int4, count: -1)
            #expect(throws: PostgresDecodingError.self) { try decode([Int].self, binary: negative, type: .int4Array) }
            let huge = header(elementType: .numeric, count: .max) + bigEndian(Int32(-1))
            #expect(throws: PostgresDecodingError.self) { try decode([Decimal?].self, binary: huge, type: .numericArray) }
        }
    }

    /// A quoted element without its closing quote read the byte after the closing brace,
    /// one past the cell (a trap in a debug build, a read past the value in release).
    @Test func textArrayWithUnclosedQuoteThrows() async {
        await #expect(processExitsWith: .success) {
            for text in [#"{"abc}"#, #"{a,"b}"#, #"{"\"}"#] {
                #expect(throws: PostgresDecodingError.self) { try decode([String].self, text: text, type: .textArray) }
            }
        }
    }

    /// numeric's binary digits are base 10000. A later digit of 10000 or more printed as
    /// five characters, and its padding to four, `4 - 5`, trapped `String(repeating:count:)`.
    @Test func numericDigitOutOfRangeThrows() async {
        await #expect(processExitsWith: .success) {
            // ndigits 2, weight 0, positive, dscale 0, digits 1 and 10000.
            let value: [UInt8] = [0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0x27, 0x10]
            #expect(throws: PostgresDecodingError.self) { try decode(Decimal.self, binary: value, type: .numeric) }
        }
    }

    /// The text form's fields were read into an Int without a limit: a field of 20 digits
    /// overflowed it, and an hour of 13 overflowed the microseconds they add up to.
    @Test func overlongDateFieldsThrow() async {
        await #expect(processExitsWith: .success) {
            for text in [
                "99999999999999999999-01-01", "2024-01-01 2562047788015:00:00",
                "2024-01-01 00:00:00+99999999999999999999", "2024-01-01 00:00:00.99999999999999999999",
            ] {
                #expect(throws: PostgresDecodingError.self) { try decode(Date.self, text: text, type: .timestamptz) }
            }
        }
    }

    /// `Date.encodeText` (array literals of keys, `StoredValue.arrayElementText`) counted
    /// microseconds since 1970 in an Int, which the server's latest date and timestamp
    /// overflow, so reading either and writing it back as text trapped.
    @Test func latestServerDatesWriteAsText() async {
        await #expect(processExitsWith: .success) {
            // date '5874897-12-31' and timestamp '294276-12-31 23:59:59.999999', as the
            // server sends them. A Date that far out is a Double with about 2 ms between
            // neighbours, so the timestamp is compared within that.
            let latestDate = try decode(Date.self, binary: bigEndian(Int32(2_145_031_948)), type: .date)
            #expect(text(of: latestDate) == "5874897-12-31 00:00:00.000000+00")
            let latestTimestamp = try decode(Date.self, binary: bigEndian(Int64(9_223_371_331_199_999_999)), type: .timestamp)
            let readBack = try decode(Date.self, text: text(of: latestTimestamp), type: .timestamptz)
            #expect(abs(readBack.timeIntervalSince(latestTimestamp)) < 0.01)
        }
    }

    /// Not a trap but a round trip the fuzzer broke: a timestamp one microsecond after the
    /// integer's lowest value (the server never sends one, the decoder accepts it) reads as
    /// a finite Date, which `encode` rounded to Int64.min, the server's -infinity.
    @Test func finiteDateNeverWritesAsInfinity() throws {
        let farPast = try decode(Date.self, binary: bigEndian(Int64.min + 1), type: .timestamptz)
        #expect(farPast.timeIntervalSince1970.isFinite)
        var bytes: [UInt8] = []
        #expect(throws: PostgresEncodingError.self) { try farPast.encode(into: &bytes) }
    }
}

private func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendBigEndian(value)
    return bytes
}

/// A one-dimensional binary array's header: dimensions, has-NULL flag, element type, count, lower bound.
private func header(elementType: PostgresType, count: Int32) -> [UInt8] {
    bigEndian(Int32(1)) + bigEndian(Int32(0)) + bigEndian(elementType.rawValue) + bigEndian(count) + bigEndian(Int32(1))
}

private func text(of date: Date) -> String {
    var bytes: [UInt8] = []
    date.encodeText(into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}
#endif
