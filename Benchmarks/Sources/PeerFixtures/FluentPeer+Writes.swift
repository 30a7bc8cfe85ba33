import BenchmarkFixtures
import FluentKit

/// The writes by the thousand as Fluent's documentation writes them (issue 38).
extension FluentPeer {
    /// Rows per `create`: one statement binds every value, and PostgreSQL takes at most
    /// 65,535 parameters (5 a row).
    static let rowsPerCreate = 10_000

    /// A model per reading, then `[Model].create(on:)` for each 10,000 of them (one
    /// multi-row `INSERT` each), all in one transaction. Answers the rows inserted.
    package func insert(_ readings: [Reading]) async throws -> Int {
        let models = readings.map(FluentReading.init)
        try await database.transaction { database in
            for start in stride(from: 0, to: models.count, by: Self.rowsPerCreate) {
                try await models[start..<min(start + Self.rowsPerCreate, models.count)].create(on: database)
            }
        }
        return models.count
    }

    /// `query(on:).filter(\.$id <= 10000).set(\.$stamp, to: stamp).update()`.
    package func updateStamp(_ stamp: Int) async throws -> Int {
        try await FluentAccount.query(on: database)
            .filter(\.$id <= WriteFixture.updatedRows)
            .set(\.$stamp, to: stamp)
            .update()
        return WriteFixture.updatedRows
    }

    /// `query(on:).filter(\.$id <= 10000).delete()`: the server cascades to the children.
    package func deleteParents() async throws -> Int {
        try await FluentWriteParent.query(on: database).filter(\.$id <= WriteFixture.deletedParents).delete()
        return WriteFixture.deletedParents
    }
}
