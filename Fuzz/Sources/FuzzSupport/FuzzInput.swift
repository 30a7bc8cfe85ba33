import RelatePostgres

/// The bytes libFuzzer hands a target, read front to back: a header says what to decode
/// and how, so that one target covers several Swift types, every PostgreSQL type and both
/// forms; the rest is the value. A header cut short reads as zero bytes, so every input is
/// a case to run.
///
/// The header: which of the target's Swift types (one byte, modulo their number), the
/// PostgreSQL type (its OID, four bytes big-endian, as on the wire), the form (one byte,
/// its low bit: 0 text, 1 binary, as PostgreSQL's format codes).
public struct FuzzInput {
    private var remaining: UnsafeRawBufferPointer

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        remaining = UnsafeRawBufferPointer(start: data, count: size)
    }

    public mutating func byte() -> UInt8 {
        guard let first = remaining.first else { return 0 }
        remaining = UnsafeRawBufferPointer(rebasing: remaining.dropFirst())
        return first
    }

    public mutating func choose<Choice>(_ choices: [Choice]) -> Choice {
        choices[Int(byte()) % choices.count]
    }

    public mutating func type() -> PostgresType {
        var oid: UInt32 = 0
        for _ in 0..<4 { oid = oid << 8 | UInt32(byte()) }
        return PostgresType(oid)
    }

    public mutating func format() -> PostgresFormat {
        byte() & 1 == 1 ? .binary : .text
    }

    /// The value: everything after the header.
    public var rest: UnsafeRawBufferPointer { remaining }
}

/// A target's whole run for one input: the header chooses among `decodings`, the rest is
/// the cell. Always 0: libFuzzer reserves other results.
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int, _ decodings: [Decoding]) -> CInt {
    var input = FuzzInput(data, size)
    let decoding = input.choose(decodings)
    let type = input.type()
    let format = input.format()
    decoding.run(input.rest, type, format)
    return 0
}
