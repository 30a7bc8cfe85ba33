import Foundation
import Testing

@testable import RelatePostgres

/// The codecs of issue 41's value types without a server: the binary layouts the server's
/// `*_send`/`*_recv` use, the text forms it prints, and malformed input refused.
@Suite struct ValueTypeCodecTests {
    func bytes(_ value: some PostgresEncodable) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try value.encode(into: &bytes)
        return bytes
    }

    /// Encoded, then decoded as the type it is sent as: the same value.
    func roundTrip<T: PostgresCodable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let encoded = try bytes(value)
        let format = T.postgresFormat
        let decoded = try encoded.withUnsafeBytes { try T.decode(from: $0, type: value.postgresValueType, format: format) }
        #expect(decoded == value, sourceLocation: sourceLocation)
    }

    @Test func intervalsKeepTheirThreeParts() throws {
        let value = PostgresInterval(months: 14, days: -3, microseconds: 14_706_789_000)
        // interval_send: microseconds, days, months.
        #expect(try bytes(value) == [0, 0, 0, 3, 108, 151, 202, 136, 255, 255, 255, 253, 0, 0, 0, 14])
        try roundTrip(value)
        #expect(value.description == "1 year 2 mons -3 days 04:05:06.789")
        #expect(try decode(PostgresInterval.self, text: value.description, type: .interval) == value)
        #expect(try decode(PostgresInterval.self, text: "-1 years -2 mons +3 days -00:00:00.000001", type: .interval)
            == PostgresInterval(months: -14, days: 3, microseconds: -1))
        #expect(try decode(PostgresInterval.self, text: "00:00:00", type: .interval) == PostgresInterval())
        #expect(try decode(PostgresInterval.self, text: "1000:00:00", type: .interval) == PostgresInterval(microseconds: 3_600_000_000_000))
        for bad in ["P1Y", "1 fortnight", "1:2", "1 day 00:60:00", "mons"] {
            #expect(throws: PostgresDecodingError.self, "\(bad)") { try decode(PostgresInterval.self, text: bad, type: .interval) }
        }
        #expect(throws: PostgresDecodingError.self) { try decode(PostgresInterval.self, binary: [0, 0, 0], type: .interval) }
        var text: [UInt8] = []
        value.encodeText(into: &text)
        #expect(String(decoding: text, as: UTF8.self) == "14 mons -3 days 14706789000 microseconds")
    }

    @Test func rangesHaveTheServersLayout() throws {
        // range_send: flags (lower inclusive 0x02), then each bound's length and bytes.
        let seats = PostgresRange(1..<10).sent(as: .int4range)
        #expect(try bytes(seats) == [0x02, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 10])
        #expect(seats.postgresValueType == .int4range)
        try roundTrip(seats)
        #expect(try bytes(PostgresRange<Int>.empty) == [0x01])
        #expect(try bytes(PostgresRange<Int>(lower: .infinite, upper: .inclusive(5))) == [0x08 | 0x04, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5])
        try roundTrip(PostgresRange<Int>(lower: .exclusive(-3), upper: .infinite))
        let day = Date(timeIntervalSince1970: 946_684_800 + 86_400)
        #expect(try bytes(PostgresRange(day...day).sent(as: .daterange)) == [0x06, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1])
        try roundTrip(PostgresRange(day..<(day + 0.5)))
        #expect(throws: PostgresEncodingError.self) { try bytes(PostgresRange(day..<(day + 0.5)).sent(as: .daterange)) }
        #expect(throws: PostgresEncodingError.self) { try bytes(PostgresRange(0..<Int.max).sent(as: .int4range)) }
        #expect(throws: PostgresEncodingError.self) { try bytes(PostgresRange(0..<1).sent(as: .tstzrange)) }
        // numrange goes as text, as Decimal does.
        #expect(PostgresRange<Decimal>.postgresFormat == .text)
        let prices = PostgresRange<Decimal>(lower: .exclusive(Decimal(string: "0.1")!), upper: .inclusive(2))
        #expect(String(decoding: try bytes(prices), as: UTF8.self) == #"("0.1","2"]"#)
        #expect(try decode(PostgresRange<Decimal>.self, text: #"("0.1","2"]"#, type: .numrange) == prices)
        #expect(try decode(PostgresRange<Int>.self, text: "[1,10)", type: .int4range) == PostgresRange(1..<10))
        #expect(try decode(PostgresRange<Int>.self, text: "(,)", type: .int8range) == PostgresRange(lower: .infinite, upper: .infinite))
        #expect(try decode(PostgresRange<Int>.self, text: "empty", type: .int8range) == .empty)
        #expect(try decode(PostgresRange<Date>.self, text: #"["2000-01-02 00:00:00+00",)"#, type: .tstzrange)
            == PostgresRange(lower: .inclusive(day), upper: .infinite))
        for bad in ["[1,10", "1,10)", "[1;10)", "[\"1,10)", "[1,2,3)", "", "[]"] {
            #expect(throws: PostgresDecodingError.self, "\(bad)") { try decode(PostgresRange<Int>.self, text: bad, type: .int4range) }
        }
        // The flags say a bound the bytes lack.
        #expect(throws: PostgresDecodingError.self) { try decode(PostgresRange<Int>.self, binary: [0x02, 0, 0, 0, 4, 0], type: .int4range) }
        // A range of other bounds is a mismatch, not a misreading.
        #expect(throws: PostgresDecodingError.self) { try decode(PostgresRange<Date>.self, text: "[1,2)", type: .int4range) }
        #expect(PostgresRange(1..<3) == PostgresRange(1..<3).sent(as: .int4range))
    }

    @Test func jsonValuesAreJSON() throws {
        let document: JSONValue = ["b": [1, "two", nil, false], "a": .number(Decimal(string: "0.1")!)]
        #expect(try document.jsonText() == #"{"a":0.1,"b":[1,"two",null,false]}"#)
        #expect(try bytes(document) == [1] + Array(#"{"a":0.1,"b":[1,"two",null,false]}"#.utf8))
        try roundTrip(document)
        #expect(try decode(JSONValue.self, text: #"{"a": 0.1, "b": [1, "two", null, false]}"#, type: .json) == document)
        #expect(try decode(JSONValue.self, text: "18446744073709551616", type: .jsonb) == .number(Decimal(string: "18446744073709551616")!))
        #expect(try decode(JSONValue.self, text: "true", type: .jsonb) == true)
        #expect(try decode(JSONValue.self, text: "1", type: .jsonb) == 1)
        #expect(throws: PostgresDecodingError.self) { try decode(JSONValue.self, text: "{", type: .json) }
        #expect(throws: PostgresDecodingError.self) { try decode(JSONValue.self, binary: [2, 0x31], type: .jsonb) }
        #expect(throws: PostgresEncodingError.self) { try bytes(JSONValue.number(.nan)) }
        #expect(document["b"]?[1] == "two")
        #expect(document["c"] == nil)
        // Codable as the JSON it is, so a generated Values struct encodes it as such.
        #expect(String(decoding: try JSONEncoder().encode(["doc": document]), as: UTF8.self).contains(#""a":0.1"#))
    }

    @Test func addressesHaveTheServersLayout() throws {
        // inet_send: family (2 for IPv4), prefix bits, is-cidr, address length, address.
        let host = try PostgresInet("10.0.0.7/8")
        #expect(try bytes(host) == [2, 8, 0, 4, 10, 0, 0, 7])
        try roundTrip(host)
        let net = try PostgresInet("2001:db8::/32", isNetwork: true)
        #expect(try bytes(net).prefix(4) == [3, 32, 1, 16])
        #expect(net.postgresValueType == .cidr)
        try roundTrip(net)
        #expect(net.description == "2001:db8::/32")
        #expect(try PostgresInet("::1").prefixLength == 128)
        for bad in ["10.0.0", "10.0.0.1/33", "::1/129", "10.0.0.1/x", "host"] {
            #expect(throws: PostgresEncodingError.self, "\(bad)") { try PostgresInet(bad) }
        }
        #expect(throws: PostgresDecodingError.self) { try decode(PostgresInet.self, binary: [2, 8, 0, 4, 10, 0], type: .inet) }

        let nic = try PostgresMacAddress("08:00:2B:01:02:03")
        #expect(try bytes(nic) == [8, 0, 0x2b, 1, 2, 3])
        #expect(nic.description == "08:00:2b:01:02:03")
        try roundTrip(nic)
        try roundTrip(try PostgresMacAddress("08:00:2b:01:02:03:04:05"))
        #expect(try PostgresMacAddress("08:00:2b:01:02:03:04:05").postgresValueType == .macaddr8)
        for bad in ["08:00:2b:01:02", "08:00:2b:01:02:0g", "0800.2b01.0203"] {
            #expect(throws: PostgresEncodingError.self, "\(bad)") { try PostgresMacAddress(bad) }
        }
        #expect(throws: PostgresDecodingError.self) { try decode(PostgresMacAddress.self, text: "08:00:2b:01:02:03", type: .macaddr8) }
    }

    @Test func timesOfDayHaveTheServersLayout() throws {
        let opens = PostgresTime(hour: 9, minute: 30, second: 15, microsecond: 500_000)
        #expect(opens.postgresValueType == .time)
        #expect(try bytes(opens) == [0, 0, 0, 7, 247, 103, 24, 224])
        try roundTrip(opens)
        // timetz_send counts the zone west positive: +02 is -7200.
        let call = PostgresTime(hour: 9, minute: 30, utcOffset: 7200)
        #expect(call.postgresValueType == .timetz)
        #expect(try bytes(call).suffix(4) == [255, 255, 227, 224])
        try roundTrip(call)
        #expect(try decode(PostgresTime.self, text: "09:30:15.5", type: .time) == opens)
        #expect(try decode(PostgresTime.self, text: "09:30:00+02", type: .timetz) == call)
        #expect(try decode(PostgresTime.self, text: "09:30:00-03:30:15", type: .timetz).utcOffset == -12_615)
        for bad in ["9:30", "09:60:00", "25:00:00", "09:30:00.1234567", "09:30:00+02"] {
            #expect(throws: PostgresDecodingError.self, "\(bad)") { try decode(PostgresTime.self, text: bad, type: .time) }
        }
        #expect(throws: PostgresEncodingError.self) { try bytes(PostgresTime(microseconds: -1)) }
    }

    @Test func moneyTextInTheCLocalesForm() throws {
        #expect(try decode(Decimal.self, text: "$1,234.56", type: .money) == Decimal(string: "1234.56"))
        #expect(try decode(Decimal.self, text: "-$0.50", type: .money) == Decimal(string: "-0.5"))
        #expect(try decode(Decimal.self, text: "($7.00)", type: .money) == -7)
        #expect(throws: PostgresDecodingError.self) { try decode(Decimal.self, text: "1.234,56 €", type: .money) }
        #expect(throws: PostgresDecodingError.self) { try decode(Decimal.self, binary: [0, 0, 0, 0, 0, 0, 4, 210], type: .money) }
    }

    @Test func theMappingTableNamesEveryNewType() {
        #expect(PostgresType.interval.mapping == .interval)
        #expect(PostgresType.int4range.mapping == .range(bound: .integer))
        #expect(PostgresType.numrange.mapping == .range(bound: .decimal))
        #expect(PostgresType.tsrange.mapping == .range(bound: .date))
        #expect(PostgresType.jsonb.mapping == .json)
        #expect(PostgresType.json.mapping == .json)
        #expect(PostgresType.cidr.mapping == .inet)
        #expect(PostgresType.macaddr8.mapping == .macAddress)
        #expect(PostgresType.timetz.mapping == .time)
        #expect(PostgresType.money.mapping == .decimal)
        #expect(PostgresType.money.selectCast == "numeric")
        #expect(PostgresType.daterangeArray.mapping == .array(element: .range(bound: .date)))
        #expect(PostgresType.intervalArray.description == "interval[]")
        #expect(PostgresType.interval.selectCast == nil)
        #expect(PostgresType(3614).selectCast == "text")  // tsvector: no mapping, read as text
    }
}
