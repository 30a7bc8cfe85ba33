import CLibPQ

/// Statement parameters encoded once, laid out as `PQexecParams` and `PQsendQueryParams`
/// want them: types, one buffer of values, lengths and formats.
struct BoundParameters {
    private(set) var types: [Oid] = []
    private(set) var formats: [Int32] = []
    private(set) var lengths: [Int32] = []
    /// Where each value starts in `bytes`; `nil` for NULL.
    private var offsets: [Int?] = []
    private var bytes: [UInt8] = []

    var count: Int { types.count }

    init(_ parameters: [(any PostgresEncodable)?]) throws(PostgresError) {
        guard parameters.count <= Int(UInt16.max) else {
            throw PostgresError(kind: .invalidInput, message: "\(parameters.count) parameters: PostgreSQL takes at most 65535")
        }
        types.reserveCapacity(parameters.count)
        formats.reserveCapacity(parameters.count)
        lengths.reserveCapacity(parameters.count)
        offsets.reserveCapacity(parameters.count)
        for (index, parameter) in parameters.enumerated() {
            guard let parameter else {
                types.append(0)
                formats.append(PostgresFormat.text.rawValue)
                lengths.append(0)
                offsets.append(nil)
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
            if valueType.postgresFormat == .text {
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
            types.append(valueType.postgresType.rawValue)
            formats.append(valueType.postgresFormat.rawValue)
            lengths.append(Int32(length))
            offsets.append(start)
        }
        // A zero-length value still needs a valid pointer, so the buffer is never empty.
        bytes.append(0)
    }

    /// The text form of parameter `index` (0-based), for keeping it out of messages.
    func textValue(at index: Int) -> String? {
        guard formats[index] == PostgresFormat.text.rawValue, let start = offsets[index], lengths[index] > 0 else { return nil }
        return String(decoding: bytes[start..<(start + Int(lengths[index]))], as: UTF8.self)
    }

    func withPointers<Result>(
        _ body: (
            _ types: UnsafePointer<Oid>?, _ values: UnsafePointer<UnsafePointer<CChar>?>?,
            _ lengths: UnsafePointer<Int32>?, _ formats: UnsafePointer<Int32>?
        ) -> Result
    ) -> Result {
        bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return values.withUnsafeBufferPointer { values in
                types.withUnsafeBufferPointer { types in
                    lengths.withUnsafeBufferPointer { lengths in
                        formats.withUnsafeBufferPointer { formats in
                            body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                        }
                    }
                }
            }
        }
    }

    /// `message` with every quoted occurrence of a text parameter replaced by its `$n`,
    /// since the server quotes the offending input (`invalid input syntax for type integer: "abc"`).
    func redacting(_ message: String) -> String {
        var message = message
        for index in 0..<count {
            guard let value = textValue(at: index) else { continue }
            message = message.replacingOccurrences(of: "\"\(value)\"", with: "$\(index + 1)")
        }
        return message
    }
}
