import RelatePostgres

/// The messages written as the server writes them, for the round trips: the fields the
/// decoders skip (send and commit times, flags, type modifiers) are written as zeros, and
/// an old tuple is always written as `O`, which reads the same as `K`.
extension ReplicationMessage {
    var wireBytes: [UInt8] {
        var bytes: [UInt8] = []
        switch self {
        case .data(let start, let end, let payload):
            bytes.append(UInt8(ascii: "w"))
            bytes.appendBigEndian(start.rawValue)
            bytes.appendBigEndian(end.rawValue)
            bytes.appendBigEndian(Int64(0))
            bytes += payload
        case .keepalive(let end, let replyRequested):
            bytes.append(UInt8(ascii: "k"))
            bytes.appendBigEndian(end.rawValue)
            bytes.appendBigEndian(Int64(0))
            bytes.append(replyRequested ? 1 : 0)
        }
        return bytes
    }
}

extension PgOutputMessage {
    var wireBytes: [UInt8] {
        var bytes: [UInt8] = []
        switch self {
        case .begin(let finalLSN, let transaction):
            bytes.append(UInt8(ascii: "B"))
            bytes.appendBigEndian(finalLSN.rawValue)
            bytes.appendBigEndian(Int64(0))
            bytes.appendBigEndian(transaction)
        case .commit(let endLSN):
            bytes += [UInt8(ascii: "C"), 0]
            bytes.appendBigEndian(UInt64(0))
            bytes.appendBigEndian(endLSN.rawValue)
            bytes.appendBigEndian(Int64(0))
        case .relation(let relation):
            bytes.append(UInt8(ascii: "R"))
            bytes.appendBigEndian(relation.id)
            bytes.appendCString(relation.schema)
            bytes.appendCString(relation.name)
            bytes.append(UInt8(ascii: "d"))
            bytes.appendBigEndian(Int16(relation.columns.count))
            for column in relation.columns {
                bytes.append(column.isKey ? 1 : 0)
                bytes.appendCString(column.name)
                bytes.appendBigEndian(column.type)
                bytes.appendBigEndian(Int32(-1))
            }
        case .insert(let relation, let new):
            bytes.append(UInt8(ascii: "I"))
            bytes.appendBigEndian(relation)
            bytes.append(UInt8(ascii: "N"))
            bytes.appendTuple(new)
        case .update(let relation, let old, let new):
            bytes.append(UInt8(ascii: "U"))
            bytes.appendBigEndian(relation)
            if let old {
                bytes.append(UInt8(ascii: "O"))
                bytes.appendTuple(old)
            }
            bytes.append(UInt8(ascii: "N"))
            bytes.appendTuple(new)
        case .delete(let relation, let old):
            bytes.append(UInt8(ascii: "D"))
            bytes.appendBigEndian(relation)
            bytes.append(UInt8(ascii: "O"))
            bytes.appendTuple(old)
        case .truncate(let relations):
            bytes.append(UInt8(ascii: "T"))
            bytes.appendBigEndian(Int32(relations.count))
            bytes.append(0)
            for relation in relations { bytes.appendBigEndian(relation) }
        case .other(let type):
            bytes.append(type)
        }
        return bytes
    }
}

extension [UInt8] {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// Names never hold NUL once read: the reader stops at the first.
    mutating func appendCString(_ text: String) {
        append(contentsOf: text.utf8)
        append(0)
    }

    mutating func appendTuple(_ values: [PgOutputMessage.TupleValue]) {
        appendBigEndian(Int16(values.count))
        for value in values {
            switch value {
            case .null:
                append(UInt8(ascii: "n"))
            case .unchanged:
                append(UInt8(ascii: "u"))
            case .text(let text):
                append(UInt8(ascii: "t"))
                appendBigEndian(Int32(text.utf8.count))
                append(contentsOf: text.utf8)
            case .binary(let value):
                append(UInt8(ascii: "b"))
                appendBigEndian(Int32(value.count))
                append(contentsOf: value)
            }
        }
    }
}
