extension Dictionary {
    /// The value for `key`, after inserting `make()` when there is none: one hash and one
    /// probe (the defaulted subscript's modify accessor), where a lookup then an insert
    /// take two of each.
    @inline(__always)
    mutating func value(forKey key: Key, orInserting make: () -> Value) -> Value {
        func read(_ slot: inout Value) -> Value { slot }
        return read(&self[key, default: make()])
    }
}
