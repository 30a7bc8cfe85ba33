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

    /// Each key's item set to `hits = stamp + id` by key, without reading it first
    /// (`context.update(_:primaryKey:values:)`): one `UPDATE … RETURNING` a key, whose row
    /// becomes the object. Answers the number of items written.
    @inline(never)
    package static func updateHits(_ context: DatabaseContext, keys: [Int], stamp: Int) throws -> Int {
        context.reset()
        for key in keys {
            guard try context.update("item", primaryKey: key, values: ["hits": stamp + key]) != nil else {
                throw ObjectFixture.Failure(description: "no item \(key)")
            }
        }
        return keys.count
    }
}
