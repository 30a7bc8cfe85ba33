import Relate
import RelatePostgres

/// Object-layer paths that must stay linear in the number of members: each with 10,000
/// objects in memory. For RelateProfile (`remove-all`, `replace-children`, `m2m-delete`),
/// Relate's side only: what it measures is the time memory bookkeeping adds to a few
/// statements, and whether it grows with the square of the members.
///
/// - `remove-all`: one parent's loaded set of 10,000 children emptied by `removeAll()`.
/// - `replace-children`: the same set replaced by 10,000 other children.
/// - `m2m-delete`: 10,000 posts, each with its tag set loaded (5 tags each, 500 tags),
///   then 100 tags deleted one by one.
package final class ScalingState {
    package static let members = 10_000
    package static let deletedTags = 100

    package let task: String
    package let context: DatabaseContext
    private var held: [DatabaseObject] = []

    package init(task: String) throws {
        self.task = task
        let connection = try Connection(url: try Fixture.url())
        try connection.executeScript("""
            CREATE SCHEMA IF NOT EXISTS bench_scaling;
            CREATE TABLE IF NOT EXISTS bench_scaling.parent (id int4 PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS bench_scaling.child (id int4 PRIMARY KEY, parent_id int4 REFERENCES bench_scaling.parent);
            CREATE INDEX IF NOT EXISTS child_parent_id ON bench_scaling.child (parent_id);
            CREATE TABLE IF NOT EXISTS bench_scaling.post (id int4 PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS bench_scaling.tag (id int4 PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS bench_scaling.post_tag (
                post_id int4 REFERENCES bench_scaling.post ON DELETE CASCADE,
                tag_id int4 REFERENCES bench_scaling.tag ON DELETE CASCADE, PRIMARY KEY (post_id, tag_id));
            CREATE INDEX IF NOT EXISTS post_tag_tag_id ON bench_scaling.post_tag (tag_id)
            """)
        context = try DatabaseContext(connection: connection, schemas: ["bench_scaling"])
    }

    /// Before each run (not measured): the rows back, the objects fetched and loaded afresh.
    package func prepare() throws {
        context.reset()
        held = []
        let n = Self.members
        try context.connection.executeScript("""
            TRUNCATE bench_scaling.child, bench_scaling.parent, bench_scaling.post_tag, bench_scaling.post, bench_scaling.tag;
            INSERT INTO bench_scaling.parent VALUES (1), (2);
            INSERT INTO bench_scaling.child SELECT g, CASE WHEN g <= \(n) THEN 1 ELSE 2 END FROM generate_series(1, \(2 * n)) g;
            INSERT INTO bench_scaling.post SELECT generate_series(1, \(n));
            INSERT INTO bench_scaling.tag SELECT generate_series(1, 500);
            INSERT INTO bench_scaling.post_tag SELECT p, (p * 7 + k * 101) % 500 + 1 FROM generate_series(1, \(n)) p, generate_series(0, 4) k
            ON CONFLICT DO NOTHING
            """)
        switch task {
        case "m2m-delete":
            let posts = try context.fetch("post")
            try context.prefetch(["tag"], for: posts)
            held = posts + (try context.fetch("tag", orderBy: "id", limit: Self.deletedTags))
        default:
            let parent = try context.fetch("parent", orderBy: "id")
            try context.prefetch(["child"], for: parent)
            held = parent
            if task == "replace-children" { held += try context.fetch("child", where: "parent_id = 2") }
        }
    }

    /// The measured work; answers how many objects it touched.
    @inline(never)
    package func run() throws -> Int {
        switch task {
        case "m2m-delete":
            let tags = held.suffix(Self.deletedTags)
            for tag in tags { try context.delete(tag) }
            return tags.count
        case "replace-children":
            let others = Array(held.dropFirst(2))
            try held[0].setValue(others, forKey: "child")
            return try held[0].objects(forKey: "child").count
        default:
            let children = try held[0].objects(forKey: "child")
            try children.removeAll()
            return children.count
        }
    }
}
