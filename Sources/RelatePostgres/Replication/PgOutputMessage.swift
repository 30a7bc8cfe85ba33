/// A message of `pgoutput`, PostgreSQL's built-in logical decoding plugin (protocol
/// version 1), as carried by ``ReplicationMessage/data(start:end:payload:)``. Only
/// committed transactions are sent, each whole between `begin` and `commit`.
public enum PgOutputMessage: Sendable, Equatable {
    /// `B`: a committed transaction starts; `finalLSN` is where its commit record ends and
    /// `transaction` its id (xid).
    case begin(finalLSN: LSN, transaction: UInt32)
    /// `C`: the transaction's changes are complete; `endLSN` is the position to confirm once
    /// they are applied.
    case commit(endLSN: LSN)
    /// Sent before the first change to a table in a stream, and again after its definition
    /// changed: what the following tuples' columns are.
    case relation(Relation)
    /// `I`: a row inserted into the table ``Relation/id`` `relation`, with its new values.
    case insert(relation: UInt32, new: [TupleValue])
    /// `old`: the key before (`K`, when the replica identity key changed) or the whole row
    /// before (`O`, with `REPLICA IDENTITY FULL`).
    case update(relation: UInt32, old: [TupleValue]?, new: [TupleValue])
    /// `D`: a row deleted from the table `relation`; `old` holds its key (or the whole row
    /// with `REPLICA IDENTITY FULL`).
    case delete(relation: UInt32, old: [TupleValue])
    /// `T`: the tables `relations` were truncated.
    case truncate(relations: [UInt32])
    /// Origin, type and logical messages: nothing a change feed needs.
    case other(type: UInt8)

    /// A table as a `relation` message describes it; the tuples that follow refer to it by ``id``.
    public struct Relation: Sendable, Equatable {
        /// The table's OID, by which `insert`, `update` and `delete` name it.
        public var id: UInt32
        /// The table's schema.
        public var schema: String
        /// The table's name.
        public var name: String
        /// The table's published columns, in the order of the values of each tuple.
        public var columns: [Column]
        /// `REPLICA IDENTITY FULL`: an update's old tuple is the whole row before, so the two
        /// tuples tell which columns changed.
        public var hasFullReplicaIdentity = false

        /// A published column of a ``Relation``.
        public struct Column: Sendable, Equatable {
            /// The column's name.
            public var name: String
            /// Part of the replica identity (the primary key, by default).
            public var isKey: Bool
            /// The OID of the column's type (see `PostgresType`).
            public var type: UInt32
        }
    }

    /// One column of a row: the server's text form unless null, or `unchanged` for a
    /// TOASTed value the update did not touch.
    public enum TupleValue: Sendable, Equatable {
        /// The column is NULL.
        case null
        /// A TOASTed value the update did not change: the server does not send it again.
        case unchanged
        /// The value in its text form.
        case text(String)
        /// The value in its binary form (sent only when the subscription asks for binary).
        case binary([UInt8])
    }

    /// Parses one `pgoutput` message, the payload of ``ReplicationMessage/data(start:end:payload:)``.
    ///
    /// - Parameter bytes: The message's bytes.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/decoding`` when the bytes are truncated or malformed.
    public init(_ bytes: [UInt8]) throws {
        var reader = WireReader(bytes, subject: "pgoutput message")
        let type = try reader.byte("message type")
        switch type {
        case UInt8(ascii: "B"):
            let final = LSN(rawValue: try reader.integer(UInt64.self, "final LSN"))
            _ = try reader.integer(Int64.self, "commit time")
            self = .begin(finalLSN: final, transaction: try reader.integer(UInt32.self, "transaction"))
        case UInt8(ascii: "C"):
            _ = try reader.byte("flags")
            _ = try reader.integer(UInt64.self, "commit LSN")
            self = .commit(endLSN: LSN(rawValue: try reader.integer(UInt64.self, "end LSN")))
        case UInt8(ascii: "R"):
            let id = try reader.integer(UInt32.self, "relation")
            let schema = try reader.cString("namespace")
            let name = try reader.cString("relation name")
            let identity = try reader.byte("replica identity")
            let count = try reader.integer(Int16.self, "column count")
            guard count >= 0 else { throw reader.malformed("negative column count") }
            var columns: [Relation.Column] = []
            for _ in 0..<count {
                let flags = try reader.byte("column flags")
                let column = try reader.cString("column name")
                let typeID = try reader.integer(UInt32.self, "column type")
                _ = try reader.integer(Int32.self, "type modifier")
                columns.append(Relation.Column(name: column, isKey: flags & 1 != 0, type: typeID))
            }
            self = .relation(Relation(id: id, schema: schema, name: name, columns: columns, hasFullReplicaIdentity: identity == UInt8(ascii: "f")))
        case UInt8(ascii: "I"):
            let relation = try reader.integer(UInt32.self, "relation")
            try Self.expect("N", &reader)
            self = .insert(relation: relation, new: try Self.tuple(&reader))
        case UInt8(ascii: "U"):
            let relation = try reader.integer(UInt32.self, "relation")
            var old: [TupleValue]?
            var marker = try reader.byte("tuple marker")
            if marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") {
                old = try Self.tuple(&reader)
                marker = try reader.byte("tuple marker")
            }
            guard marker == UInt8(ascii: "N") else { throw reader.malformed("tuple marker \(marker) where N was expected") }
            self = .update(relation: relation, old: old, new: try Self.tuple(&reader))
        case UInt8(ascii: "D"):
            let relation = try reader.integer(UInt32.self, "relation")
            let marker = try reader.byte("tuple marker")
            guard marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") else {
                throw reader.malformed("tuple marker \(marker) where K or O was expected")
            }
            self = .delete(relation: relation, old: try Self.tuple(&reader))
        case UInt8(ascii: "T"):
            let count = try reader.integer(Int32.self, "relation count")
            guard count >= 0 else { throw reader.malformed("negative relation count") }
            _ = try reader.byte("options")
            var relations: [UInt32] = []
            for _ in 0..<count { relations.append(try reader.integer(UInt32.self, "relation")) }
            self = .truncate(relations: relations)
        default:
            self = .other(type: type)
        }
    }

    private static func expect(_ marker: Unicode.Scalar, _ reader: inout WireReader) throws {
        let found = try reader.byte("tuple marker")
        guard found == UInt8(ascii: marker) else { throw reader.malformed("tuple marker \(found) where \(marker) was expected") }
    }

    private static func tuple(_ reader: inout WireReader) throws -> [TupleValue] {
        let count = try reader.integer(Int16.self, "column count")
        guard count >= 0 else { throw reader.malformed("negative column count") }
        var values: [TupleValue] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            switch try reader.byte("column kind") {
            case UInt8(ascii: "n"): values.append(.null)
            case UInt8(ascii: "u"): values.append(.unchanged)
            case UInt8(ascii: "t"):
                let length = Int(try reader.integer(Int32.self, "value length"))
                values.append(.text(String(decoding: try reader.bytes(length, "value"), as: UTF8.self)))
            case UInt8(ascii: "b"):
                let length = Int(try reader.integer(Int32.self, "value length"))
                values.append(.binary(Array(try reader.bytes(length, "value"))))
            case let kind:
                throw reader.malformed("column kind \(kind)")
            }
        }
        return values
    }
}
