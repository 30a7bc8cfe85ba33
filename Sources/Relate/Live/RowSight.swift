import RelatePostgres

/// Which principals see one row, as the decisions of live rounds found
/// (``Database/requestsMet(_:changedKeys:confirming:)``): of the principals whose decision was asked,
/// those that found the row. Principals go by the numbers ``ObservationHub`` gives them,
/// two bits each (asked, seen), 64 principals a pair of words, in one array: one
/// allocation a row.
struct RowSight {
    /// Per 64 principals: the word of those asked, then the word of those that saw the row.
    private var words: [UInt64] = []
    /// The values of the columns the table's policies read (``ObservationHub``'s
    /// `sightColumns`), as a sweep found them, and the log's insert position when that
    /// sweep ran (after its snapshot was taken); `nil` when none did.
    var values: (texts: [String?], at: LSN)?

    /// Whether principal `number` sees the row; `nil` when no decision of its was asked.
    func sees(_ number: Int) -> Bool? {
        let (pair, bit) = number.quotientAndRemainder(dividingBy: 64)
        guard 2 * pair < words.count, words[2 * pair] & (1 << bit) != 0 else { return nil }
        return words[2 * pair + 1] & (1 << bit) != 0
    }

    /// Notes what principal `number`'s decision found.
    mutating func set(_ number: Int, sees: Bool) {
        let (pair, bit) = number.quotientAndRemainder(dividingBy: 64)
        if 2 * pair >= words.count { words += Array(repeating: 0, count: 2 * pair + 2 - words.count) }
        words[2 * pair] |= 1 << bit
        if sees { words[2 * pair + 1] |= 1 << bit } else { words[2 * pair + 1] &= ~(1 << bit) }
    }
}

extension RowSight {
    /// Whether an update whose changed columns the feed did not say (`after`: the row after
    /// it) left what was found as it was: the policies' `columns` hold the ``values`` a sweep
    /// found, and that sweep did not see the update (its commit ended after the log's insert
    /// position the sweep read, so the values are the row's before it). A sweep that saw
    /// it may have found the row after it, beside another principal's finding from before.
    func keeps(_ after: RowAfter, columns: [String]) -> Bool {
        guard !columns.isEmpty, let values, values.texts.count == columns.count, after.committed > values.at else { return false }
        return zip(columns, values.texts).allSatisfy { column, value in
            // A value the update left TOASTed, or sent in binary, is not known.
            guard let new = after.values[column] else { return false }
            switch (new, value) {
            case (nil, nil): return true
            case (let new?, let value?): return new.hasSameBytes(as: value)
            default: return false
            }
        }
    }
}
