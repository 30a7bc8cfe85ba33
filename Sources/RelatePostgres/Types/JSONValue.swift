import Foundation

/// A JSON document as a Swift value: what a `json` or `jsonb` column reads as, so that no
/// one parses a string by hand.
///
/// Numbers are `Decimal`, which keeps `0.1` as `0.1` and integers to 38 digits exactly
/// (a `Double` would round a 64-bit identifier); a document with a number past that
/// (more than 38 significant digits, an exponent past ±127) is refused rather than rounded.
/// An object is a dictionary: `jsonb` keeps neither key order nor duplicate keys, and a
/// `json` document read here does not either (of a name given twice it keeps the last
/// value, as `jsonb` does). Its keys are `String`s, compared by Swift's
/// `==`: a document with two members whose names differ only in the form of a character
/// (a composed `é` and a decomposed one), which `jsonb` keeps apart, is refused rather
/// than read as one member. Relate compares documents by their bytes, keys and strings
/// alike; `==` on `JSONValue` is Swift's.
///
/// ```swift
/// let settings: JSONValue = ["theme": "dark", "fontSize": 14, "beta": true, "tags": ["a", "b"]]
/// try ada.setValue(settings, forKey: "settings")
/// if case .string(let theme)? = try ada.value(forKey: "settings", as: JSONValue.self)?["theme"] { … }
/// ```
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Decimal)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// The member `key` of an object; `nil` for another value or a missing key.
    ///
    /// - Parameter key: The member's name.
    /// - Returns: The member's value, or `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` of an array; `nil` for another value or an index out of range.
    ///
    /// - Parameter index: The element's position.
    /// - Returns: The element, or `nil`.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// Parses a JSON document (any value at the top, as PostgreSQL allows).
    ///
    /// - Parameter text: The document's UTF-8 bytes.
    /// - Throws: A `DecodingError` when it is not strict JSON (RFC 8259: no control
    ///   character in a string, no lone surrogate, nothing after the value); an error that
    ///   says why when it holds a number `Decimal` cannot hold exactly, or two members whose
    ///   names Swift's `==` takes for one.
    public init(json text: some Collection<UInt8>) throws {
        self = try text.withContiguousStorageIfAvailable { try Self.read(UnsafeRawBufferPointer($0)) }
            ?? Array(text).withUnsafeBytes { try Self.read($0) }
    }

    /// The document as compact JSON text, members sorted by key.
    ///
    /// - Returns: The JSON text.
    /// - Throws: An `EncodingError` for a number JSON cannot hold (`Decimal.nan`).
    public func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: A `DecodingError` when the value is none of JSON's.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Decimal.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as the JSON value it is.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: An `EncodingError` for `Decimal.nan`, which JSON has no number for; what
    ///   the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            // JSONEncoder writes `NaN`, which is not JSON.
            guard !number.isNaN else {
                throw EncodingError.invalidValue(number, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "NaN is not a JSON number"))
            }
            try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `null`.
    ///
    /// - Parameter nilLiteral: `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// A bool.
    ///
    /// - Parameter value: The literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A number.
    ///
    /// - Parameter value: The literal.
    public init(integerLiteral value: Int) { self = .number(Decimal(value)) }
    /// A string.
    ///
    /// - Parameter value: The literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    ///
    /// - Parameter elements: The literal's elements.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object; a key given twice keeps its last value.
    ///
    /// - Parameter elements: The literal's members.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}

extension JSONValue: PostgresArrayElement {
    /// `JSONValue` is sent as `jsonb`.
    public static var postgresType: PostgresType { .jsonb }
    /// `JSONValue` is sent in binary form (`jsonb`'s version byte, then the text).
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[JSONValue]` is sent as `jsonb[]`.
    public static var postgresArrayType: PostgresType { .jsonbArray }

    /// The version of `jsonb`'s binary form, its first byte.
    private static let jsonbVersion: UInt8 = 1

    /// Appends `jsonb`'s binary form: its version byte, then the JSON text.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` for a number JSON cannot hold (`Decimal.nan`).
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        do {
            let text = try jsonText()
            buffer.append(Self.jsonbVersion)
            buffer.append(contentsOf: text.utf8)
        } catch {
            throw PostgresEncodingError("the JSON value cannot be written as JSON: \(error)")
        }
    }

    /// Appends the JSON text (a value JSON cannot hold writes `null`).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: ((try? jsonText()) ?? "null").utf8)
    }

    /// Reads a `json` or `jsonb` cell in either form, or a text cell that holds JSON.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value.
    /// - Throws: A ``PostgresDecodingError`` when the cell is not JSON, or holds a number
    ///   `Decimal` cannot hold.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> JSONValue {
        let text: UnsafeRawBufferPointer
        switch (format, type) {
        case (.binary, .jsonb):
            guard bytes.first == jsonbVersion else { throw .malformed(type, format) }
            text = UnsafeRawBufferPointer(rebasing: bytes.dropFirst())
        case (.binary, .json), (.text, .json), (.text, .jsonb), (_, .text), (_, .varchar), (_, .unknown):
            text = bytes
        default:
            throw .mismatch(JSONValue.self, type, format)
        }
        do {
            return try JSONValue(json: text)
        } catch let error as NotHeldExactly {
            throw PostgresDecodingError("a \(type) value that JSONValue cannot hold as it is: \(error)")
        } catch {
            throw PostgresDecodingError("a \(type) value is not JSON that JSONValue holds")
        }
    }
}
