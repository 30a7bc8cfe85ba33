/// Reads the big-endian fields of a message of PostgreSQL's wire protocol, checking every
/// length against the bytes there are: a short or malformed message is an error naming
/// what was being read, never a read past the end.
struct WireReader {
    let bytes: [UInt8]
    /// What the bytes are, for errors ("pgoutput message", "replication message").
    let subject: String
    private(set) var offset = 0

    init(_ bytes: [UInt8], subject: String) {
        self.bytes = bytes
        self.subject = subject
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func integer<T: FixedWidthInteger>(_: T.Type, _ field: String) throws -> T {
        let size = MemoryLayout<T>.size
        guard bytes.count - offset >= size else { throw truncated(field) }
        var value: T = 0
        for byte in bytes[offset..<offset + size] { value = value << 8 | T(byte) }
        offset += size
        return value
    }

    mutating func byte(_ field: String) throws -> UInt8 {
        try integer(UInt8.self, field)
    }

    /// A NUL-terminated string.
    mutating func cString(_ field: String) throws -> String {
        guard let end = bytes[offset...].firstIndex(of: 0) else { throw truncated(field) }
        let text = String(decoding: bytes[offset..<end], as: UTF8.self)
        offset = end + 1
        return text
    }

    /// `count` bytes; a negative or too large count is an error.
    mutating func bytes(_ count: Int, _ field: String) throws -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else { throw truncated(field) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Everything not read yet.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { offset = bytes.count }
        return bytes[offset...]
    }

    func malformed(_ what: String) -> PostgresError {
        PostgresError(kind: .decoding, message: "malformed \(subject): \(what) at byte \(offset) of \(bytes.count)")
    }

    private func truncated(_ field: String) -> PostgresError {
        malformed("\(field) runs past the end")
    }
}
