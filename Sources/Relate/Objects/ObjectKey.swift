import Foundation
import RelatePostgres

/// A row's identity within an entity: its primary key values (or, to find the target of a
/// foreign key, the values of the columns it refers to).
///
/// `@unchecked Sendable`: each `AnyHashable` of `values` wraps a ``StoredValue``'s value,
/// which is `any Sendable`; `AnyHashable` itself cannot say so.
enum ObjectKey: Hashable, @unchecked Sendable {
    case integer(Int)
    case integerPair(Int, Int)
    case values([AnyHashable])

    /// `nil` when a value is NULL or not hashable (such a row has no identity).
    init?(_ values: [StoredValue]) {
        switch values.count {
        case 1:
            if case .integer(let integer) = values[0] {
                self = .integer(integer)
                return
            }
        case 2:
            if case .integer(let first) = values[0], case .integer(let second) = values[1] {
                self = .integerPair(first, second)
                return
            }
        default:
            break
        }
        var hashable: [AnyHashable] = []
        hashable.reserveCapacity(values.count)
        for value in values {
            if case .string(let text) = value {
                hashable.append(AnyHashable(TextKeyValue(text: text)))
                continue
            }
            // An array, a range, a document: as the server receives it (its type, form and
            // bytes), where its own `==` compares the texts inside by Swift's `==`.
            if case .other = value, let parameter = value.parameter, let bound = try? BoundParameters([parameter]) {
                hashable.append(AnyHashable(bound))
                continue
            }
            guard let value = value.value, let key = value as? AnyHashable else { return nil }
            hashable.append(key)
        }
        self = .values(hashable)
    }

    /// One integer hashed as itself, without the case's tag: keys of different cases
    /// that hash alike are still told apart by `==`, and most keys are one integer.
    func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let integer): hasher.combine(integer)
        case .integerPair(let first, let second):
            hasher.combine(first)
            hasher.combine(second)
        case .values(let values): hasher.combine(values)
        }
    }

    /// The key of one value, without an array for an integer.
    init?(_ value: StoredValue) {
        if case .integer(let integer) = value {
            self = .integer(integer)
        } else {
            self.init([value])
        }
    }

    /// The key of the attributes at `indexes` of `values`, without an intermediate array
    /// for the common one-integer case.
    @inline(__always)
    init?<Values: RandomAccessCollection<StoredValue>>(_ values: Values, at indexes: [Int]) where Values.Index == Int {
        if indexes.count == 1, case .integer(let integer) = values[indexes[0]] {
            self = .integer(integer)
        } else {
            self.init(indexes.map { values[$0] })
        }
    }

    /// A key given as parameters (a primary key passed to `object(_:primaryKey:)`), when
    /// each is of a type a row stores as is; `nil` otherwise, and the caller asks the database.
    init?(parameters: [(any PostgresEncodable)?]) {
        var values: [StoredValue] = []
        values.reserveCapacity(parameters.count)
        for parameter in parameters {
            guard let parameter, let value = StoredValue(scalar: parameter) else { return nil }
            values.append(value)
        }
        self.init(values)
    }
}

/// Text in a key, told apart by its bytes as the server tells text keys apart (under a
/// deterministic collation, the default): Swift's `String` equality takes a composed and a
/// decomposed `é` for one, and two rows keyed so would have shared one object. One string
/// hashed by its bytes, not an ``ExactTexts``: no array made for each key of a fetch.
private struct TextKeyValue: Hashable {
    let text: String

    static func == (left: Self, right: Self) -> Bool {
        left.text.hasSameBytes(as: right.text)
    }

    func hash(into hasher: inout Hasher) {
        // A copy of the string (a retain): `withUTF8` makes its own contiguous if it is not.
        var bytes = text
        bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// A dictionary by ``ObjectKey`` that keeps a key of one integer (most are) by that
/// integer: an `Int` hashes and compares in fewer instructions than an `ObjectKey` (grouping
/// a prefetch's 10,000 children by parent took 1.75 M instructions less).
struct ObjectKeyMap<Value> {
    private var integers: [Int: Value] = [:]
    private var others: [ObjectKey: Value] = [:]

    subscript(key: ObjectKey) -> Value? {
        @inline(__always) get {
            if case .integer(let integer) = key { return integers[integer] }
            return others[key]
        }
        set {
            if case .integer(let integer) = key { integers[integer] = newValue } else { others[key] = newValue }
        }
    }

    /// The value for `key`, after inserting `make()` when there is none.
    @inline(__always)
    mutating func value(forKey key: ObjectKey, orInserting make: () -> Value) -> Value {
        if case .integer(let integer) = key { return integers.value(forKey: integer, orInserting: make) }
        return others.value(forKey: key, orInserting: make)
    }

    /// Room for `count` keys of one integer.
    mutating func reserveCapacity(_ count: Int) {
        integers.reserveCapacity(count)
    }

    mutating func removeAll(keepingCapacity: Bool = false) {
        integers.removeAll(keepingCapacity: keepingCapacity)
        others.removeAll(keepingCapacity: keepingCapacity)
    }
}
