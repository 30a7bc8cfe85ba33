/// A row's identity within an entity: its primary key values.
enum ObjectKey: Hashable {
    case integer(Int)
    case integerPair(Int, Int)
    case values([AnyHashable])

    /// `nil` when a value is NULL or not hashable (such a row has no identity).
    /// A one-column key, without the array.
    init?(single value: (any Sendable)?) {
        if let integer = value as? Int {
            self = .integer(integer)
        } else if let value, let key = value as? AnyHashable {
            self = .values([key])
        } else {
            return nil
        }
    }

    init?(_ values: [Any?]) {
        if values.count == 1, let integer = values[0] as? Int {
            self = .integer(integer)
            return
        }
        if values.count == 2, let first = values[0] as? Int, let second = values[1] as? Int {
            self = .integerPair(first, second)
            return
        }
        var hashable: [AnyHashable] = []
        hashable.reserveCapacity(values.count)
        for value in values {
            guard let value, let key = value as? AnyHashable else { return nil }
            hashable.append(key)
        }
        self = .values(hashable)
    }
}
