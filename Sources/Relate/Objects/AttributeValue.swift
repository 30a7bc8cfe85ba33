import Foundation
import RelatePostgres

/// Turns a Swift value given for an attribute into a parameter the column takes, or an
/// error that names the key, the column's type and the value's type (never the value).
enum AttributeValue {
    /// What the value is for, as an error says it.
    enum Use {
        /// Written to the column.
        case stored
        /// Compared with the column's values (a condition).
        case compared
    }

    static func encodable(
        _ value: Any?, for attribute: Attribute, entity: Entity, use: Use = .stored
    ) throws(RelateError) -> (any PostgresEncodable)? {
        let type = PostgresType(attribute.typeOID)
        if let value = common(value, type) { return value }
        guard let value = unwrap(value) else { return nil }
        func mismatch(_ reason: String? = nil, value refused: Any? = nil) -> RelateError {
            RelateError(
                kind: .typeMismatch,
                message: "key \"\(attribute.key)\" of \"\(entity.name)\" is column \"\(attribute.name)\" of type \(attribute.type); "
                    + (reason ?? "a value of type \(Swift.type(of: value)) " + (use == .stored ? "cannot be stored there" : "cannot be compared with it")),
                entity: entity.name, key: attribute.key, detail: refused.map { "value \($0)" })
        }
        switch type.mapping {
        case .integer:
            let integer: Int?
            switch value {
            case let number as any BinaryInteger: integer = Int(exactly: number)
            case let number as Double: integer = Int(exactly: number)
            case let number as Float: integer = Int(exactly: number)
            case let number as Decimal: integer = exactInteger(number)
            default: throw mismatch()
            }
            guard let integer, integerRange(type).contains(integer) else {
                throw mismatch("the \(Swift.type(of: value)) value given does not fit in \(attribute.type) exactly", value: value)
            }
            return integer
        case .float, .double:
            switch value {
            case let number as Double: return number
            case let number as Float: return Double(number)
            case let number as any BinaryInteger: return Double(number)
            case let number as Decimal: return NSDecimalNumber(decimal: number).doubleValue
            default: throw mismatch()
            }
        case .decimal:
            // Through the shortest text that reads back as the same number, so 0.1 is 0.1;
            // a number Decimal cannot hold (1e300) is refused, never sent as NULL.
            let text: String
            switch value {
            case let number as Decimal: return number
            // A number Decimal cannot hold, as its text (as such a value reads).
            case let number as String: return number
            case let number as any BinaryInteger: text = String(number)
            case let number as Double where number.isFinite: text = "\(number)"
            case let number as Float where number.isFinite: text = "\(number)"
            case is Double, is Float: throw mismatch("a non-finite \(Swift.type(of: value)) cannot be stored in numeric", value: value)
            default: throw mismatch()
            }
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw mismatch("the \(Swift.type(of: value)) value given is out of Decimal's range (38 digits, exponent -128...127)", value: value)
            }
            return decimal
        case .bool:
            guard let flag = value as? Bool else { throw mismatch() }
            return flag
        case .string:
            if let text = value as? String { return text }
            throw mismatch()
        case .json:
            // A String or Data is the document's JSON text, as before JSONValue (the server
            // parses it); a JSONValue goes as jsonb, or as its text for a json column.
            if let text = value as? String { return text }
            if let data = value as? Data { return String(decoding: data, as: UTF8.self) }
            if let failure = value as? TypedJSONFailure {
                throw mismatch("the \(failure.swiftType) value given does not encode as JSON: \(failure.reason)")
            }
            guard let json = value as? JSONValue else { throw mismatch() }
            guard type == .json else { return json }
            do { return try json.jsonText() } catch { throw mismatch("the JSONValue given cannot be written as JSON (a NaN?)") }
        case .time:
            if let text = value as? String { return text }
            guard let time = value as? PostgresTime else { throw mismatch() }
            return time
        case .interval:
            if let text = value as? String { return text }
            guard let interval = value as? PostgresInterval else { throw mismatch() }
            return interval
        case .inet:
            if let text = value as? String { return text }
            guard var address = value as? PostgresInet else { throw mismatch() }
            // An inet value written to a cidr column goes as cidr (the server checks that
            // no bit beyond the prefix is set); a cidr to an inet column as inet.
            address.isNetwork = type == .cidr
            return address
        case .macAddress:
            if let text = value as? String { return text }
            guard let address = value as? PostgresMacAddress else { throw mismatch() }
            // Six bytes go into a macaddr8 column as the server widens them; eight bytes
            // into a macaddr column only as text, which the server refuses unless they fit.
            return type == .macaddr && address.bytes.count == 8 ? address.description : address
        case .range:
            if let text = value as? String { return text }
            // A range of the right bound type, sent as the column's own range type.
            guard let range = value as? any PostgresAnyRange, let encodable = range.encodable(as: type) else { throw mismatch() }
            return encodable
        case .multirange:
            if let text = value as? String { return text }
            // A multirange of the right bound type, sent as the column's own multirange type.
            guard let multirange = value as? any PostgresAnyMultirange, let encodable = multirange.encodable(as: type) else { throw mismatch() }
            return encodable
        case .date:
            guard let date = value as? Date else { throw mismatch() }
            return date
        case .uuid:
            if let uuid = value as? UUID { return uuid }
            if let text = value as? String, let uuid = UUID(uuidString: text) { return uuid }
            throw mismatch()
        case .data:
            if let data = value as? Data { return data }
            if let bytes = value as? [UInt8] { return Data(bytes) }
            throw mismatch()
        case .array(let element):
            if let array = value as? any PostgresEncodable, Swift.type(of: array).postgresType.arrayElement != nil {
                // An array of a type whose values go as one of several PostgreSQL types (a
                // range as int4range or int8range, a time as time or timetz) goes as its
                // text when its own array type is not the column's: the server reads it so.
                if Swift.type(of: array).postgresType != type, element.sentAsSeveralTypes, let elements = array as? [any PostgresArrayElement] {
                    var literal: [UInt8] = []
                    do { try elements.map(StoredValue.elementText).encodeText(into: &literal) } catch { throw mismatch(error.reason) }
                    return String(decoding: literal, as: UTF8.self)
                }
                return array
            }
            if let text = value as? String { return text }
            throw mismatch()
        case .textForm:
            // Types without a Swift mapping take their text form, which the server parses.
            if let text = value as? String { return text }
            // A composite: a generated struct or a record, in binary.
            if let composite = attribute.composite {
                do {
                    if let encodable = try CompositeValue.encodable(value, type: composite, isArray: attribute.type.hasSuffix("[]")) {
                        return encodable
                    }
                } catch {
                    throw mismatch(error.reason)
                }
                throw mismatch("give a \(attribute.type.hasSuffix("[]") ? "[PostgresRecord]" : "PostgresRecord"), its generated struct, or its text form as a String")
            }
            // An array of them (enum labels: [String], as they read) goes as an array literal.
            if attribute.type.hasSuffix("[]"), let elements = value as? [String?] {
                var literal: [UInt8] = []
                do { try elements.encodeText(into: &literal) } catch { throw mismatch(error.reason) }
                return String(decoding: literal, as: UTF8.self)
            }
            throw mismatch("give its text form as a String")
        }
    }

    /// `value` as the column takes it, when it is (an optional holding) the Swift type the
    /// column's values most often come as: `Int` for an integer column it fits, `String`
    /// for text, `Double` for floats, `Bool`. `nil` for anything else, which takes the
    /// general path. Each is a cast to one concrete type, where the general path casts to
    /// protocols (`OptionalValue`, `BinaryInteger`), each a conformance lookup: the by-key
    /// write spent 8 of its 53 thousand instructions there (Benchmarks/README.md).
    @inline(__always)
    static func common(_ value: Any?, _ type: PostgresType) -> (any PostgresEncodable)? {
        switch type.mapping {
        case .integer:
            if let integer = value as? Int, integerRange(type).contains(integer) { return integer }
        case .string:
            if let text = value as? String { return text }
        case .float, .double:
            if let number = value as? Double { return number }
        case .bool:
            if let flag = value as? Bool { return flag }
        default:
            break
        }
        return nil
    }

    /// The integers an integer column holds.
    private static func integerRange(_ type: PostgresType) -> ClosedRange<Int> {
        switch type {
        case .int2: Int(Int16.min)...Int(Int16.max)
        case .int4: Int(Int32.min)...Int(Int32.max)
        case .oid: 0...Int(UInt32.max)
        default: Int.min...Int.max
        }
    }

    /// The integer `decimal` is exactly, if it is one that fits in `Int`.
    static func exactInteger(_ decimal: Decimal) -> Int? {
        guard decimal.isFinite else { return nil }
        var value = decimal
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        guard rounded == decimal else { return nil }
        // Decimal's text of an integer is its digits: exact, where a Double would round.
        return Int(rounded.description)
    }

    /// `Optional.some(nil)` and `NSNull` are NULL too.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if type(of: value) is NSNull.Type { return nil }
        if let optional = value as? any OptionalValue { return unwrap(optional.wrapped) }
        return value
    }

    /// A list of key values for `= ANY($1)`, sent so that the server compares them as the
    /// column's own type and can use its index.
    enum KeyList {
        /// An array of the Swift type the column maps to.
        case typed(any PostgresEncodable)
        /// An array literal (`{"a","b"}`) sent untyped: in `column = ANY($1)` the server
        /// reads it as an array of the column's type. For types without a Swift array.
        case literal(String)

        var parameter: any PostgresEncodable {
            switch self {
            case .typed(let array): array
            case .literal(let text): text
            }
        }
    }

    /// Integers go as the column's own integer type (int4[] for an int4 column): compared
    /// with an int8[], the planner can neither hash the list nor use the plan it would
    /// for the column's type (a seq scan with a hashed list took 2 ms where the int8[]
    /// index scan took 7 ms for 10,000 rows).
    static func keyList(_ keys: [StoredValue], columnType: PostgresType) -> KeyList {
        var integers: [Int] = []
        integers.reserveCapacity(keys.count)
        for key in keys {
            guard case .integer(let integer) = key else { break }
            integers.append(integer)
        }
        if integers.count == keys.count {
            // Keys from a wider column (an int8 key for an int4 foreign key) may not fit:
            // then the list goes as int8[], correct if slower to plan.
            switch columnType {
            case .int4:
                let narrow = integers.compactMap(Int32.init(exactly:))
                if narrow.count == integers.count { return .typed(narrow) }
            case .int2:
                let narrow = integers.compactMap(Int16.init(exactly:))
                if narrow.count == integers.count { return .typed(narrow) }
            default:
                break
            }
            return .typed(integers)
        }
        // Keys hold no NULL (a NULL key matches nothing and is never asked for).
        let values = keys.compactMap(\.value)
        switch columnType.mapping {
        case .string: if let strings = values as? [String] { return .typed(strings) }
        case .uuid: if let uuids = values as? [UUID] { return .typed(uuids) }
        case .date: if let dates = values as? [Date] { return .typed(dates) }
        case .decimal: if let decimals = values as? [Decimal] { return .typed(decimals) }
        case .bool: if let bools = values as? [Bool] { return .typed(bools) }
        case .data: if let data = values as? [Data] { return .typed(data) }
        case .double: if let doubles = values as? [Double] { return .typed(doubles) }
        case .float: if let floats = values as? [Float] { return .typed(floats) }
        default: break
        }
        var literal: [UInt8] = []
        // Text elements never fail to encode (their NUL bytes were refused when stored).
        try? keys.map(\.arrayElementText).encodeText(into: &literal)
        return .literal(String(decoding: literal, as: UTF8.self))
    }
}

extension PostgresValueMapping {
    /// Whether a Swift value of this mapping may go as one of several PostgreSQL types, so
    /// that an array of them must name the column's (see `AttributeValue.encodable`).
    var sentAsSeveralTypes: Bool {
        switch self {
        case .json, .time, .inet, .macAddress, .range: true
        default: false
        }
    }
}

private protocol OptionalValue {
    var wrapped: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrapped: Any? { self.map { $0 } }
}
