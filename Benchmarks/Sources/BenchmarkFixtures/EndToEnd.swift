import Relate

/// The object tasks as a user writes them, timed from the first call to the last value
/// read (issue 15, item 3): with one context kept across runs and `reset()` at the start of
/// each run, with a new `DatabaseContext(url:)` per unit of work (connection, catalog and
/// objects freed at its end), and with a unit of work of a shared `Database`.
package enum EndToEnd {
    // MARK: - 100,000 rows, every attribute read

    /// One context kept across runs: `reset()`, then the rows, read with `value(forKey:as:)`.
    @inline(never)
    package static func fetchAfterReset(_ context: DatabaseContext) throws -> [FetchedRow] {
        context.reset()
        return try fetchedRows(try context.fetch("rows"), fetchedRow)
    }

    /// The same, every attribute read as `value(forKey:) as? T`.
    @inline(never)
    package static func fetchAfterResetCastingAny(_ context: DatabaseContext) throws -> [FetchedRow] {
        context.reset()
        return try fetchedRows(try context.fetch("rows"), fetchedRowCastingAny)
    }

    /// A new context per run: connection, catalog of `bench_fetch`, the rows; all freed on return.
    @inline(never)
    package static func fetchWithNewContext(url: String) throws -> [FetchedRow] {
        let context = try DatabaseContext(url: url, schemas: [Fixture.schema])
        return try fetchedRows(try context.fetch("rows"), fetchedRow)
    }

    /// A unit of work of the shared `database`: a pooled connection, a context from the
    /// model, the rows.
    package static func fetchInUnitOfWork(_ database: Database) async throws -> [FetchedRow] {
        try await database.read { context in try fetchedRows(try context.fetch("rows"), fetchedRow) }
    }

    // MARK: - 1,000 parents, their children counted

    /// One context kept across runs: `reset()`, the parents, `prefetch(["child"])`, each
    /// parent's `child` set counted.
    @inline(never)
    package static func childCountsAfterReset(_ context: DatabaseContext) throws -> [Int] {
        context.reset()
        return try childCounts(context)
    }

    /// A new context per run over `bench_prefetch`, freed on return.
    @inline(never)
    package static func childCountsWithNewContext(url: String) throws -> [Int] {
        let context = try DatabaseContext(url: url, schemas: [ObjectFixture.prefetchSchema])
        return try childCounts(context)
    }

    /// A unit of work of the shared `database`.
    package static func childCountsInUnitOfWork(_ database: Database) async throws -> [Int] {
        try await database.read { context in try childCounts(context) }
    }

    @inline(__always)
    static func childCounts(_ context: DatabaseContext) throws -> [Int] {
        let parents = try context.fetch("parent")
        try context.prefetch(["child"], for: parents)
        var counts: [Int] = []
        counts.reserveCapacity(parents.count)
        for parent in parents {
            counts.append(try parent.objects(forKey: "child").count)
        }
        return counts
    }
}
