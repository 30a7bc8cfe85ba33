import RelatePostgres
import Testing

@testable import Relate

/// What principals were found to see of a row, a bit each, and when an update whose
/// changed columns the feed did not say keeps it (``RowSight/keeps(_:columns:)``).
@Suite struct RowSightTests {
    @Test func aPrincipalIsAskedSeenOrHidden() {
        var sight = RowSight()
        #expect(sight.sees(0) == nil && sight.sees(130) == nil)
        sight.set(130, sees: true)
        sight.set(3, sees: false)
        #expect(sight.sees(130) == true && sight.sees(3) == false && sight.sees(4) == nil)
        sight.set(130, sees: false)
        #expect(sight.sees(130) == false)
    }

    /// Kept only when the policies' columns hold what a sweep found, and that sweep ran
    /// before the update's commit: a sweep that saw the update may have found the row after
    /// it, and then a row moved into a tenant compares equal.
    @Test func anUpdateKeepsWhatASweepBeforeItFound() {
        var sight = RowSight()
        sight.set(0, sees: false)
        sight.values = (["7", nil], LSN(rawValue: 1_000))
        let columns = ["tenant", "owner"]
        func after(_ values: [String: String?], committed: UInt64) -> RowAfter {
            RowAfter(values: values, committed: LSN(rawValue: committed))
        }
        #expect(sight.keeps(after(["tenant": "7", "owner": String?.none, "title": "x"], committed: 1_001), columns: columns))
        // The sweep may have seen it: its commit ended at or before the position it read.
        #expect(!sight.keeps(after(["tenant": "7", "owner": String?.none], committed: 1_000), columns: columns))
        #expect(!sight.keeps(after(["tenant": "7", "owner": String?.none], committed: 999), columns: columns))
        // A value changed, or set where it was NULL, or not sent (TOASTed and unchanged).
        #expect(!sight.keeps(after(["tenant": "8", "owner": String?.none], committed: 1_001), columns: columns))
        #expect(!sight.keeps(after(["tenant": "7", "owner": "u1"], committed: 1_001), columns: columns))
        #expect(!sight.keeps(after(["tenant": "7"], committed: 1_001), columns: columns))
        // By bytes: a composed and a decomposed "é" are two values to the server.
        sight.values = (["\u{E9}", nil], LSN(rawValue: 1_000))
        #expect(!sight.keeps(after(["tenant": "e\u{301}", "owner": String?.none], committed: 1_001), columns: columns))
        // No values found, or none asked for.
        sight.values = nil
        #expect(!sight.keeps(after(["tenant": "7", "owner": String?.none], committed: 1_001), columns: columns))
        #expect(!RowSight().keeps(after([:], committed: 1_001), columns: []))
    }
}
