/// One row of a live query's answer, as values that may leave a unit of work.
public struct LiveRow: Sendable {
    /// The row's primary key values, in key order (empty for a table without one).
    public var primaryKey: [(any Sendable)?]
    /// The row's attributes by key; a NULL column is absent.
    public var values: [String: any Sendable]
    /// The row's cells as the object layer stores them: what tells two answers apart
    /// cheaply (comparing `values` would print each value to text).
    var cells: [StoredValue]
    /// The row's identity, as the identity map keys it (`nil` without a key): what tells
    /// rows apart cheaply (hashing `primaryKey` would cast every value).
    var identity: ObjectKey?
}

extension LiveRow {
    /// The row of `object`, as values that may leave its unit of work.
    init(_ object: DatabaseObject) {
        self.init(cells: Array(object.values), identity: object.objectKey, entity: object.table.layout)
    }

    /// The row of `cells`, `entity`'s attributes in order: its key and its ``values`` made
    /// from them.
    private init(cells: [StoredValue], identity: ObjectKey?, entity: EntityLayout) {
        var values: [String: any Sendable] = [:]
        for (index, key) in entity.attributeKeys.enumerated() { if let value = cells[index].value { values[key] = value } }
        self.init(primaryKey: entity.primaryKey.map { cells[$0].value }, values: values, cells: cells, identity: identity)
    }

    /// Whether `other` holds the same values, cell by cell.
    func hasSameValues(as other: LiveRow) -> Bool {
        Self.same(cells, other.cells)
    }

    /// A row a read kept from the answer before (``rows(of:entity:reusing:)``) shares its
    /// cells' storage with it: told the same without comparing them again.
    private static func same(_ cells: [StoredValue], _ others: [StoredValue]) -> Bool {
        guard cells.count == others.count else { return false }
        let shared = cells.withUnsafeBufferPointer { cells in others.withUnsafeBufferPointer { cells.baseAddress == $0.baseAddress } }
        return shared || zip(cells, others).allSatisfy { $0.isSame(as: $1) }
    }

    /// The rows of a live read's result (its first columns `entity`'s attributes), read into
    /// cells straight: an answer is values that leave its unit of work, so it makes no
    /// object, identity map or context (they were a sixth of a live read's time). A row of
    /// `earlier`, the answer before, whose identity and cells come again is taken as it is,
    /// its ``values`` not made again: an answer read again after a commit mostly differs by
    /// one row, if any.
    ///
    /// - Throws: A `PostgresDecodingError` for a cell its column's type cannot be read as,
    ///   or a ``RelateError`` for a result not of the entity's columns or of more cells than
    ///   one fetch holds.
    static func rows(of result: PostgresResult, entity: EntityLayout, reusing earlier: [LiveRow]) throws -> [LiveRow] {
        let width = entity.columns.count
        guard result.columns.count >= width else {
            throw RelateError(kind: .database, message: "a live read answered \(result.columns.count) columns for \(width) attributes", entity: entity.entity.name)
        }
        guard result.count <= ObjectGraph.maximumCells / Swift.max(width, 1) else {
            throw RelateError(
                kind: .invalidRequest, message: "\(result.count) rows of \(width) columns are more than one answer holds (\(ObjectGraph.maximumCells) values)",
                entity: entity.entity.name)
        }
        let readers = StoredValue.Reader.readers(for: result, entity: entity.entity)
        var before = EarlierAnswer(earlier)
        var rows: [LiveRow] = []
        rows.reserveCapacity(result.count)
        for row in 0..<result.count {
            var cells: [StoredValue] = []
            cells.reserveCapacity(width)
            for column in 0..<width { cells.append(try readers[column].readDirect(result, row: row, column: column)) }
            let identity = entity.primaryKey.isEmpty ? nil : ObjectKey(cells, at: entity.primaryKey)
            if let position = before.position(of: identity, at: row), same(cells, earlier[position].cells) {
                rows.append(earlier[position])
            } else {
                rows.append(LiveRow(cells: cells, identity: identity, entity: entity))
            }
        }
        return rows
    }
}

/// Where each row of an answer was in the answer before: the row of its identity (a row
/// without one: the row at its index), looked for where it stands first, and in a dictionary
/// made only when a row is not there (most answers read again keep their rows in place).
struct EarlierAnswer {
    private let rows: [LiveRow]
    private var positions: [ObjectKey: Int]?

    init(_ rows: [LiveRow]) {
        self.rows = rows
    }

    /// The position before of the row of `identity` now at `index`; `nil` for a row that was
    /// not there.
    mutating func position(of identity: ObjectKey?, at index: Int) -> Int? {
        if index < rows.count, rows[index].identity == identity { return index }
        guard let identity else { return nil }
        if positions == nil {
            positions = Dictionary(rows.indices.compactMap { i in rows[i].identity.map { ($0, i) } }, uniquingKeysWith: { first, _ in first })
        }
        return positions?[identity]
    }
}

/// A live query's answer at one moment, as ``Database/observe(_:)`` streams it.
public struct LiveSnapshot: Sendable {
    /// The request's rows, in its order.
    public var rows: [LiveRow]
    /// How the answer before became this one; for the first snapshot a subscriber gets,
    /// every row is inserted.
    public var difference: LiveResults.Difference
    /// Counts the answers of this request since it was first observed. A consumer that
    /// fell behind sees a gap (the stream keeps only the newest snapshot): its `difference`
    /// then follows an answer the consumer never saw, and `rows` is what to show.
    public var version: Int
}

extension Database {
    /// The request's answer now and after every commit that changes it, as an
    /// `AsyncThrowingStream` of ``LiveSnapshot``s: for a server that pushes a list to its
    /// clients (server-sent events, WebSocket).
    ///
    /// ```swift
    /// for try await snapshot in try await database.observe(FetchRequest("person", orderBy: [.ascending("surname")])) {
    ///     push(snapshot.rows, snapshot.difference)
    /// }
    /// ```
    ///
    /// One change feed per `Database` serves every observer (``changes(using:)``, which
    /// needs `relate enable`); identical requests are read once per change for all their
    /// observers; a commit outside the request's region (the tables its condition, joins
    /// and sort order read) sends no query, and commits that arrive while the answer is
    /// being read are answered together by the next read. A request whose condition and
    /// order read its entity's own columns only (no offset, a one-column key) is read again
    /// only when a changed row is in its answer or meets its condition now: one statement
    /// per entity and batch of commits tests the changed rows against all such requests. The stream keeps only the newest
    /// snapshot: a slow consumer never holds the feed up, and skips to the newest answer
    /// (see ``LiveSnapshot/version``). It ends when the consumer stops iterating, and throws
    /// when the feed fails (a table's definition changed: reload the model) or the answer
    /// cannot be read. A shutdown (``run()``) or ``close()`` ends it without an error.
    ///
    /// - Parameter request: what to observe.
    /// - Returns: the stream; its first element is the answer now.
    /// - Throws: ``RelateError`` when change tracking is not enabled, or the request names
    ///   an unknown entity or key.
    public func observe(_ request: FetchRequest) async throws -> AsyncThrowingStream<LiveSnapshot, any Error> {
        try await observation.subscribe(to: request, as: nil, on: self)
    }

    /// ``observe(_:)`` as `principal`, for row-level security: the answer is read as the
    /// principal (its role and settings, in a read-only transaction), now and after every
    /// commit that may change it. Observers share a read only when request, bound values,
    /// role and settings are all equal.
    ///
    /// ```swift
    /// let tenant = Principal(role: "app_user", settings: ["app.tenant": "42"])
    /// for try await snapshot in try await database.observe(FetchRequest("document"), as: tenant) {
    ///     push(snapshot.rows)
    /// }
    /// ```
    ///
    /// No value the change feed carries reaches the stream: every snapshot is what a read
    /// as the principal answered, so a row leaves a stream only when it was in that stream's
    /// answer. Which answers to read again is decided as the principal too, and a change to
    /// a table a policy reads, or to the policies, privileges or row-level security of the
    /// tables read, or to role memberships, reads the affected answers again (see
    /// <doc:RowLevelSecurity>). An error reading as one principal (a setting a policy cannot
    /// cast) ends the streams of that request and principal only.
    ///
    /// - Parameters:
    ///   - request: What to observe.
    ///   - principal: Who the answer is read as.
    /// - Returns: The stream; its first element is the answer now.
    /// - Throws: ``RelateError`` when change tracking is not enabled, the request names an
    ///   unknown entity or key, or the principal cannot be taken (the first read fails closed).
    public func observe(_ request: FetchRequest, as principal: Principal) async throws -> AsyncThrowingStream<LiveSnapshot, any Error> {
        try await observation.subscribe(to: request, as: principal, on: self)
    }

    /// The rows of `request`, read on the primary as `principal` (`nil`: the pool's role), as
    /// values: the way every later read of its group reads them (``liveRows(of:reusing:confirming:)``).
    func liveRows(_ request: FetchRequest, as principal: Principal? = nil) async throws -> [LiveRow] {
        try await liveRows(of: [LiveRead(request: request, principal: principal)])[0].get()
    }

}
