import Relate
import RelatePostgres

/// Deleting parents whose children are in memory: `parent (id)` 1,000 rows and `child (id,
/// parent_id → parent ON DELETE CASCADE)` 100,000 rows, 100 per parent, an index on the
/// foreign key. Each side deletes the first 100 parents, one `DELETE` each; the server
/// cascades on both sides, and Relate also finds each parent's children among the 100,000
/// registered objects and forgets them. For RelateProfile (`cascade-delete`), not part of
/// the targets.
package final class CascadeDeleteState {
    package static let parentCount = 1_000
    package static let childrenPerParent = 100
    package static let deletedParents = 100

    package let context: DatabaseContext
    package let raw: RawConnection
    private var parents: [DatabaseObject] = []
    private var children: [DatabaseObject] = []

    package init() throws {
        let connection = try Connection(url: try Fixture.url())
        try connection.executeScript("""
            CREATE SCHEMA IF NOT EXISTS bench_delete;
            CREATE TABLE IF NOT EXISTS bench_delete.parent (id int4 PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS bench_delete.child (
                id int4 PRIMARY KEY, parent_id int4 NOT NULL REFERENCES bench_delete.parent ON DELETE CASCADE);
            CREATE INDEX IF NOT EXISTS child_parent_id ON bench_delete.child (parent_id)
            """)
        context = try DatabaseContext(connection: connection, schemas: ["bench_delete"])
        raw = try RawConnection(url: try Fixture.url())
    }

    /// Before each side (not measured): the rows back, and for Relate every child and
    /// parent fetched afresh.
    package func prepare() throws {
        context.reset()
        parents = []
        children = []
        try context.connection.executeScript("""
            TRUNCATE bench_delete.child, bench_delete.parent;
            INSERT INTO bench_delete.parent SELECT g FROM generate_series(1, \(Self.parentCount)) AS g;
            INSERT INTO bench_delete.child
            SELECT g, (g - 1) % \(Self.parentCount) + 1 FROM generate_series(1, \(Self.parentCount * Self.childrenPerParent)) AS g
            """)
        children = try context.fetch("child")
        parents = try context.fetch("parent", orderBy: "id", limit: Self.deletedParents)
    }

    /// The Relate side: `context.delete` of each of the first 100 parents. Answers how
    /// many children it forgot.
    @inline(never)
    package func deleteWithObjects() throws -> Int {
        for parent in parents { try context.delete(parent) }
        let forgotten = children.lazy.filter(\.isDeleted).count
        guard forgotten == Self.deletedParents * Self.childrenPerParent else {
            throw ObjectFixture.Failure(description: "\(forgotten) children forgotten, expected \(Self.deletedParents * Self.childrenPerParent)")
        }
        return forgotten
    }

    /// The raw side: the same `DELETE`s.
    @inline(never)
    package func deleteRaw() throws -> Int {
        for id in 1...Self.deletedParents {
            try raw.execute("DELETE FROM bench_delete.parent WHERE id = \(id)")
        }
        return Self.deletedParents
    }
}
