import Relate

/// The writes by the thousand through Relate (issue 38), as a user writes them with one
/// context kept across runs. The rows a user holds as Swift values become the dictionaries
/// the API takes inside the measurement: that is part of the user's work.
package enum SetWrites {
    /// The readings as rows by key.
    static func rows(_ readings: [Reading]) -> [[String: Any?]] {
        readings.map { ["id": $0.id, "name": $0.name, "amount": $0.amount, "active": $0.active, "created": $0.created] }
    }

    /// `context.copy(into:rows:)`: binary `COPY`, no object made. Answers the rows copied.
    @inline(never)
    package static func copy(_ context: DatabaseContext, _ readings: [Reading]) throws -> Int {
        try context.copy(into: "reading", rows: rows(readings))
    }

    /// `context.copy(into:columns:rows:)`: the same rows by position and typed, no
    /// dictionary a row. Answers the rows copied.
    @inline(never)
    package static func copyByPosition(_ context: DatabaseContext, _ readings: [Reading]) throws -> Int {
        try context.copy(into: "reading", columns: ["id", "name", "amount", "active", "created"]) { rows in
            for reading in readings { try rows.append(reading.id, reading.name, reading.amount, reading.active, reading.created) }
        }
    }

    /// `context.insert(_:rows:)`: one `INSERT … SELECT * FROM unnest(…) RETURNING`, one
    /// object per row. Answers the objects made.
    @inline(never)
    package static func insert(_ context: DatabaseContext, _ readings: [Reading]) throws -> Int {
        try context.insert("reading", rows: rows(readings)).count
    }

    /// `context.update(_:where:values:)` after `reset()` (memory holds nothing of the
    /// accounts, as in a batch job): one `UPDATE … WHERE`, nothing read back.
    @inline(never)
    package static func updateStamp(_ context: DatabaseContext, stamp: Int) throws -> Int {
        context.reset()
        return try context.update("account", where: Key("id") <= WriteFixture.updatedRows, values: ["stamp": stamp])
    }

    /// The same update with the 10,000 accounts in memory: `RETURNING` their rows, which
    /// the objects take.
    @inline(never)
    package static func updateStampLoaded(_ context: DatabaseContext, stamp: Int) throws -> Int {
        try context.update("account", where: Key("id") <= WriteFixture.updatedRows, values: ["stamp": stamp])
    }

    /// `context.delete(_:where:)` after `reset()`: one `DELETE … WHERE`, the server
    /// cascading to the children.
    @inline(never)
    package static func deleteParents(_ context: DatabaseContext) throws -> Int {
        context.reset()
        return try context.delete("parent", where: Key("id") <= WriteFixture.deletedParents)
    }
}
