import CLibPQ

/// Statement parameters encoded once, laid out as `PQexecParams` and `PQsendQueryParams`
/// want them: types, lengths and formats, and one buffer of values.
///
/// Two allocations whatever the count (the three arrays of 32-bit integers are one, the
/// values' pointers live on the stack while libpq reads them): a by-key write spent a
/// tenth of its instructions on the six arrays this used to make (Benchmarks/README.md).
///
/// Equal when the server receives the same: each parameter's type, form and bytes. Live
/// queries are grouped by it (`LiveGroupKey`), never by how the values print.
package struct BoundParameters: Hashable, Sendable {
    let count: Int
    /// Each parameter's type (an `Oid`), then each one's length, then each one's format:
    /// `count` of each. A NULL's length is -1 (libpq reads no length for a NULL).
    private var layout: [Int32]
    /// The values one after another, each text value followed by its NUL.
    private var bytes: [UInt8] = []

    package init(_ parameters: [(any PostgresEncodable)?]) throws(PostgresError) {
        guard parameters.count <= Int(UInt16.max) else {
            throw PostgresError(kind: .invalidInput, message: "\(parameters.count) parameters: PostgreSQL takes at most 65535")
        }
        count = parameters.count
        layout = Array(repeating: 0, count: 3 * count)
        // Room for the usual values (numbers, keys, short texts); a longer one grows it.
        bytes.reserveCapacity(8 * count + 1)
        for (index, parameter) in parameters.enumerated() {
            guard let parameter else {
                layout[count + index] = -1
                continue
            }
            let valueType = type(of: parameter)
            let start = bytes.count
            do {
                try parameter.encode(into: &bytes)
            } catch {
                throw PostgresError(kind: .invalidInput, message: "parameter $\(index + 1) (\(valueType)): \(error.reason)")
            }
            let length = bytes.count - start
            let format = valueType.postgresFormat
            if format == .text {
                // libpq reads text parameters up to their NUL, so one inside would cut the value short.
                guard !bytes[start...].contains(0) else {
                    throw PostgresError(
                        kind: .invalidInput,
                        message: "parameter $\(index + 1) (\(valueType)) contains a NUL byte, which PostgreSQL text cannot store")
                }
                bytes.append(0)
            }
            guard length <= Int(Int32.max) else {
                throw PostgresError(kind: .invalidInput, message: "parameter $\(index + 1) is larger than 2 GiB")
            }
            layout[index] = Int32(bitPattern: parameter.postgresValueType.rawValue)
            layout[count + index] = Int32(length)
            layout[2 * count + index] = format.rawValue
        }
        // A zero-length value still needs a valid pointer, so the buffer is never empty.
        bytes.append(0)
    }

    /// Each parameter's type, as a prepared statement is declared with them.
    var types: ArraySlice<Int32> { layout[0..<count] }

    /// Calls `body` with where each value starts in `bytes`, in order (`nil` for NULL).
    private func forEachStart(_ body: (_ index: Int, _ start: Int?) -> Void) {
        var start = 0
        for index in 0..<count {
            let length = Int(layout[count + index])
            guard length >= 0 else {
                body(index, nil)
                continue
            }
            body(index, start)
            start += length + (layout[2 * count + index] == PostgresFormat.text.rawValue ? 1 : 0)
        }
    }

    func withPointers<Result>(
        _ body: (
            _ types: UnsafePointer<Oid>?, _ values: UnsafePointer<UnsafePointer<CChar>?>?,
            _ lengths: UnsafePointer<Int32>?, _ formats: UnsafePointer<Int32>?
        ) -> Result
    ) -> Result {
        bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { values in
                forEachStart { index, start in
                    values.initializeElement(at: index, to: start.map { (base + $0).assumingMemoryBound(to: CChar.self) })
                }
                return layout.withUnsafeBufferPointer { layout in
                    guard let first = layout.baseAddress else { return body(nil, nil, nil, nil) }
                    // An Oid is a UInt32: memory of Int32s may be read as one.
                    let types = UnsafeRawPointer(first).assumingMemoryBound(to: Oid.self)
                    return body(types, UnsafePointer(values.baseAddress), first + count, first + 2 * count)
                }
            }
        }
    }

    /// `message` with every quoted occurrence of a text parameter replaced by its `$n`,
    /// since the server quotes the offending input (`invalid input syntax for type integer: "abc"`).
    func redacting(_ message: String) -> String {
        var message = message
        forEachValue { index, value, isText in
            guard let value, !value.isEmpty, isText else { return }
            message = message.replacingOccurrences(of: "\"\(String(decoding: value, as: UTF8.self))\"", with: "$\(index + 1)")
        }
        return message
    }

    /// Calls `body` with each value's bytes (`nil` for NULL) and whether it is text.
    func forEachValue(_ body: (_ index: Int, _ value: ArraySlice<UInt8>?, _ isText: Bool) -> Void) {
        forEachStart { index, start in
            let length = Int(layout[count + index])
            body(index, start.map { bytes[$0..<($0 + length)] }, layout[2 * count + index] == PostgresFormat.text.rawValue)
        }
    }
}

extension BoundParameters {
    /// The values as a log shows them when values are logged for debugging (text values as
    /// they are, binary ones by their length, NULL as `NULL`): never in an ordinary log.
    var debugTexts: [String] {
        var texts: [String] = []
        texts.reserveCapacity(count)
        forEachValue { _, value, isText in
            guard let value else { return texts.append("NULL") }
            texts.append(isText ? "'\(String(decoding: value, as: UTF8.self))'" : "<\(value.count) bytes, binary>")
        }
        return texts
    }
}
