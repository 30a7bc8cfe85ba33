import Relate

/// The by-key tasks through Relate's objects, as a user writes them with one context kept
/// across runs: `reset()` at the start of each run, so that every object is read anew.
package enum ObjectsByKey {
    /// Each key's row of `bench_fetch.rows` as an object (one query each), every attribute
    /// read with `value(forKey:as:)`.
    @inline(never)
    package static func rows(_ context: DatabaseContext, keys: [Int]) throws -> [FetchedRow] {
        context.reset()
        var rows: [FetchedRow] = []
        rows.reserveCapacity(keys.count)
        for key in keys {
            guard let object = try context.object("rows", primaryKey: key) else {
                throw ObjectFixture.Failure(description: "no row \(key)")
            }
            rows.append(try fetchedRow(object))
        }
        return rows
    }

    /// Each key's item set to `hits = stamp + id`: the object by key (a query), then
    /// `setValue` (an `UPDATE … RETURNING`). Two round trips a key, as the object has to be
    /// in memory before it can be written. Answers the number of items written.
    @inline(never)
    package static func updateHits(_ context: DatabaseContext, keys: [Int], stamp: Int) throws -> Int {
        context.reset()
        for key in keys {
            guard let item = try context.object("item", primaryKey: key) else {
                throw ObjectFixture.Failure(description: "no item \(key)")
            }
            try item.setValue(stamp + key, forKey: "hits")
        }
        return keys.count
    }
}
