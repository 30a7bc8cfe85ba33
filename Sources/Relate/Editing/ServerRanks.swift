import Foundation
import RelatePostgres

/// Values that a read seeing pending changes compares in memory where Swift cannot compare
/// them as the server does, so the server ranks them: text under a collation other than
/// code points (`en-x-icu`, the database's default when it is not `C`, a nondeterministic
/// one), and values of types whose order, or equality, is the server's own (an interval,
/// where `1 mon` equals `30 days`; a range, `[1,5]` equal to `[1,6)`; `char(n)`, blind to
/// trailing blanks; `NaN` and infinities; a time, an address, an array).
///
/// A judgment runs once with the values it compares unranked (each such comparison
/// answers "the same", provisionally, and notes the values), then the server ranks every
/// value noted (``rank(in:entity:)``, one round trip for all), and the judgment runs again,
/// until no comparison meets a value without a rank. Ranks are `dense_rank()` under the
/// collation or the type's own order, so that values the server takes for equal rank the same.
final class ServerRanks {
    /// What a value is ranked among: text under a collation (a catalog name, quoted by the
    /// server), or values of a column's type (as the catalog prints it) under its collation.
    enum Domain: Hashable {
        case collation(String)
        /// A column's type by its OID (a domain's: its base's), under its collation.
        case type(UInt32, collation: String?)
    }

    /// A value ranked: its text, or its parameter as bound (type, form and bytes, so that
    /// `NaN` is one key).
    private enum Key: Hashable {
        case text(String)
        case bound(BoundParameters)
    }

    /// Per domain, each value's rank among the values noted for it.
    private var ranks: [Domain: [Key: Int]] = [:]
    /// Per domain, values compared that have no rank yet, with what a statement binds.
    private var unranked: [Domain: [Key: (any PostgresEncodable)?]] = [:]
    /// Per domain, the values ranked before, to rank with the new ones (ranks are relative).
    private var ranked: [Domain: [Key: (any PostgresEncodable)?]] = [:]
    /// Domains of a type with more values than one statement binds: judged by Swift's order.
    private var tooMany: Set<Domain> = []
    /// The most values of a type one ranking binds (a statement takes 65,535 parameters).
    static let mostValues = 30_000

    /// Whether a comparison met a value without a rank since the last ``rank(in:entity:)``.
    var hasUnranked: Bool { !unranked.isEmpty }

    /// How `x` and `y` compare under `collation`: by their ranks, or `.orderedSame` while
    /// one has none (noted, for the next ``rank(in:entity:)``).
    func order(_ x: String, _ y: String, by collation: String) -> ComparisonResult {
        if x.utf8.elementsEqual(y.utf8) { return .orderedSame }
        return order(.text(x), x, .text(y), y, in: .collation(collation))
    }

    /// Each boxed value met, with its key and parameter, made once (a judgment compares one
    /// value with many): held, so that its identity is not another's meanwhile.
    private var bound: [ObjectIdentifier: (box: AnyObject, key: Key, parameter: any PostgresEncodable)] = [:]

    /// How `x` and `y`, values of a column whose type's OID is `type`, compare as the server
    /// orders them, each bound as `parameter(x)` makes it (a text parameter is typed as the
    /// column's type, so the server reads it as one); `nil` when one cannot be bound
    /// (`parameter` answers `nil`).
    func order(
        _ x: StoredValue, _ y: StoredValue, type: UInt32, collation: String?, parameter: (StoredValue) -> (any PostgresEncodable)?
    ) -> ComparisonResult? {
        let domain = Domain.type(type, collation: collation)
        guard !tooMany.contains(domain), let (keyA, a) = keyed(x, type: type, parameter), let (keyB, b) = keyed(y, type: type, parameter) else {
            return nil
        }
        return order(keyA, a, keyB, b, in: domain)
    }

    /// `value`'s key and parameter, from ``bound`` for a boxed value met before.
    private func keyed(_ value: StoredValue, type: UInt32, _ parameter: (StoredValue) -> (any PostgresEncodable)?) -> (Key, any PostgresEncodable)? {
        if case .other(let box) = value, let known = bound[ObjectIdentifier(box)] { return (known.key, known.parameter) }
        guard var made = parameter(value) else { return nil }
        // A text (an enum array's literal, `char(n)`): typed as the column, as the server reads it.
        if let text = made as? String { made = ColumnTypedText(postgresValueType: PostgresType(rawValue: type), text: text) }
        guard let key = try? BoundParameters([made]) else { return nil }
        if case .other(let box) = value { bound[ObjectIdentifier(box)] = (box, .bound(key), made) }
        return (.bound(key), made)
    }

    private func order(_ x: Key, _ a: (any PostgresEncodable)?, _ y: Key, _ b: (any PostgresEncodable)?, in domain: Domain) -> ComparisonResult {
        if let table = ranks[domain], let i = table[x], let j = table[y] {
            return i < j ? .orderedAscending : i > j ? .orderedDescending : .orderedSame
        }
        for (key, value) in [(x, a), (y, b)] where ranks[domain]?[key] == nil { unranked[domain, default: [:]][key] = value }
        return .orderedSame
    }

    /// Has the server rank, in each domain with values unranked, those and the ones ranked
    /// before, in one round trip.
    func rank(in context: DatabaseContext, entity: Int) throws {
        let domains = Array(unranked.keys)
        var keys: [[Key]] = []
        var statements: [Statement] = []
        for domain in domains {
            let values = ranked[domain, default: [:]].merging(unranked[domain, default: [:]]) { old, _ in old }
            if case .type = domain, values.count > Self.mostValues {
                tooMany.insert(domain)
                continue
            }
            let order = Array(values.keys)
            keys.append(order)
            switch domain {
            case .collation(let collation):
                let strings = order.map { if case .text(let text) = $0 { text } else { "" } }
                // The collation is the catalog's, quoted by the server (`format('%I.%I')`).
                statements.append(Statement(
                    sql: "SELECT dense_rank() OVER (ORDER BY s COLLATE \(collation))::int8, n::int8 FROM unnest($1::text[]) WITH ORDINALITY AS u(s, n)",
                    parameters: [strings]))
            case .type(_, let collation):
                // Each value bound as its column's type (no name to write: the column's type
                // may be off the search path), so the rows are of that type.
                let rows = order.indices.map { "(\($0 + 1), $\($0 + 1))" }.joined(separator: ", ")
                let collated = collation.map { " COLLATE \($0)" } ?? ""
                statements.append(Statement(
                    sql: "SELECT dense_rank() OVER (ORDER BY v\(collated))::int8, n::int8 FROM (VALUES \(rows)) AS u(n, v)",
                    parameters: order.map { values[$0]! }))
            }
            ranked[domain] = values
        }
        let ranking = domains.filter { !tooMany.contains($0) }
        unranked = [:]
        guard !statements.isEmpty else { return }
        let results = statements.count == 1 ? [try context.send(statements[0], entity: entity)] : try context.send(statements, entity: entity)
        for ((domain, order), result) in zip(zip(ranking, keys), results) {
            var table: [Key: Int] = [:]
            for row in 0..<result.count {
                table[order[try result[row].decode(Int.self, at: 1) - 1]] = try result[row].decode(Int.self, at: 0)
            }
            ranks[domain] = table
        }
    }
}

/// A text parameter typed as a column's type (by its OID), which the server reads as one.
private struct ColumnTypedText: PostgresEncodable {
    static var postgresType: PostgresType { .unspecified }
    static var postgresFormat: PostgresFormat { .text }
    let postgresValueType: PostgresType
    let text: String

    func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard !text.utf8.contains(0) else { throw PostgresEncodingError("a text holds a NUL byte, which PostgreSQL text cannot store") }
        buffer.append(contentsOf: text.utf8)
    }
}
