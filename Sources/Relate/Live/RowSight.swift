/// Which principals see one row, as the decisions of live rounds found
/// (``Database/requestsMet(_:changedKeys:)``): of the principals whose decision was asked,
/// those that found the row. Principals go by the numbers ``ObservationHub`` gives them,
/// one bit each.
struct RowSight {
    private var asked: [UInt64] = []
    private var seen: [UInt64] = []

    /// Whether principal `number` sees the row; `nil` when no decision of its was asked.
    func sees(_ number: Int) -> Bool? {
        let (word, bit) = number.quotientAndRemainder(dividingBy: 64)
        guard word < asked.count, asked[word] & (1 << bit) != 0 else { return nil }
        return seen[word] & (1 << bit) != 0
    }

    /// Notes what principal `number`'s decision found.
    mutating func set(_ number: Int, sees: Bool) {
        let (word, bit) = number.quotientAndRemainder(dividingBy: 64)
        if word >= asked.count {
            asked += Array(repeating: 0, count: word + 1 - asked.count)
            seen += Array(repeating: 0, count: word + 1 - seen.count)
        }
        asked[word] |= 1 << bit
        if sees { seen[word] |= 1 << bit } else { seen[word] &= ~(1 << bit) }
    }
}
