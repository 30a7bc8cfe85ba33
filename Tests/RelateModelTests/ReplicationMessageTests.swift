import Testing

@testable import RelatePostgres

/// The replication protocol's and pgoutput's messages, from bytes as the server sends them;
/// every truncation of a valid message is an error naming the field, never a trap.
@Suite struct ReplicationMessageTests {
    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendBigEndian(value)
        return bytes
    }

    static func text(_ value: String) -> [UInt8] { Array(value.utf8) + [0] }

    static func tuple(_ values: [String?]) -> [UInt8] {
        bigEndian(Int16(values.count)) + values.flatMap { value -> [UInt8] in
            guard let value else { return [UInt8(ascii: "n")] }
            return [UInt8(ascii: "t")] + bigEndian(Int32(value.utf8.count)) + Array(value.utf8)
        }
    }

    static let relation: [UInt8] = [UInt8(ascii: "R")] + bigEndian(UInt32(16_384)) + text("public") + text("person")
        + [UInt8(ascii: "d")] + bigEndian(Int16(2))
        + [1] + text("id") + bigEndian(UInt32(23)) + bigEndian(Int32(-1))
        + [0] + text("surname") + bigEndian(UInt32(1043)) + bigEndian(Int32(259))
    static let update: [UInt8] = [UInt8(ascii: "U")] + bigEndian(UInt32(16_384))
        + [UInt8(ascii: "K")] + tuple(["1", nil]) + [UInt8(ascii: "N")] + tuple(["7", "King"])

    @Test func pgoutputMessagesDecode() throws {
        #expect(try PgOutputMessage([UInt8(ascii: "B")] + Self.bigEndian(UInt64(0x16_0000_0010)) + Self.bigEndian(Int64(5)) + Self.bigEndian(UInt32(742)))
            == .begin(finalLSN: LSN(rawValue: 0x16_0000_0010), transaction: 742))
        #expect(try PgOutputMessage(Self.relation) == .relation(.init(id: 16_384, schema: "public", name: "person", columns: [
            .init(name: "id", isKey: true, type: 23), .init(name: "surname", isKey: false, type: 1043),
        ])))
        #expect(try PgOutputMessage(Self.update) == .update(relation: 16_384, old: [.text("1"), .null], new: [.text("7"), .text("King")]))
        #expect(try PgOutputMessage([UInt8(ascii: "D")] + Self.bigEndian(UInt32(9)) + [UInt8(ascii: "K")] + Self.tuple(["3"]))
            == .delete(relation: 9, old: [.text("3")]))
        #expect(try PgOutputMessage([UInt8(ascii: "T")] + Self.bigEndian(Int32(2)) + [0] + Self.bigEndian(UInt32(9)) + Self.bigEndian(UInt32(10)))
            == .truncate(relations: [9, 10]))
        #expect(try PgOutputMessage([UInt8(ascii: "C"), 0] + Self.bigEndian(UInt64(1)) + Self.bigEndian(UInt64(2)) + Self.bigEndian(Int64(3)))
            == .commit(endLSN: LSN(rawValue: 2)))
        #expect(try PgOutputMessage([UInt8(ascii: "Y")]) == .other(type: UInt8(ascii: "Y")))
    }

    @Test func everyTruncationIsAnErrorNamingTheField() {
        for message in [Self.relation, Self.update] {
            for length in 0..<message.count {
                do {
                    _ = try PgOutputMessage(Array(message.prefix(length)))
                    Issue.record("\(length) bytes of \(message.count) decoded")
                } catch let error as PostgresError {
                    #expect(error.kind == .decoding)
                    #expect(error.message.hasPrefix("malformed pgoutput message"))
                } catch {
                    Issue.record("unexpected \(error)")
                }
            }
        }
        // A length that claims more bytes than there are.
        let lying = [UInt8(ascii: "I")] + Self.bigEndian(UInt32(1)) + [UInt8(ascii: "N")] + Self.bigEndian(Int16(1))
            + [UInt8(ascii: "t")] + Self.bigEndian(Int32(Int32.max)) + [1, 2]
        #expect(throws: PostgresError.self) { try PgOutputMessage(lying) }
        let negative = [UInt8(ascii: "I")] + Self.bigEndian(UInt32(1)) + [UInt8(ascii: "N")] + Self.bigEndian(Int16(-1))
        #expect(throws: PostgresError.self) { try PgOutputMessage(negative) }
    }

    @Test func replicationMessagesAndStatusUpdates() throws {
        let data = [UInt8(ascii: "w")] + Self.bigEndian(UInt64(10)) + Self.bigEndian(UInt64(20)) + Self.bigEndian(Int64(0)) + [UInt8(ascii: "B")]
        #expect(try ReplicationMessage(data) == .data(start: LSN(rawValue: 10), end: LSN(rawValue: 20), payload: [UInt8(ascii: "B")]))
        let keepalive = [UInt8(ascii: "k")] + Self.bigEndian(UInt64(30)) + Self.bigEndian(Int64(0)) + [1]
        #expect(try ReplicationMessage(keepalive) == .keepalive(end: LSN(rawValue: 30), replyRequested: true))
        #expect(throws: PostgresError.self) { try ReplicationMessage(Array(keepalive.dropLast())) }
        #expect(throws: PostgresError.self) { try ReplicationMessage([UInt8(ascii: "x")]) }
        let update = ReplicationMessage.statusUpdate(received: LSN(rawValue: 5), flushed: LSN(rawValue: 4), applied: LSN(rawValue: 3))
        #expect(update.count == 34)
        #expect(Array(update.prefix(9)) == [UInt8(ascii: "r")] + Self.bigEndian(UInt64(5)))
    }

    @Test func lsnTextForm() {
        #expect(LSN("16/B374D848")?.rawValue == 0x16_B374_D848)
        #expect(LSN("16/B374D848")?.description == "16/B374D848")
        #expect(LSN("nonsense") == nil)
        #expect(LSN("1/2/3") == nil)
    }
}
