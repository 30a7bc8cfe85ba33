import Foundation
import RelatePostgres

/// Text that a read seeing pending changes compares in memory under a collation other than
/// code points (`en-x-icu`, the database's default when it is not `C`, a nondeterministic
/// one): Swift cannot order it as the server does, so the server ranks it.
///
/// A judgment runs once with the strings it compares unranked (each such comparison
/// answers "the same", provisionally, and notes the strings), then the server ranks every
/// string noted (``rank(in:entity:)``, one round trip for all collations), and the judgment
/// runs again, until no comparison meets a string without a rank. Ranks are `dense_rank()`
/// under the collation, so that text equal under a nondeterministic collation ranks the same.
final class CollatedText {
    /// Per collation, each string's rank among the strings noted for it.
    private var ranks: [String: [String: Int]] = [:]
    /// Per collation, strings compared that have no rank yet.
    private var unranked: [String: Set<String>] = [:]

    /// Whether a comparison met a string without a rank since the last ``rank(in:entity:)``.
    var hasUnranked: Bool { !unranked.isEmpty }

    /// How `x` and `y` compare under `collation`: by their ranks, or `.orderedSame` while
    /// one has none (noted, for the next ``rank(in:entity:)``).
    func order(_ x: String, _ y: String, by collation: String) -> ComparisonResult {
        if x.utf8.elementsEqual(y.utf8) { return .orderedSame }
        if let table = ranks[collation], let a = table[x], let b = table[y] {
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
        for text in [x, y] where ranks[collation]?[text] == nil { unranked[collation, default: []].insert(text) }
        return .orderedSame
    }

    /// Has the server rank, under each collation with strings unranked, those and the ones
    /// ranked before (ranks are relative), in one round trip.
    func rank(in context: DatabaseContext, entity: Int) throws {
        let collations = unranked.keys.sorted()
        let statements = collations.map { collation in
            let strings = Array(ranks[collation, default: [:]].keys) + unranked[collation, default: []]
            // The collation is the catalog's, quoted by the server (`format('%I.%I')`).
            return Statement(
                sql: "SELECT s, dense_rank() OVER (ORDER BY s COLLATE \(collation))::int8 FROM unnest($1::text[]) AS s",
                parameters: [strings])
        }
        let results = statements.count == 1 ? [try context.send(statements[0], entity: entity)] : try context.send(statements, entity: entity)
        for (collation, result) in zip(collations, results) {
            var table: [String: Int] = [:]
            for row in 0..<result.count {
                table[try result[row].decode(String.self, at: 0)] = try result[row].decode(Int.self, at: 1)
            }
            ranks[collation] = table
        }
        unranked = [:]
    }
}
