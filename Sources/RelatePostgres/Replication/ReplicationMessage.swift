import Foundation

/// A message of the streaming replication protocol, as a walsender sends it inside
/// `COPY BOTH` once replication has started.
public enum ReplicationMessage: Sendable, Equatable {
    /// `w`: WAL data, for logical replication one message of the output plugin.
    case data(start: LSN, end: LSN, payload: [UInt8])
    /// `k`: the server's position; `replyRequested` asks for a status update at once, or
    /// the server ends the connection after `wal_sender_timeout`.
    case keepalive(end: LSN, replyRequested: Bool)

    /// Parses one message of the `COPY BOTH` stream.
    ///
    /// - Parameter bytes: The message's bytes, as `PQgetCopyData` returned them.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/decoding`` when the bytes are truncated, malformed or of an
    ///   unknown type.
    public init(_ bytes: [UInt8]) throws {
        var reader = WireReader(bytes, subject: "replication message")
        switch try reader.byte("message type") {
        case UInt8(ascii: "w"):
            let start = LSN(rawValue: try reader.integer(UInt64.self, "start"))
            let end = LSN(rawValue: try reader.integer(UInt64.self, "end"))
            _ = try reader.integer(Int64.self, "send time")
            self = .data(start: start, end: end, payload: Array(reader.rest()))
        case UInt8(ascii: "k"):
            let end = LSN(rawValue: try reader.integer(UInt64.self, "end"))
            _ = try reader.integer(Int64.self, "send time")
            self = .keepalive(end: end, replyRequested: try reader.byte("reply flag") != 0)
        case let type:
            throw reader.malformed("unknown type \(type)")
        }
    }

    /// `r`, the standby status update: what this client received, flushed and applied
    /// (for a logical slot, `flushed` is what the server may forget).
    ///
    /// - Parameters:
    ///   - received: The position up to which messages were received.
    ///   - flushed: The position up to which changes were handled for good.
    ///   - applied: The position up to which changes were applied.
    ///   - replyRequested: Whether the server should answer at once with a keepalive.
    /// - Returns: The message's bytes, for `PQputCopyData`.
    public static func statusUpdate(received: LSN, flushed: LSN, applied: LSN, replyRequested: Bool = false) -> [UInt8] {
        // Microseconds since 2000-01-01, PostgreSQL's epoch.
        let now = Int64((Date.timeIntervalSinceReferenceDate - 31_622_400) * 1_000_000)
        var bytes: [UInt8] = [UInt8(ascii: "r")]
        for value in [received.rawValue, flushed.rawValue, applied.rawValue, UInt64(bitPattern: now)] {
            bytes.appendBigEndian(value)
        }
        bytes.append(replyRequested ? 1 : 0)
        return bytes
    }
}
