import CLibPQRaw
import Foundation
import Relate
import RelatePostgres

// MARK: - save() of 1,000 changed objects (issue 36)

extension ObjectFixture {
    package static let saveSchema = "bench_save"
    /// Rows changed per side and run.
    package static let savedRows = 1_000
    /// The raw side's one statement: every row's new name by key, as arrays.
    package static let updateNamesUnnest =
        "UPDATE bench_save.person AS t SET name = v.name FROM unnest($1::int4[], $2::text[]) AS v(id, name) WHERE t.id = v.id"

    /// `person (id, name, score)`: rows 1…1,000 are Relate's, 1,001…2,000 the raw side's,
    /// so that neither side changes a row the other's memory holds.
    package static func prepareSave() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_save;
                CREATE TABLE IF NOT EXISTS bench_save.person (id int4 PRIMARY KEY, name text NOT NULL, score int4 NOT NULL)
                """,
            counts: [("bench_save.person", 2 * savedRows)],
            fill: """
                TRUNCATE bench_save.person;
                INSERT INTO bench_save.person SELECT g, 'person ' || g, g FROM generate_series(1, \(2 * savedRows)) g
                """)
    }
}

/// Benchmarks "paired save 1000" and "paired edit and save 1000": a context that does not
/// autocommit holds 1,000 objects. Each run gives every one a new name (1,000 `setValue`s,
/// each an undo step, made before the measurement in the first, measured in the second)
/// and saves: one batched `UPDATE … FROM (SELECT unnest($1) …)` with the conflict check,
/// in one transaction (`person` stores what is sent, so nothing is read back). The raw side
/// sends the same new names for its own 1,000 rows in the common form, one `UPDATE … FROM
/// unnest($1::int4[], $2::text[])`, in binary, without reading anything back.
package final class SaveState {
    package let context: DatabaseContext
    package let raw: RawConnection
    private let objects: [DatabaseObject]
    private var run = 0

    package init() throws {
        context = try DatabaseContext(connection: try ObjectFixture.prepareSave(), schemas: [ObjectFixture.saveSchema])
        context.autocommits = false
        objects = try context.fetch(FetchRequest("person", where: Key("id") <= ObjectFixture.savedRows, orderBy: [.ascending("id")]))
        raw = try RawConnection(url: try Fixture.url())
        guard objects.count == ObjectFixture.savedRows else {
            throw ObjectFixture.Failure(description: "save: \(objects.count) objects, expected \(ObjectFixture.savedRows)")
        }
    }

    /// The edits a save sends: each object a new name, unless they are pending already
    /// (the benchmark prepares before each side, the raw side's included).
    package func edit() throws {
        guard !context.hasChanges else { return }
        run += 1
        for (index, object) in objects.enumerated() { try object.setValue("p\(index) run \(run)", forKey: "name") }
    }

    /// Relate's side: one `save()` of the edits made.
    package func save() throws -> Int {
        try context.save()
        return objects.count
    }

    /// Relate's side with the edits measured too: 1,000 changes, one `save()`.
    package func editAndSave() throws -> Int {
        try edit()
        return try save()
    }

    /// The raw side: the same 1,000 new names, one statement.
    package func rawSave() throws -> Int {
        run += 1
        let ids = Array(ObjectFixture.savedRows + 1...2 * ObjectFixture.savedRows)
        let names = ids.indices.map { "p\($0) run \(run)" }
        return try raw.updateNames(ids: ids, names: names)
    }
}

extension RawConnection {
    /// `UPDATE … FROM unnest($1::int4[], $2::text[])`, both arrays in binary; answers the rows changed.
    package func updateNames(ids: [Int], names: [String]) throws -> Int {
        let keys = Self.int4Array(ids)
        var text: [UInt8] = []
        func put(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { text.append(contentsOf: $0) } }
        put(1); put(0); put(25); put(Int32(names.count)); put(1)
        for name in names {
            let bytes = Array(name.utf8)
            put(Int32(bytes.count))
            text += bytes
        }
        let types: [Oid] = [1007, 1009]
        let lengths: [Int32] = [Int32(keys.count), Int32(text.count)]
        let formats: [Int32] = [1, 1]
        let result = keys.withUnsafeBytes { keys in
            text.withUnsafeBytes { text in
                let values: [UnsafePointer<CChar>?] = [
                    keys.baseAddress!.assumingMemoryBound(to: CChar.self), text.baseAddress!.assumingMemoryBound(to: CChar.self),
                ]
                return PQexecParams(handle, ObjectFixture.updateNamesUnnest, 2, types, values, lengths, formats, 1)
            }
        }
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw Failure(description: String(cString: PQerrorMessage(handle)))
        }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }
}
