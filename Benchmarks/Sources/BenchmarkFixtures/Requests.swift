import Foundation
import Relate
import RelatePostgres

/// The fetch-request benchmarks' fixtures (issue 12), each in a schema of its own, filled
/// once per server. Not measured.
package enum RequestFixture {
    // MARK: - A condition through a many-to-many, on 100,000 rows

    package static let itemCount = 100_000
    package static let tagCount = 50
    package static let wantedTag = "tag 7"
    /// Items tagged `tag 7`: the request both sides run. Relate builds it from
    /// `Key("tag").any(Key("name") == "tag 7")`; the setup checks that it sends this text.
    package static let existsSQL =
        #"SELECT t0."id", t0."name" FROM "bench_requests"."item" t0 WHERE EXISTS (SELECT 1 FROM "bench_requests"."item_tag" t1 "#
        + #"JOIN "bench_requests"."tag" t2 ON t2."id" = t1."tag_id" WHERE t1."item_id" = t0."id" AND t2."name" = $1)"#

    /// `item (id, name)`, `tag (id, name)` and the helper `item_tag (item_id, tag_id)`,
    /// keyed by both (a many-to-many under `.keyed`). Item i has tags i mod 50 + 1 and
    /// 7i mod 50 + 1: about 4 % of the items have `tag 7`.
    package static func prepareExists() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_requests;
                CREATE TABLE IF NOT EXISTS bench_requests.item (id int4 PRIMARY KEY, name text NOT NULL);
                CREATE TABLE IF NOT EXISTS bench_requests.tag (id int4 PRIMARY KEY, name text NOT NULL);
                CREATE TABLE IF NOT EXISTS bench_requests.item_tag (
                    item_id int4 NOT NULL REFERENCES bench_requests.item,
                    tag_id int4 NOT NULL REFERENCES bench_requests.tag,
                    PRIMARY KEY (item_id, tag_id))
                """,
            counts: [("bench_requests.item", itemCount), ("bench_requests.tag", tagCount)],
            fill: """
                TRUNCATE bench_requests.item_tag, bench_requests.item, bench_requests.tag;
                INSERT INTO bench_requests.tag SELECT g, 'tag ' || g FROM generate_series(1, \(tagCount)) g;
                INSERT INTO bench_requests.item SELECT g, 'item ' || g FROM generate_series(1, \(itemCount)) g;
                INSERT INTO bench_requests.item_tag
                SELECT DISTINCT g, t FROM generate_series(1, \(itemCount)) g,
                    LATERAL (VALUES (g % \(tagCount) + 1), (7 * g % \(tagCount) + 1)) AS tags(t)
                """,
            analyzed: ["bench_requests.item", "bench_requests.tag", "bench_requests.item_tag"])
    }

    // MARK: - Counts for 1,000 parents (bench_prefetch, see ObjectFixture)

    /// What `prefetchCounts(["child"], for: parents)` sends; the raw side sends it too.
    package static let countSQL =
        #"SELECT "parent_id", count(*) FROM "bench_prefetch"."child" WHERE "parent_id" = ANY($1) GROUP BY "parent_id""#

    // MARK: - 5,000,000 rows walked

    package static let streamCount = 5_000_000
    /// The walk both sides read: Relate's cursor runs it, raw libpq in single-row mode.
    package static let streamSQL = #"SELECT t0."i", t0."t", t0."f", t0."b", t0."l" FROM "bench_stream"."rows" t0"#

    /// `bench_stream.rows`, the columns of `bench_fetch.rows`, 5,000,000 rows (about 400 MB).
    package static func prepareStream() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_stream;
                CREATE TABLE IF NOT EXISTS bench_stream.rows (
                    i int4 PRIMARY KEY, t text NOT NULL, f float8 NOT NULL, b bool NOT NULL, l int8 NOT NULL)
                """,
            counts: [("bench_stream.rows", streamCount)], fill: Fixture.fillRows("bench_stream.rows", rows: streamCount))
    }
}

/// A checksum of the rows read, so that both sides provably read the same values.
package struct WalkSum: Equatable {
    package var rows = 0
    package var sum = 0

    @inline(__always)
    package mutating func add(_ row: FetchedRow) {
        rows += 1
        sum &+= row.i &+ row.t.utf8.count &+ (row.b ? 1 : 0) &+ Int(row.f) &+ (row.l & 0xFFFF)
    }
}

/// Both sides of the fetch-request benchmarks.
package final class RequestState {
    package let context: DatabaseContext
    package let raw: RawConnection
    /// The parents of the counts benchmark, fetched afresh before each measurement.
    package private(set) var parents: [DatabaseObject] = []

    private init(connection: Connection, schema: String) throws {
        context = try DatabaseContext(connection: connection, schemas: [schema])
        raw = try RawConnection(url: try Fixture.url())
    }

    private func sentSQL(_ body: () throws -> Void) rethrows -> [String] {
        var sent: [String] = []
        context.connection.trace = { sent.append($0) }
        defer { context.connection.trace = nil }
        try body()
        return sent
    }

    // MARK: Condition through a many-to-many

    package static func exists() throws -> RequestState {
        let state = try RequestState(connection: try RequestFixture.prepareExists(), schema: "bench_requests")
        var objects = 0
        let sent = try state.sentSQL { objects = try state.existsAsObjects() }
        let raw = try state.raw.exists()
        guard sent == [RequestFixture.existsSQL], objects == raw, raw > 0 else {
            throw ObjectFixture.Failure(description: "exists: Relate sent \(sent) and found \(objects), raw found \(raw)")
        }
        return state
    }

    /// Items tagged `tag 7`, as objects, their id and name read; answers the sum of the ids.
    @inline(never)
    package func existsAsObjects() throws -> Int {
        defer { context.reset() }
        var sum = 0
        for item in try context.fetch(FetchRequest("item", where: Key("tag").any(Key("name") == RequestFixture.wantedTag))) {
            guard let id = try item.value(forKey: "id", as: Int.self), try item.value(forKey: "name", as: String.self) != nil else {
                throw ObjectFixture.Failure(description: "an item without id or name")
            }
            sum &+= id
        }
        return sum
    }

    // MARK: Counts

    package static func counts() throws -> RequestState {
        let state = try RequestState(connection: try ObjectFixture.preparePrefetch(), schema: ObjectFixture.prefetchSchema)
        try state.fetchParents()
        var objects = 0
        let sent = try state.sentSQL { objects = try state.countsAsObjects() }
        let raw = try state.raw.childCountTotal()
        guard sent == [RequestFixture.countSQL], objects == raw, raw == ObjectFixture.parentCount * ObjectFixture.childrenPerParent else {
            throw ObjectFixture.Failure(description: "counts: Relate sent \(sent) and counted \(objects), raw counted \(raw)")
        }
        return state
    }

    /// Not measured: a fresh context state and the 1,000 parents, none counted yet.
    package func fetchParents() throws {
        parents = []
        context.reset()
        parents = try context.fetch("parent")
    }

    /// `prefetchCounts` for the 1,000 parents, then each parent's count read; exactly one
    /// round trip. Answers the total.
    @inline(never)
    package func countsAsObjects() throws -> Int {
        let before = context.connection.roundTrips
        try context.prefetchCounts(["child"], for: parents)
        var total = 0
        for parent in parents { total += try parent.count(forKey: "child") }
        let trips = context.connection.roundTrips - before
        guard trips == 1 else { throw ObjectFixture.Failure(description: "prefetchCounts took \(trips) round trips, expected 1") }
        return total
    }

    // MARK: The walk

    package static func stream(check: Bool) throws -> RequestState {
        let state = try RequestState(connection: try RequestFixture.prepareStream(), schema: "bench_stream")
        if check {
            let objects = try state.walkAsObjects(limit: nil)
            let raw = try state.raw.walkSingleRow(RequestFixture.streamSQL)
            guard objects == raw, raw.rows == RequestFixture.streamCount else {
                throw ObjectFixture.Failure(description: "walk: Relate read \(objects), raw \(raw)")
            }
        }
        ObjectsState.trim()
        return state
    }

    /// Every row (or the first `limit` by key) as objects, 1,000 a batch, every attribute read.
    @inline(never)
    package func walkAsObjects(limit: Int?, batchSize: Int = 1_000) throws -> WalkSum {
        var total = WalkSum()
        let request = FetchRequest("rows", where: limit.map { Key("i") <= $0 })
        try context.fetch(request, batchSize: batchSize) { batch in
            for object in batch { total.add(try fetchedRow(object)) }
        }
        return total
    }
}
