import BenchmarkFixtures
import Relate
import RelatePostgres

/// The writes by the thousand (issue 38): what each task's setup opens and what runs
/// before each side, unmeasured.
extension PeerFixture {
    /// 100,000 rows into `bench_insert.reading`, emptied before each side; postgres-nio's
    /// search path set to the schema for its `copyFrom`.
    package static func insert() async throws -> PeerFixture {
        let connection = try WriteFixture.prepareInsert()
        let fixture = try await PeerFixture(context: Relate.DatabaseContext(connection: connection, schemas: [WriteFixture.insertSchema]))
        try await fixture.nio.useSchema(WriteFixture.insertSchema)
        return fixture
    }

    /// Before each side of the insert: the table empty, Relate's context holding nothing.
    package func emptyReadings() throws {
        context.reset()
        try context.connection.execute("TRUNCATE bench_insert.reading")
    }

    /// What an insert left: the count and a digest of every row.
    package func insertedReadings() throws -> TableDigest {
        try WriteFixture.insertedDigest(context.connection)
    }

    /// 10,000 of 100,000 accounts updated by a condition: `bench_setupdate`, and a second
    /// context that holds the 10,000 as objects.
    package static func setUpdate() async throws -> PeerFixture {
        let connection = try WriteFixture.prepareUpdate()
        let loaded = try Relate.DatabaseContext(connection: try Connection(url: try Fixture.url()), schemas: [WriteFixture.updateSchema])
        return try await PeerFixture(
            context: Relate.DatabaseContext(connection: connection, schemas: [WriteFixture.updateSchema]), loaded: loaded)
    }

    /// Before each side of the update: the next value to write, the dead rows of the last
    /// update vacuumed away, and the 10,000 accounts fetched afresh into `loaded`.
    package func prepareSetUpdate() throws {
        nextStamp()
        try context.connection.execute("VACUUM bench_setupdate.account")
        guard let loaded else { return }
        loaded.reset()
        loadedObjects = try loaded.fetch(FetchRequest("account", where: Key("id") <= WriteFixture.updatedRows))
    }

    /// What an update left: the rows holding the stamp, and how many of them the condition picks.
    package func stampedAccounts() throws -> TableDigest {
        try WriteFixture.stampedRows(context.connection, stamp: stamp)
    }

    /// The same, after checking that every object `loaded` holds took the stamp.
    package func stampedAccountsInMemory() throws -> TableDigest {
        let stale = try loadedObjects.filter { try $0.value(forKey: "stamp", as: Int.self) != stamp }.count
        guard loadedObjects.count == WriteFixture.updatedRows, stale == 0 else {
            throw PeerFailure(description: "\(stale) of \(loadedObjects.count) loaded accounts do not hold the stamp written")
        }
        return try stampedAccounts()
    }

    /// 10,000 parents and their 30,000 children deleted by a condition: `bench_setdelete`.
    package static func setDelete() async throws -> PeerFixture {
        let connection = try WriteFixture.prepareDelete()
        return try await PeerFixture(context: Relate.DatabaseContext(connection: connection, schemas: [WriteFixture.deleteSchema]))
    }

    /// Before each side of the delete: the deleted rows back.
    package func restoreParents() throws {
        try WriteFixture.restoreDeleted(context.connection)
    }

    /// What a delete left: the parents and children remaining.
    package func remainingParents() throws -> TableDigest {
        try WriteFixture.remainingRows(context.connection)
    }
}
