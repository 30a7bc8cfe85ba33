/// A row's identity within an entity: its primary key values.
enum ObjectKey: Hashable {
    case integer(Int)
    case values([AnyHashable])

    /// `nil` when a value is NULL or not hashable (such a row has no identity).
    init?(_ values: [Any?]) {
        if values.count == 1, let integer = values[0] as? Int {
            self = .integer(integer)
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
