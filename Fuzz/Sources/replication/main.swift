import FuzzSupport
import RelatePostgres

/// The logical replication decoders, on every input: `ReplicationMessage` (what a
/// walsender sends inside COPY BOTH) and `PgOutputMessage` (pgoutput's messages), and the
/// payload of a data message as pgoutput too, as the change feed reads it. Malformed bytes
/// must throw a decoding `PostgresError` saying what was malformed; a message read, written
/// again by this target's encoder, must read back the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReplication(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let message = decoded("replication message", { try ReplicationMessage(bytes) }) {
        let again = decoded("replication message", { try ReplicationMessage(message.wireBytes) })
        if again != message {
            finding("replication message \(message), written as \(message.wireBytes), reads back as \(String(describing: again))")
        }
        if case .data(let start, let end, let payload) = message {
            expectLSNTextRoundTrip(start)
            expectLSNTextRoundTrip(end)
            fuzzPgOutput(payload)
        }
    }
    fuzzPgOutput(bytes)
    return 0
}

func fuzzPgOutput(_ bytes: [UInt8]) {
    guard let message = decoded("pgoutput message", { try PgOutputMessage(bytes) }) else { return }
    let again = decoded("pgoutput message", { try PgOutputMessage(message.wireBytes) })
    if again != message {
        finding("pgoutput message \(message), written as \(message.wireBytes), reads back as \(String(describing: again))")
    }
}

/// The message, or nil when the decoder threw the error it promises for malformed bytes.
func decoded<Message>(_ subject: String, _ decode: () throws -> Message) -> Message? {
    do {
        return try decode()
    } catch let error as PostgresError where error.kind == .decoding && error.message.hasPrefix("malformed \(subject)") {
        return nil
    } catch {
        finding("a \(subject) threw \(error), not a decoding error naming what was malformed")
    }
}

func expectLSNTextRoundTrip(_ lsn: LSN) {
    if LSN(lsn.description) != lsn {
        finding("LSN \(lsn.rawValue) written as \(lsn) reads back as \(String(describing: LSN(lsn.description)))")
    }
}
