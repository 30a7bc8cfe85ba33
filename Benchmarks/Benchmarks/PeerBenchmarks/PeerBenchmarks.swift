import Benchmark
import BenchmarkFixtures
import Interleaved
import PeerFixtures

// The same tasks through Relate, raw libpq, Fluent and postgres-nio, interleaved in one
// process (issue 15, item 1). Relate keeps one context across runs and resets it at the
// start of each, as a user would; raw libpq and postgres-nio keep one connection; Fluent
// keeps its pool. Every side is timed from its first call to the last value read, and
// its ratio is to raw libpq in the same iteration (for the attach: to the single raw
// `unnest` statement).
let benchmarks: @Sendable () -> Void = {
    // 100,000 rows of (int4, text, float8, bool, int8), every value read into the same
    // `[FetchedRow]`. Fluent decodes each row through its property wrappers (~1.5 s a run).
    interleaved(
        "peers fetch 100k", metric: "fetch", iterations: 12, maxDuration: .seconds(90),
        setup: { try await PeerFixture.fetch() },
        canonical: { $0.sorted { $0.i < $1.i } }, expected: { $0.count == Fixture.rowCount },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw libpq") { try EndToEnd.fetchAfterReset($0.context) },
            Side("raw libpq") { try $0.raw.fetch() },
            Side("Fluent", against: "raw libpq") { try await $0.fluent.rows() },
            Side("postgres-nio", against: "raw libpq") { try await $0.nio.rows() },
        ])

    // 1,000 parents and their 10,000 children, each parent's children counted. Relate:
    // fetch + prefetch(["child"]); Fluent: `.with(\.$children)`; raw and postgres-nio: the
    // parents, then `parent_id = ANY($1)`, grouped in a dictionary.
    interleaved(
        "peers prefetch 1000x10", metric: "prefetch", iterations: 10, maxDuration: .seconds(120),
        setup: { try await PeerFixture.prefetch() },
        canonical: { $0.sorted() },
        expected: { $0 == Array(repeating: ObjectFixture.childrenPerParent, count: ObjectFixture.parentCount) },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw libpq") { try EndToEnd.childCountsAfterReset($0.context) },
            Side("raw libpq") { try $0.raw.childCounts() },
            Side("Fluent", against: "raw libpq") { try await $0.fluent.childCounts() },
            Side("postgres-nio", against: "raw libpq") { try await $0.nio.childCounts() },
        ])

    // 10,000 targets attached to one owner. Relate: `owner.objects(forKey: "target")
    // .insert(contentsOf: targets)` (one statement), and the replace, `owner.setValue(targets,
    // forKey: "target")` (what leaves deleted too: two statements in one pipeline); raw: one
    // `INSERT … SELECT $1, unnest($2::int4[])` (the baseline) and a pipeline of 10,000
    // INSERTs; Fluent: `owner.$targets.attach(targets)`
    // into its own pivot table; postgres-nio: the unnest statement. Before each side,
    // unmeasured: both helper tables emptied, Relate's objects fetched afresh. Each side's
    // answer is the rows it left, read afterwards.
    interleaved(
        "peers m2m attach 10k", metric: "attach", iterations: 15, maxDuration: .seconds(90),
        setup: { try await PeerFixture.manyToMany() },
        prepare: { try $0.emptyManyToMany() },
        expected: { $0 == Array(1...ObjectFixture.targetCount) },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw unnest", observe: { try $0.attachedTargets(fluent: false) }) {
                [try $0.manyToMany!.attach()]
            },
            Side("Relate replace", against: "raw unnest", observe: { try $0.attachedTargets(fluent: false) }) {
                [try $0.manyToMany!.replace()]
            },
            Side("raw unnest", observe: { try $0.attachedTargets(fluent: false) }) {
                [try $0.raw.insertPairsUnnest(owner: ObjectFixture.ownerID, targets: $0.targetIDs)]
            },
            Side("raw pipeline", against: "raw unnest", observe: { try $0.attachedTargets(fluent: false) }) {
                [try $0.raw.insertPairs(owner: ObjectFixture.ownerID, targets: $0.targetIDs)]
            },
            Side("Fluent", against: "raw unnest", observe: { try $0.attachedTargets(fluent: true) }) {
                [try await $0.fluent.attach()]
            },
            Side("postgres-nio", against: "raw unnest", observe: { try $0.attachedTargets(fluent: false) }) {
                [try await $0.nio.insertPairs(owner: ObjectFixture.ownerID, targets: $0.targetIDs)]
            },
        ])

    // One object by primary key, 100 keys one after another (one query each), every value
    // read. Relate: `context.object("rows", primaryKey:)` after `reset()`; Fluent: `find`.
    interleaved(
        "peers object by key 100", metric: "by key", iterations: 60, maxDuration: .seconds(30),
        setup: { try await PeerFixture.byKey() },
        expected: { $0.map(\.i) == KeyedFixture.fetchKeys },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw libpq") { try ObjectsByKey.rows($0.context, keys: KeyedFixture.fetchKeys) },
            Side("raw libpq") { try $0.raw.rows(keys: KeyedFixture.fetchKeys) },
            Side("Fluent", against: "raw libpq") { try await $0.fluent.rows(keys: KeyedFixture.fetchKeys) },
            Side("postgres-nio", against: "raw libpq") { try await $0.nio.rows(keys: KeyedFixture.fetchKeys) },
        ])

    // One attribute updated by primary key, 100 keys one after another, each to a value
    // it did not hold. Fluent reads the object first (2 round trips a key); Relate writes by
    // key (`context.update(_:primaryKey:values:)`, one `UPDATE … RETURNING`), raw libpq and
    // postgres-nio send the UPDATE alone (1). Each side's answer is the number of rows
    // holding what it wrote.
    interleaved(
        "peers update by key 100", metric: "update", iterations: 30, maxDuration: .seconds(60),
        setup: { try await PeerFixture.update() },
        prepare: { $0.nextStamp() },
        expected: { $0 == KeyedFixture.keys.count },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw libpq", observe: { try $0.updatedItems() }) {
                try ObjectsByKey.updateHits($0.context, keys: KeyedFixture.keys, stamp: $0.stamp)
            },
            Side("raw libpq", observe: { try $0.updatedItems() }) {
                try $0.raw.updateHits(keys: KeyedFixture.keys, stamp: $0.stamp)
            },
            Side("Fluent", against: "raw libpq", observe: { try $0.updatedItems() }) {
                try await $0.fluent.updateHits(keys: KeyedFixture.keys, stamp: $0.stamp)
            },
            Side("postgres-nio", against: "raw libpq", observe: { try $0.updatedItems() }) {
                try await $0.nio.updateHits(keys: KeyedFixture.keys, stamp: $0.stamp)
            },
        ])

    // Writes by the thousand (issue 38). Each side's answer is what it left in the table,
    // read afterwards (unmeasured); the rows a side writes are made from the same Swift
    // values inside the measurement.

    // 100,000 rows of (int8, text, float8, bool, timestamptz) into an empty table. Raw
    // libpq: binary `COPY … FROM STDIN`, encoded and sent 64 KB at a time (the baseline);
    // Relate: `copy(into:rows:)` (binary COPY, no object), `copy(into:columns:rows:)` (the
    // same, rows by position and typed) and `insert(_:rows:)` (one
    // `INSERT … SELECT * FROM unnest(…) RETURNING`, 100,000 objects); postgres-nio: its
    // `copyFrom` (text format, the only one it has) and one `INSERT … SELECT * FROM
    // unnest($1, …)` of bound arrays; Fluent: `[Model].create(on:)` per 10,000 models
    // (PostgreSQL takes 65,535 parameters a statement) in one transaction. Fluent's side
    // takes 30–40 s a run on a loaded 2-core machine (first run, 2026-11-27), so an
    // iteration is most of a minute: up to 10 minutes, or the 6 iterations stop at 2.
    interleaved(
        "peers insert 100k", metric: "insert", iterations: 6, maxDuration: .seconds(600),
        setup: { try await PeerFixture.insert() },
        prepare: { try $0.emptyReadings() },
        expected: { $0.count == WriteFixture.insertedRows },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw libpq", observe: { try $0.insertedReadings() }) {
                TableDigest(written: try SetWrites.copy($0.context, WriteFixture.readings))
            },
            Side("Relate by position", against: "raw libpq", observe: { try $0.insertedReadings() }) {
                TableDigest(written: try SetWrites.copyByPosition($0.context, WriteFixture.readings))
            },
            Side("Relate insert", against: "raw libpq", observe: { try $0.insertedReadings() }) {
                TableDigest(written: try SetWrites.insert($0.context, WriteFixture.readings))
            },
            Side("raw libpq", observe: { try $0.insertedReadings() }) {
                TableDigest(written: try $0.raw.copy(WriteFixture.readings))
            },
            Side("postgres-nio", against: "raw libpq", observe: { try $0.insertedReadings() }) {
                TableDigest(written: try await $0.nio.copy(WriteFixture.readings))
            },
            Side("postgres-nio unnest", against: "raw libpq", observe: { try $0.insertedReadings() }) {
                TableDigest(written: try await $0.nio.insertUnnest(WriteFixture.readings))
            },
            Side("Fluent", against: "raw libpq", observe: { try $0.insertedReadings() }) {
                TableDigest(written: try await $0.fluent.insert(WriteFixture.readings))
            },
        ])

    // 10,000 of 100,000 rows updated by a condition (`id <= 10000`), `stamp` set to a value
    // new for each side and iteration. Raw libpq and postgres-nio: one `UPDATE … WHERE`;
    // Fluent: `query(on:).filter(…).set(…).update()`; Relate: `update(_:where:values:)`
    // after `reset()` (nothing read back), and "Relate loaded" with the 10,000 objects in
    // memory (`RETURNING`, every object takes the value; checked). Before each side: the
    // last update's dead rows vacuumed, the 10,000 fetched afresh for "Relate loaded".
    interleaved(
        "peers update 10k", metric: "update 10k", iterations: 15, maxDuration: .seconds(90),
        setup: { try await PeerFixture.setUpdate() },
        prepare: { try $0.prepareSetUpdate() },
        expected: { $0 == TableDigest(count: WriteFixture.updatedRows, digest: "\(WriteFixture.updatedRows) picked") },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw libpq", observe: { try $0.stampedAccounts() }) {
                TableDigest(written: try SetWrites.updateStamp($0.context, stamp: $0.stamp))
            },
            Side("Relate loaded", against: "raw libpq", observe: { try $0.stampedAccountsInMemory() }) {
                TableDigest(written: try SetWrites.updateStampLoaded($0.loaded!, stamp: $0.stamp))
            },
            Side("raw libpq", observe: { try $0.stampedAccounts() }) {
                TableDigest(written: try $0.raw.updateStamp($0.stamp))
            },
            Side("postgres-nio", against: "raw libpq", observe: { try $0.stampedAccounts() }) {
                TableDigest(written: try await $0.nio.updateStamp($0.stamp))
            },
            Side("Fluent", against: "raw libpq", observe: { try $0.stampedAccounts() }) {
                TableDigest(written: try await $0.fluent.updateStamp($0.stamp))
            },
        ])

    // 10,000 of 100,000 parents deleted by a condition (`id <= 10000`), the server
    // cascading to their 30,000 children (`ON DELETE CASCADE`, an index on the foreign
    // key). Raw libpq and postgres-nio: one `DELETE … WHERE`; Fluent:
    // `query(on:).filter(…).delete()`; Relate: `delete(_:where:)` after `reset()`. Before
    // each side: the rows put back and the tables vacuumed.
    interleaved(
        "peers delete 10k cascade", metric: "delete 10k", iterations: 15, maxDuration: .seconds(120),
        setup: { try await PeerFixture.setDelete() },
        prepare: { try $0.restoreParents() },
        expected: {
            $0 == TableDigest(
                count: WriteFixture.parentCount - WriteFixture.deletedParents,
                digest: "\((WriteFixture.parentCount - WriteFixture.deletedParents) * WriteFixture.childrenPerParent) children")
        },
        teardown: { try await $0.shutdown() },
        sides: [
            Side("Relate", against: "raw libpq", observe: { try $0.remainingParents() }) {
                TableDigest(written: try SetWrites.deleteParents($0.context))
            },
            Side("raw libpq", observe: { try $0.remainingParents() }) {
                TableDigest(written: try $0.raw.deleteParents())
            },
            Side("postgres-nio", against: "raw libpq", observe: { try $0.remainingParents() }) {
                TableDigest(written: try await $0.nio.deleteParents())
            },
            Side("Fluent", against: "raw libpq", observe: { try $0.remainingParents() }) {
                TableDigest(written: try await $0.fluent.deleteParents())
            },
        ])
}
