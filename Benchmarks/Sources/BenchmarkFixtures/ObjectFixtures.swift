import Foundation
import Relate
import RelatePostgres

/// The object layer's fixtures, each in a schema of its own, created and filled once per
/// process (a later process finds them filled and leaves them alone). Not measured.
package enum ObjectFixture {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    // MARK: - 1. 100,000 rows as objects: bench_fetch.rows (Fixture), its primary key `i`

    // MARK: - 2. 1,000 parents × 10 children

    package static let parentCount = 1_000
    package static let childrenPerParent = 10
    package static let prefetchSchema = "bench_prefetch"
    /// Both sides read the parents with this statement (Relate quotes the names).
    package static let selectParents = "SELECT id, name FROM bench_prefetch.parent"
    /// The raw side's one query for all children; Relate's prefetch sends the same one.
    package static let selectChildren = "SELECT id, parent_id, name, amount FROM bench_prefetch.child WHERE parent_id = ANY($1)"

    /// `parent (id, name)` and `child (id, parent_id → parent, name, amount)`, children
    /// spread over the heap (child g belongs to parent g mod 1000), an index on the FK.
    /// The parent's to-many key is `child`.
    package static func preparePrefetch() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_prefetch;
                CREATE TABLE IF NOT EXISTS bench_prefetch.parent (id int4 PRIMARY KEY, name text NOT NULL);
                CREATE TABLE IF NOT EXISTS bench_prefetch.child (
                    id int4 PRIMARY KEY, parent_id int4 NOT NULL REFERENCES bench_prefetch.parent,
                    name text NOT NULL, amount float8 NOT NULL);
                CREATE INDEX IF NOT EXISTS child_parent_id ON bench_prefetch.child (parent_id)
                """,
            counts: [("bench_prefetch.parent", parentCount), ("bench_prefetch.child", parentCount * childrenPerParent)],
            fill: """
                TRUNCATE bench_prefetch.child, bench_prefetch.parent;
                INSERT INTO bench_prefetch.parent (id, name)
                SELECT g, 'parent ' || g FROM generate_series(1, \(parentCount)) AS g;
                INSERT INTO bench_prefetch.child (id, parent_id, name, amount)
                SELECT g, (g - 1) % \(parentCount) + 1, substr(md5(g::text), 1, 4 + g % 29), g::float8 / 7
                FROM generate_series(1, \(parentCount * childrenPerParent)) AS g
                """)
    }

    // MARK: - 3. 10,000 many-to-many inserts

    package static let targetCount = 10_000
    package static let ownerID = 1
    /// The raw pipeline's statement, one pair each (Relate's replace once sent the same).
    package static let insertPair = "INSERT INTO bench_m2m.owner_target (owner_id, target_id) VALUES ($1, $2)"
    /// The same pairs in one statement, the targets' keys as one array.
    package static let insertPairsUnnest = "INSERT INTO bench_m2m.owner_target (owner_id, target_id) SELECT $1, unnest($2::int4[])"

    /// `owner (id, name)`, `target (id, name)` and the helper `owner_target (owner_id,
    /// target_id)`, keyed by both: a many-to-many under the default `.keyed` rule, key
    /// `target` on the owner. One owner, 10,000 targets; the helper is emptied before each
    /// side of each pair.
    package static func prepareManyToMany() throws -> Connection {
        let connection = try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_m2m;
                CREATE TABLE IF NOT EXISTS bench_m2m.owner (id int4 PRIMARY KEY, name text NOT NULL);
                CREATE TABLE IF NOT EXISTS bench_m2m.target (id int4 PRIMARY KEY, name text NOT NULL);
                CREATE TABLE IF NOT EXISTS bench_m2m.owner_target (
                    owner_id int4 NOT NULL REFERENCES bench_m2m.owner,
                    target_id int4 NOT NULL REFERENCES bench_m2m.target,
                    PRIMARY KEY (owner_id, target_id))
                """,
            counts: [("bench_m2m.owner", 1), ("bench_m2m.target", targetCount)],
            fill: """
                TRUNCATE bench_m2m.owner_target, bench_m2m.owner, bench_m2m.target CASCADE;
                INSERT INTO bench_m2m.owner (id, name) VALUES (\(ownerID), 'owner');
                INSERT INTO bench_m2m.target (id, name)
                SELECT g, 'target ' || g FROM generate_series(1, \(targetCount)) AS g
                """)
        try connection.execute("TRUNCATE bench_m2m.owner_target")
        return connection
    }
}

// MARK: - The object side of each benchmark

/// Benchmark 1: every row of `bench_fetch.rows` as an object, every attribute read by key
/// with the typed read `value(forKey:as:)`. The context forgets its objects at the end
/// (inside the measurement: the raw side frees its rows inside it too), so every call
/// really fetches.
@inline(never)
package func fetchAsObjects(_ context: DatabaseContext) throws -> [FetchedRow] {
    defer { context.reset() }
    return try fetchedRows(try context.fetch("rows"), fetchedRow)
}

/// The rows of `objects`, each read by `read`.
@inline(__always)
package func fetchedRows(_ objects: [DatabaseObject], _ read: (DatabaseObject) throws -> FetchedRow) rethrows -> [FetchedRow] {
    var rows: [FetchedRow] = []
    rows.reserveCapacity(objects.count)
    for object in objects {
        rows.append(try read(object))
    }
    return rows
}

/// A row of `bench_fetch.rows` (or `bench_stream.rows`) as an object, every attribute read
/// by key with the typed read `value(forKey:as:)`.
@inline(__always)
package func fetchedRow(_ object: DatabaseObject) throws -> FetchedRow {
    guard let i = try object.value(forKey: "i", as: Int.self),
          let t = try object.value(forKey: "t", as: String.self),
          let f = try object.value(forKey: "f", as: Double.self),
          let b = try object.value(forKey: "b", as: Bool.self),
          let l = try object.value(forKey: "l", as: Int.self)
    else {
        throw ObjectFixture.Failure(description: "\(object): an attribute is NULL")
    }
    return FetchedRow(i: i, t: t, f: f, b: b, l: l)
}

/// The same through the generated type (`Generated/`, `relate generate … --schema
/// bench_fetch`): `context.fetch(Rows.self)`, every attribute read by its getter, which
/// knows the column's position and type.
@inline(never)
package func fetchAsTypedObjects(_ context: DatabaseContext) throws -> [FetchedRow] {
    defer { context.reset() }
    let objects = try context.fetch(Rows.self)
    var rows: [FetchedRow] = []
    rows.reserveCapacity(objects.count)
    for object in objects {
        rows.append(FetchedRow(i: try object.i, t: try object.t, f: try object.f, b: try object.b, l: try object.l))
    }
    return rows
}

/// The same, each attribute read as `value(forKey:)` and cast with `as?`, as DESIGN's
/// examples read: the runtime's cast from `Any` is the difference.
@inline(never)
package func fetchAsObjectsCastingAny(_ context: DatabaseContext) throws -> [FetchedRow] {
    defer { context.reset() }
    return try fetchedRows(try context.fetch("rows"), fetchedRowCastingAny)
}

/// A row as an object, each attribute read as `value(forKey:)` and cast with `as?`.
@inline(__always)
package func fetchedRowCastingAny(_ object: DatabaseObject) throws -> FetchedRow {
    guard let i = try object.value(forKey: "i") as? Int,
          let t = try object.value(forKey: "t") as? String,
          let f = try object.value(forKey: "f") as? Double,
          let b = try object.value(forKey: "b") as? Bool,
          let l = try object.value(forKey: "l") as? Int
    else {
        throw ObjectFixture.Failure(description: "\(object): an attribute is missing or of an unexpected type")
    }
    return FetchedRow(i: i, t: t, f: f, b: b, l: l)
}

/// Benchmark 2: the 1,000 parents, then every parent's `child` set, counted. With
/// `prefetch`, exactly 2 round trips (fetch, prefetch); without, 1 + 1,000. Any other
/// number of round trips is an error. Answers each parent's member count, in fetch order.
@inline(never)
package func childCountsAsObjects(_ context: DatabaseContext, prefetch: Bool) throws -> [Int] {
    defer { context.reset() }
    let before = context.connection.roundTrips
    let parents = try context.fetch("parent")
    if prefetch { try context.prefetch(["child"], for: parents) }
    var counts: [Int] = []
    counts.reserveCapacity(parents.count)
    for parent in parents {
        counts.append(try parent.objects(forKey: "child").count)
    }
    let trips = context.connection.roundTrips - before
    let expected = prefetch ? 2 : 1 + parents.count
    guard trips == expected else {
        throw ObjectFixture.Failure(description: "\(prefetch ? "with" : "without") prefetch: \(trips) round trips, expected \(expected)")
    }
    return counts
}

/// Benchmark 3's object side: one owner, its (loaded, empty) `target` set and 10,000
/// target objects, made afresh before each measured replace (not measured).
package final class ManyToManyObjects {
    package let context: DatabaseContext
    package private(set) var owner: DatabaseObject
    package private(set) var targets: [DatabaseObject]

    package init(connection: Connection) throws {
        context = try DatabaseContext(connection: connection, schemas: ["bench_m2m"])
        let relationship = try context.model.entity("owner").relationship(forKey: "target")
        guard relationship.kind == .manyToMany else {
            throw ObjectFixture.Failure(description: "owner.target is \(relationship.kind), expected a many-to-many")
        }
        owner = try Self.load(context)
        targets = try context.fetch("target")
    }

    private static func load(_ context: DatabaseContext) throws -> DatabaseObject {
        guard let owner = try context.object("owner", primaryKey: ObjectFixture.ownerID) else {
            throw ObjectFixture.Failure(description: "no owner \(ObjectFixture.ownerID)")
        }
        return owner
    }

    /// Empties the helper table and starts from fresh objects: the owner with its `target`
    /// set loaded (empty), and the 10,000 targets.
    package func reset() throws {
        try context.connection.execute("TRUNCATE bench_m2m.owner_target")
        context.reset()
        owner = try Self.load(context)
        targets = try context.fetch("target")
        guard try owner.objects(forKey: "target").isEmpty, targets.count == ObjectFixture.targetCount else {
            throw ObjectFixture.Failure(description: "the many-to-many fixture did not reset")
        }
    }

    /// The measured part: `owner.target = targets`, one pipeline of 10,000 INSERTs.
    /// Answers the set's size afterwards; anything but one round trip is an error.
    @inline(never)
    package func replace() throws -> Int {
        let before = context.connection.roundTrips
        try owner.setValue(targets, forKey: "target")
        let trips = context.connection.roundTrips - before
        guard trips == 1 else {
            throw ObjectFixture.Failure(description: "the replace took \(trips) round trips, expected 1")
        }
        return try owner.objects(forKey: "target").count
    }

    /// The targets added to the owner's set, `insert(contentsOf:)`: one `INSERT … SELECT $1,
    /// u."target_id" FROM unnest($2) …`, what Fluent's `attach` and the raw unnest statement
    /// do. Answers the set's size afterwards; anything but one round trip is an error.
    @inline(never)
    package func attach() throws -> Int {
        let before = context.connection.roundTrips
        try owner.objects(forKey: "target").insert(contentsOf: targets)
        let trips = context.connection.roundTrips - before
        guard trips == 1 else {
            throw ObjectFixture.Failure(description: "the attach took \(trips) round trips, expected 1")
        }
        return try owner.objects(forKey: "target").count
    }
}
