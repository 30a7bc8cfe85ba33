import RelatePostgres

extension DatabaseContext {
    /// Walks the objects a request describes, `batchSize` at a time, in memory that does
    /// not grow with the table: after each batch, the objects nobody holds any longer (the
    /// batch's, and any the body loaded) are let go. An object the body keeps stays the one
    /// instance for its row; its loaded relationships are kept only where they are held
    /// too, and are otherwise loaded again when next touched.
    ///
    /// ```swift
    /// try context.fetch(FetchRequest("person", orderBy: [.ascending("id")]), batchSize: 1_000) { people in
    ///     try context.prefetch(["email"], for: people)
    ///     for person in people { … }
    /// }
    /// ```
    ///
    /// The rows come from a cursor (`DECLARE … CURSOR`, then `FETCH FORWARD n`), so the
    /// walk sees one snapshot and the body may use the context between batches. The first
    /// `FETCH` asks for one batch; later ones for as many whole batches as fit in about
    /// 4 MB of rows like the ones read so far (10,000 rows at most), handed out a batch at
    /// a time: fewer round trips and results, the same batches. A
    /// cursor lives in a transaction: the walk runs in one (a savepoint of the transaction
    /// already open), and what the body writes commits with it, or rolls back with it
    /// when the body or the walk throws. A walk of a table that others `INHERITS` from
    /// reads its own rows only, as ``FetchRequest/only`` does: walk each child on its own.
    ///
    /// - Parameters:
    ///   - request: The objects to walk, in the request's order (give one, or batches follow
    ///     no order).
    ///   - batchSize: How many objects each call of `body` gets (the last may get fewer); 1,000
    ///     by default.
    ///   - body: Called with each batch, in order.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest`` for a
    ///   batch size below 1, one of the request's own errors (an unknown key), the database's
    ///   error, or what `body` throws; the transaction of the walk is rolled back then.
    public func fetch(_ request: FetchRequest, batchSize: Int = 1_000, _ body: (_ batch: [DatabaseObject]) throws -> Void) throws {
        guard batchSize > 0 else {
            throw RelateError(kind: .invalidRequest, message: "a batch size of \(batchSize); give 1 or more", key: "batchSize")
        }
        // A walk's objects are the entity's own rows: those of tables that inherit from it
        // would come as objects of the wrong entity.
        let (entity, statement) = try request.selectStatement(layout, descendants: .excluded)
        cursorCount += 1
        let cursor = "relate_cursor_\(cursorCount)"
        try transaction {
            try send(Statements.declare(cursor, for: statement.statement), entity: entity)
            graph.registeredInBatch.append([])
            defer {
                discardSentAhead()
                var registered = graph.registeredInBatch.removeLast()
                graph.letGoOfUnheldObjects(&registered)
            }
            // Each FETCH is sent before the rows of the one before are handed out: the server
            // reads them while the body works (a statement of the body's waits for it first).
            var asked = batchSize
            try sendAhead(Statements.fetch(asked, from: cursor), entity: entity)
            // The cells of the batch before, once nothing holds them: the next batch's go there.
            var spare: ValueStorage?
            while true {
                let result = try resultSentAhead(entity: entity)
                let count = result.count
                let isLast = count < asked
                if !isLast {
                    asked = batchSize * Self.batchesPerFetch(batchSize: batchSize, rowBytes: result.estimatedRowBytes)
                    try sendAhead(Statements.fetch(asked, from: cursor), entity: entity)
                }
                for start in stride(from: 0, to: count, by: batchSize) {
                    var batch = try graph.materialize(
                        entity: entity, result: result, rows: start..<min(start + batchSize, count),
                        rowsAreDistinct: statement.rowsAreDistinct, isBatch: true, reusing: spare)
                    spare = nil
                    var storage = batch[0].storage
                    try body(batch)
                    batch = []
                    // Moved out first: the list must be the objects' only holder but the program.
                    var registered = graph.registeredInBatch[graph.registeredInBatch.count - 1]
                    graph.registeredInBatch[graph.registeredInBatch.count - 1] = []
                    graph.letGoOfUnheldObjects(&registered)
                    if isKnownUniquelyReferenced(&storage) { spare = storage }
                }
                if isLast { break }
            }
            try send(Statements.close(cursor), entity: entity)
        }
    }

    /// How many batches a `FETCH` asks for, rows of `rowBytes` each: a result of about
    /// 4 MB at most and 10,000 rows at most, one batch at least. One batch a `FETCH` cost a
    /// 5,000,000-row walk 1.45× raw single-row mode; ten, 1.17×.
    static func batchesPerFetch(batchSize: Int, rowBytes: Int) -> Int {
        let byRows = 10_000 / batchSize
        let byBytes = (4 << 20) / max(1, rowBytes * batchSize)
        return max(1, min(byRows, byBytes))
    }
}
