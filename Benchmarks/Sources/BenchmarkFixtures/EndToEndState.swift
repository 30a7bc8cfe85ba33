import Relate
import RelatePostgres

/// The end-to-end shapes' fixture: a context kept across runs and a shared `Database`, both
/// over the task's schema, a raw connection kept across runs, and the URL for the sides that
/// open their own connection each run.
package final class EndToEndState {
    package let url: String
    package let context: DatabaseContext
    package let database: Database
    package let raw: RawConnection

    private init(connection: Connection, schema: String) throws {
        url = try Fixture.url()
        context = try DatabaseContext(connection: connection, schemas: [schema])
        // One connection: one unit of work at a time, as the runs come.
        database = try Database(url: url, schemas: [schema], maxConnections: 1)
        raw = try RawConnection(url: url)
    }

    /// 100,000 rows: `bench_fetch.rows`.
    package static func fetch() throws -> EndToEndState {
        try EndToEndState(connection: try Fixture.prepare(), schema: Fixture.schema)
    }

    /// 1,000 parents × 10 children: `bench_prefetch`.
    package static func prefetch() throws -> EndToEndState {
        try EndToEndState(connection: try ObjectFixture.preparePrefetch(), schema: ObjectFixture.prefetchSchema)
    }

    package func close() {
        database.close()
    }
}
