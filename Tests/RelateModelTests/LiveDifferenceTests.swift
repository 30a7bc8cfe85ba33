import Foundation
import Testing

@testable import Relate

/// What a live snapshot's difference says between two answers (`ObservationHub.difference`).
/// No server.
@Suite struct LiveDifferenceTests {
    /// A row of key `id` whose one cell is `value`.
    static func row(_ id: Int?, _ value: String) -> LiveRow {
        let key = id.map { StoredValue.integer($0) } ?? .null
        return LiveRow(
            primaryKey: [id], values: ["id": id as (any Sendable)?, "v": value].compactMapValues { $0 }, cells: [key, .string(value)],
            identity: id.map { ObjectKey.integer($0) })
    }

    @Test func changedRowsAreNamedByTheirIndexAfter() {
        let before = [Self.row(1, "a"), Self.row(2, "b"), Self.row(3, "c")]
        // The same rows, the second changed: nothing moves, one is updated.
        let changed = ObservationHub.difference(from: before, to: [Self.row(1, "a"), Self.row(2, "B"), Self.row(3, "c")])
        #expect(changed.inserted.isEmpty && changed.removed.isEmpty && changed.moved.isEmpty)
        #expect(changed.updated.map(\.index) == [1] && changed.updated.first?.primaryKey.first as? Int == 2)
        // The same answer: nothing at all.
        #expect(ObservationHub.difference(from: before, to: before).isEmpty)
        // The third changed and went first, a fourth joined: the third is moved and updated, at its index after.
        let moved = ObservationHub.difference(from: before, to: [Self.row(3, "C"), Self.row(1, "a"), Self.row(2, "b"), Self.row(4, "d")])
        #expect(moved.inserted.map(\.index) == [3])
        #expect(moved.updated.map(\.index) == [0] && moved.updated.first?.primaryKey.first as? Int == 3)
        #expect(!moved.moved.isEmpty)
        // Rows without a key are the ones at their index.
        let keyless = ObservationHub.difference(from: [Self.row(nil, "x"), Self.row(nil, "y")], to: [Self.row(nil, "x"), Self.row(nil, "z")])
        #expect(keyless.updated.map(\.index) == [1])
    }
}
