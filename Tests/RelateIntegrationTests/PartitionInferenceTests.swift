import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Which foreign keys of a partitioned table count as its root's: those that every leaf
/// partition carries, declared on the leaf or on a partition above it; a partitioned table
/// without partitions is no leaf. The six minimal cases.
@Suite struct PartitionInferenceTests {
    static let base = """
        CREATE TABLE c (id int PRIMARY KEY);
        CREATE TABLE f (id int, c_id int) PARTITION BY RANGE (id);
        CREATE TABLE f0 PARTITION OF f FOR VALUES FROM (0) TO (10) PARTITION BY HASH (id);
        """
    static let f1 = "CREATE TABLE f1 PARTITION OF f FOR VALUES FROM (10) TO (20);"

    /// The model of the schema `sql` makes: `holder`'s relationships to `c`, as "key kind".
    private func relationshipsOfF(_ sql: String, holder holderName: String = "f") throws -> [String] {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(sql)
            let model = try DatabaseContext(connection: connection, schemas: [schema]).model
            #expect(!model.entities.contains { ["f0", "f1", "f00", "f01", "g0", "g1"].contains($0.name) })
            let holder = try model.entity(holderName)
            return holder.relationships.filter { $0.to.table == "c" }.map { "\($0.key) \($0.kind.rawValue)" }
        }
    }

    @Test func aKeyOnEveryLeafIsTheRoots() throws {
        // (a) on f0 (partitioned, no partitions: no leaf) and on f1.
        #expect(try relationshipsOfF(Self.base + Self.f1 + """
            ALTER TABLE f0 ADD CONSTRAINT f0_c FOREIGN KEY (c_id) REFERENCES c;
            ALTER TABLE f1 ADD CONSTRAINT f1_c FOREIGN KEY (c_id) REFERENCES c;
            """) == ["c many-to-one"])
    }

    @Test func aKeyOnAPartitionWithoutLeavesCoversNothing() throws {
        // (b) on f0 only: f1 holds rows the key never checks.
        #expect(try relationshipsOfF(Self.base + Self.f1 + "ALTER TABLE f0 ADD CONSTRAINT f0_c FOREIGN KEY (c_id) REFERENCES c;") == [])
        // (c) on f1 only: f0 can hold no row, so f1 is every leaf.
        #expect(try relationshipsOfF(Self.base + Self.f1 + "ALTER TABLE f1 ADD CONSTRAINT f1_c FOREIGN KEY (c_id) REFERENCES c;") == ["c many-to-one"])
    }

    @Test func aKeyOnASubPartitionedPartitionCoversItsLeaves() throws {
        // (d) f0 with hash partitions f00 and f01, the key declared on f0 only, no f1.
        #expect(try relationshipsOfF(Self.base + """
            CREATE TABLE f00 PARTITION OF f0 FOR VALUES WITH (MODULUS 2, REMAINDER 0);
            CREATE TABLE f01 PARTITION OF f0 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
            ALTER TABLE f0 ADD CONSTRAINT f0_c FOREIGN KEY (c_id) REFERENCES c;
            """) == ["c many-to-one"])
    }

    @Test func declarationsTwiceOnOneLeafDoNotCoverAnother() throws {
        // (f) g with plain partitions g0 and g1; the key declared twice on g0, not on g1.
        #expect(try relationshipsOfF("""
            CREATE TABLE c (id int PRIMARY KEY);
            CREATE TABLE g (id int, c_id int) PARTITION BY RANGE (id);
            CREATE TABLE g0 PARTITION OF g FOR VALUES FROM (0) TO (10);
            CREATE TABLE g1 PARTITION OF g FOR VALUES FROM (10) TO (20);
            ALTER TABLE g0 ADD CONSTRAINT g0_c FOREIGN KEY (c_id) REFERENCES c;
            ALTER TABLE g0 ADD CONSTRAINT g0_c_again FOREIGN KEY (c_id) REFERENCES c;
            """, holder: "g") == [])
    }

    /// (e) leaves that disagree on ON DELETE make one relationship, and a delete reads the
    /// dependants back instead of guessing which rule applied to each.
    @Test func leavesThatDisagreeOnDeleteMakeOneKeyAndDeletesReadBack() throws {
        let schema = """
            CREATE TABLE c (id int PRIMARY KEY);
            CREATE TABLE f (id int PRIMARY KEY, c_id int) PARTITION BY RANGE (id);
            CREATE TABLE f0 PARTITION OF f FOR VALUES FROM (0) TO (10);
            CREATE TABLE f1 PARTITION OF f FOR VALUES FROM (10) TO (20);
            ALTER TABLE f0 ADD CONSTRAINT f0_c FOREIGN KEY (c_id) REFERENCES c ON DELETE CASCADE;
            ALTER TABLE f1 ADD CONSTRAINT f1_c FOREIGN KEY (c_id) REFERENCES c ON DELETE SET NULL;
            INSERT INTO c VALUES (1);
            INSERT INTO f VALUES (1, 1), (11, 1);
            """
        try ObjectFixture.with("seed_person_email", extraSQL: schema) { fixture in
            let context = fixture.context
            let relationship = try context.model.entity("f").relationship(forKey: "c")
            #expect(relationship.kind == .manyToOne && relationship.onDeleteVaries)
            let parent = try #require(try context.object("c", primaryKey: 1))
            let children = try parent.objects(forKey: "f")
            let cascaded = try #require(try context.object("f", primaryKey: 1))
            let nulled = try #require(try context.object("f", primaryKey: 11))
            #expect(children.count == 2)
            try context.delete(parent)
            #expect(cascaded.isDeleted)
            #expect(!nulled.isDeleted)
            #expect(try nulled.value(forKey: "c_id") == nil)
            #expect(try fixture.disagreements() == [])
        }
    }
}
