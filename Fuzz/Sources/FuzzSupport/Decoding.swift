import RelatePostgres

/// A Swift type whose decoder a target runs, and the properties checked on every input:
/// - malformed bytes throw a `PostgresDecodingError` (the signature allows nothing else):
///   never a trap, a read outside the cell, or an allocation the cell's size cannot justify
///   (libFuzzer's `-malloc_limit_mb` reports those);
/// - a value read, written again as the library writes it — in its own form, as a bound
///   parameter is sent, and in its text form, as an array literal holds it — reads back as
///   the same value. Values are compared, not bytes: a numeric with leading zero digits, or
///   `1.50`, legitimately writes differently from what was read;
/// - reading the cell without naming a Swift type (`PostgresValue`) never traps, and gives
///   the same value when it gives a `T`.
public struct Decoding {
    public let run: (_ cell: UnsafeRawBufferPointer, _ type: PostgresType, _ format: PostgresFormat) -> Void

    /// `check` is a target's own property of each value read.
    public static func scalar<T: PostgresArrayElement & SameValue>(
        _: T.Type, alsoChecking check: @escaping (T) -> Void = { _ in }
    ) -> Decoding {
        Decoding { cell, type, format in
            let value = try? withCell(cell, format: format) { bytes throws(PostgresDecodingError) in
                try T.decode(from: bytes, type: type, format: format)
            }
            let dynamic = try? withCell(cell, format: format) { bytes throws(PostgresDecodingError) -> any Sendable in
                try PostgresValue.decode(from: bytes, type: type, format: format)
            }
            guard let value else { return }
            if let dynamic = dynamic as? T, !dynamic.isSame(as: value) {
                finding("a \(type) cell in \(format) form reads as \(T.self) \(value.shown) but as \(dynamic.shown) through PostgresValue")
            }
            expectRoundTrip(value, writtenAs: T.postgresFormat) { value, bytes throws(PostgresEncodingError) in
                try value.encode(into: &bytes)
            }
            expectRoundTrip(value, writtenAs: .text) { value, bytes throws(PostgresEncodingError) in
                value.encodeText(into: &bytes)
            }
            check(value)
        }
    }

    /// Arrays of `T`, read both as `[T?]` and as `[T]`, which must agree: the same elements
    /// when there is no NULL, and `[T]` refusing when there is one.
    public static func array<T: PostgresArrayElement & SameValue>(of _: T.Type) -> Decoding {
        Decoding { cell, type, format in
            let optionals = try? withCell(cell, format: format) { bytes throws(PostgresDecodingError) in
                try [T?].decode(from: bytes, type: type, format: format)
            }
            let values = try? withCell(cell, format: format) { bytes throws(PostgresDecodingError) in
                try [T].decode(from: bytes, type: type, format: format)
            }
            _ = try? withCell(cell, format: format) { bytes throws(PostgresDecodingError) -> any Sendable in
                try PostgresValue.decode(from: bytes, type: type, format: format)
            }
            switch (optionals, values) {
            case (nil, nil):
                return
            case let (optionals?, values?):
                if !values.map(Optional.some).isSame(as: optionals) {
                    finding("a \(type) cell in \(format) form reads as [\(T.self)?] \(optionals.shown) but as [\(T.self)] \(values.shown)")
                }
            case let (optionals?, nil):
                if !optionals.contains(where: { $0 == nil }) {
                    finding("a \(type) cell in \(format) form reads as [\(T.self)?] \(optionals.shown), without NULL, but not as [\(T.self)]")
                }
            case let (nil, values?):
                finding("a \(type) cell in \(format) form reads as [\(T.self)] \(values.shown) but not as [\(T.self)?]")
            }
            if let optionals {
                expectRoundTrip(optionals, writtenAs: [T?].postgresFormat) { value, bytes throws(PostgresEncodingError) in
                    try value.encode(into: &bytes)
                }
            }
        }
    }
}

/// Writes `value` with `write`, in `format`, and reads it back as a `Value` of its own type.
func expectRoundTrip<Value: PostgresEncodable & PostgresDecodable & SameValue>(
    _ value: Value, writtenAs format: PostgresFormat,
    _ write: (Value, inout [UInt8]) throws(PostgresEncodingError) -> Void
) {
    var bytes: [UInt8] = []
    // An encoder may refuse a value it cannot send (a string holding NUL, a date beyond
    // the server's range): that is an error for the caller, not a finding.
    do { try write(value, &bytes) } catch { return }
    do {
        let again = try withCell(bytes, format: format) { cell throws(PostgresDecodingError) in
            try Value.decode(from: cell, type: Value.postgresType, format: format)
        }
        if !again.isSame(as: value) {
            finding("\(Value.self) \(value.shown), written in \(format) form as \(bytes), reads back as \(again.shown)")
        }
    } catch {
        finding("\(Value.self) \(value.shown), written in \(format) form as \(bytes), does not read back: \(error.reason)")
    }
}
