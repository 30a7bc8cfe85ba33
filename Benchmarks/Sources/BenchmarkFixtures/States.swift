import CLibPQRaw
import Foundation
import Relate
import RelatePostgres

#if os(Linux)
/// glibc's `malloc_trim` (from <malloc.h>, which the Glibc module leaves out).
@_silgen_name("malloc_trim")
package func malloc_trim(_ pad: Int) -> Int32
#endif

/// What a benchmark's setup leaves for its measured part. Each benchmark runs in a process
/// of its own, so each has its own connections.
package final class State {
    package let connection: Connection
    package let raw: RawConnection
    /// For the decode-only benchmark: the rows fetched once, outside the measurement.
    package var prefetched: PostgresResult?
    package var rawPrefetched: OpaquePointer?

    package init(prefetch: Bool) throws {
        connection = try Fixture.prepare()
        raw = try RawConnection(url: try Fixture.url())
        try Fixture.check(connection: connection, raw: raw)
        if prefetch {
            prefetched = try connection.query(Fixture.select, format: .binary)
            rawPrefetched = try raw.execute()
        }
        #if os(Linux)
        // The check above held 200,000 rows; give that memory back so it does not count
        // in the measured part's resident peak.
        _ = malloc_trim(0)
        #endif
    }

    deinit {
        if let rawPrefetched { PQclearRaw(rawPrefetched) }
    }
}

/// The object benchmarks' fixtures: a context over the benchmark's schema and a raw
/// connection, both sides' answers compared once, outside the measurement.
package final class ObjectsState {
    package let context: DatabaseContext
    package let raw: RawConnection

    /// Benchmark 1: `bench_fetch.rows` as objects.
    package static func fetch() throws -> ObjectsState {
        let state = try ObjectsState(connection: try Fixture.prepare(), schema: Fixture.schema)
        let objects = try fetchAsObjects(state.context).sorted { $0.i < $1.i }
        let raw = try state.raw.fetch().sorted { $0.i < $1.i }
        guard objects.count == Fixture.rowCount, objects == raw else {
            throw ObjectFixture.Failure(description: "objects and raw libpq disagree: \(objects.count) vs \(raw.count) rows")
        }
        trim()
        return state
    }

    /// Benchmark 2: 1,000 parents and their children.
    package static func prefetch() throws -> ObjectsState {
        let state = try ObjectsState(connection: try ObjectFixture.preparePrefetch(), schema: ObjectFixture.prefetchSchema)
        let withPrefetch = try childCountsAsObjects(state.context, prefetch: true)
        let without = try childCountsAsObjects(state.context, prefetch: false)
        let raw = try state.raw.childCounts()
        guard withPrefetch.count == ObjectFixture.parentCount, withPrefetch == raw, without == raw,
              raw.allSatisfy({ $0 == ObjectFixture.childrenPerParent })
        else {
            throw ObjectFixture.Failure(description: "objects and raw libpq disagree on the children's counts")
        }
        return state
    }

    package init(connection: Connection, schema: String) throws {
        context = try DatabaseContext(connection: connection, schemas: [schema])
        raw = try RawConnection(url: try Fixture.url())
    }

    package static func trim() {
        #if os(Linux)
        _ = malloc_trim(0)
        #endif
    }
}

/// Benchmark 3's fixture: the objects, the raw connection and the targets' keys.
package final class ManyToManyState {
    package let objects: ManyToManyObjects
    package let raw: RawConnection
    package let targetIDs: [Int]

    package init() throws {
        objects = try ManyToManyObjects(connection: try ObjectFixture.prepareManyToMany())
        raw = try RawConnection(url: try Fixture.url())
        targetIDs = try objects.targets.map { object in
            guard let id = try object.value(forKey: "id") as? Int else { throw ObjectFixture.Failure(description: "target without id") }
            return id
        }
        // Both sides insert the same 10,000 rows.
        try reset()
        let viaObjects = try objects.replace()
        let viaObjectsRows = try objects.context.connection.query("SELECT count(*) FROM bench_m2m.owner_target")[0].decode(Int.self, at: 0)
        try reset()
        let viaRaw = try raw.insertPairs(owner: ObjectFixture.ownerID, targets: targetIDs)
        let viaRawRows = try objects.context.connection.query("SELECT count(*) FROM bench_m2m.owner_target")[0].decode(Int.self, at: 0)
        guard [viaObjects, viaObjectsRows, viaRaw, viaRawRows].allSatisfy({ $0 == ObjectFixture.targetCount }) else {
            throw ObjectFixture.Failure(description: "many-to-many: \(viaObjects) members, \(viaObjectsRows) rows via objects; \(viaRaw) inserted, \(viaRawRows) rows raw")
        }
    }

    /// Before each side: an empty helper table, fresh objects (not measured).
    package func reset() throws {
        try objects.reset()
    }
}

