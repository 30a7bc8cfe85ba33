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

    /// Between random answers (rows left, joined, reordered; a seeded generator), the
    /// difference applied as its documentation says gives the new answer, and it moves no
    /// more rows than the two answers' longest common run in order leaves out.
    @Test func anyTwoAnswersDifferByWhatTheDifferenceSays() {
        var generator = SplitMix64(state: 37)
        for _ in 0..<2_000 {
            let old = Array((0..<Int.random(in: 0...12, using: &generator)).shuffled(using: &generator))
            var new = old.filter { _ in Int.random(in: 0..<4, using: &generator) > 0 } + (100..<100 + Int.random(in: 0...4, using: &generator))
            new.shuffle(using: &generator)
            if Bool.random(using: &generator) { new.sort() }
            let difference = ObservationHub.difference(from: old.map { Self.row($0, "v") }, to: new.map { Self.row($0, "v") })
            // Removed, then put in by increasing index.
            var rows = old
            let out = Set(difference.removed.map(\.index) + difference.moved.map(\.from))
            rows = rows.enumerated().filter { !out.contains($0.offset) }.map(\.element)
            let into = (difference.inserted.map { ($0.index, $0.primaryKey) } + difference.moved.map { ($0.to, $0.primaryKey) }).sorted { $0.0 < $1.0 }
            for (index, key) in into { rows.insert(key.first as! Int, at: index) }
            #expect(rows == new, "\(old) to \(new)")
            #expect(difference.removed.map { old[$0.index] } == old.filter { !new.contains($0) })
            #expect(difference.inserted.map { new[$0.index] } == new.filter { !old.contains($0) })
            let kept = new.filter(old.contains)
            #expect(difference.moved.count == kept.count - Self.longestRun(old.filter(new.contains), kept), "\(old) to \(new)")
        }
    }

    /// The length of the longest common subsequence of `a` and `b` (dynamic programming).
    static func longestRun(_ a: [Int], _ b: [Int]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in a.indices {
            for j in b.indices { table[i + 1][j + 1] = a[i] == b[j] ? table[i][j] + 1 : max(table[i][j + 1], table[i + 1][j]) }
        }
        return table[a.count][b.count]
    }
}
