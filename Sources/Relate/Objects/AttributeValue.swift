import Foundation
import RelatePostgres

/// Turns a Swift value given for an attribute into a parameter the column takes, or an
/// error that names the key, the column's type and the value's type (never the value).
enum AttributeValue {
    static func encodable(_ value: Any?, for attribute: Attribute, entity: Entity) throws(RelateError) -> (any PostgresEncodable)? {
        guard let value = unwrap(value) else { return nil }
        let type = PostgresType(attribute.typeOID)
        func mismatch(_ reason: String? = nil) -> RelateError {
            RelateError(
                kind: .typeMismatch,
                message: "key \"\(attribute.key)\" of \"\(entity.name)\" is column \"\(attribute.name)\" of type \(attribute.type); "
                    + (reason ?? "a value of type \(Swift.type(of: value)) cannot be stored there"),
                entity: entity.name, key: attribute.key)
        }
        switch type {
        case .int2, .int4, .int8, .oid:
            let integer: Int?
            switch value {
            case let number as any BinaryInteger: integer = Int(exactly: number)
            case let number as Double: integer = Int(exactly: number)
            case let number as Float: integer = Int(exactly: number)
            case let number as Decimal: integer = Int(exactly: NSDecimalNumber(decimal: number).doubleValue)
            default: throw mismatch()
            }
            let range: ClosedRange<Int> =
                switch type {
                case .int2: Int(Int16.min)...Int(Int16.max)
                case .int4: Int(Int32.min)...Int(Int32.max)
                case .oid: 0...Int(UInt32.max)
                default: Int.min...Int.max
                }
            guard let integer, range.contains(integer) else {
                throw mismatch("\(value) (\(Swift.type(of: value))) does not fit in \(attribute.type)")
            }
            return integer
        case .float4, .float8:
            switch value {
            case let number as Double: return number
            case let number as Float: return Double(number)
            case let number as any BinaryInteger: return Double(number)
            case let number as Decimal: return NSDecimalNumber(decimal: number).doubleValue
            default: throw mismatch()
            }
        case .numeric:
            switch value {
            case let number as Decimal: return number
            case let number as any BinaryInteger: return Decimal(string: String(number))
            case let number as Double:
                guard number.isFinite else { throw mismatch("\(number) is not a finite number") }
                return Decimal(string: "\(number)")
            case let number as Float:
                guard number.isFinite else { throw mismatch("\(number) is not a finite number") }
                return Decimal(string: "\(number)")
            default: throw mismatch()
            }
        case .bool:
            guard let flag = value as? Bool else { throw mismatch() }
            return flag
        case .text, .varchar, .bpchar, .name, .char, .xml:
            guard let text = value as? String else { throw mismatch() }
            return text
        case .json, .jsonb:
            if let text = value as? String { return text }
            if let data = value as? Data { return String(decoding: data, as: UTF8.self) }
            throw mismatch()
        case .date, .timestamp, .timestamptz:
            guard let date = value as? Date else { throw mismatch() }
            return date
        case .uuid:
            if let uuid = value as? UUID { return uuid }
            if let text = value as? String, let uuid = UUID(uuidString: text) { return uuid }
            throw mismatch()
        case .bytea:
            if let data = value as? Data { return data }
            if let bytes = value as? [UInt8] { return Data(bytes) }
            throw mismatch()
        default:
            if type.arrayElement != nil, let array = value as? any PostgresEncodable, Swift.type(of: array).postgresType.arrayElement != nil {
                return array
            }
            // Types without a Swift mapping take their text form, which the server parses.
            if let text = value as? String { return text }
            throw mismatch("give its text form as a String")
        }
    }

    /// `Optional.some(nil)` and `NSNull` are NULL too.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if type(of: value) is NSNull.Type { return nil }
        if let optional = value as? any OptionalValue { return unwrap(optional.wrapped) }
        return value
    }

    /// A parameter holding a list of key values, typed when they share a Swift type, so
    /// `= ANY($1)` compares them with the column's own type (and index). Otherwise their
    /// text forms, compared with the column's text form.
    ///
    /// Integers go as the column's own integer type (int4[] for an int4 column): compared
    /// with an int8[], the planner can neither hash the list nor use the plan it would
    /// for the column's type (a seq scan with a hashed list took 2 ms where the int8[]
    /// index scan took 7 ms for 10,000 rows).
    static func array(_ keys: [StoredValue], columnType: PostgresType) -> (parameter: any PostgresEncodable, comparesAsText: Bool) {
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
                if narrow.count == integers.count { return (narrow, false) }
            case .int2:
                let narrow = integers.compactMap(Int16.init(exactly:))
                if narrow.count == integers.count { return (narrow, false) }
            default:
                break
            }
            return (integers, false)
        }
        // Keys hold no NULL (a NULL key matches nothing and is never asked for).
        let values = keys.compactMap(\.value)
        if let integers = values as? [Int] { return (integers, false) }
        if let strings = values as? [String] { return (strings, false) }
        if let uuids = values as? [UUID] { return (uuids, false) }
        if let dates = values as? [Date] { return (dates, false) }
        if let decimals = values as? [Decimal] { return (decimals, false) }
        if let bools = values as? [Bool] { return (bools, false) }
        if let data = values as? [Data] { return (data, false) }
        if let doubles = values as? [Double] { return (doubles, false) }
        return (values.map { "\($0)" }, true)
    }
}

private protocol OptionalValue {
    var wrapped: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrapped: Any? { self.map { $0 } }
}
