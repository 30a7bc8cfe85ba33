import Foundation
import Testing

@testable import Relate

/// Tables without a primary key, keyed by a unique constraint or index on `NOT NULL`
/// columns (`hard_cases.sql`'s regions, departments and towns, the shape of a French
/// teaching database), and keys an override declares: opened by key, written, in sets,
/// live, and tracked by `relate enable`'s triggers.
@Suite struct UniqueKeyedTableTests {
    static let data = """
        INSERT INTO regions (code, capital, name) VALUES ('84', '69123', 'Auvergne-Rhône-Alpes'), ('93', '13055', 'Provence-Alpes-Côte d''Azur');
        INSERT INTO departments (code, capital, region, name) VALUES ('69', '69123', '84', 'Rhône'), ('13', '13055', '93', 'Bouches-du-Rhône'),
            ('38', '38185', '84', 'Isère');
        INSERT INTO towns (code, article, name, department) VALUES ('123', NULL, 'Lyon', '69'), ('055', NULL, 'Marseille', '13'),
            ('185', NULL, 'Grenoble', '38');
        """

    @Test func theCatalogsKeysBecomeTheEntitiesKeys() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.data) { fixture in
            let model = fixture.context.model
            let expected: [(String, [String], Entity.KeySource?, String?)] = [
                ("regions", ["code"], .uniqueConstraint, "regions_code_key"),
                ("departments", ["code"], .uniqueConstraint, "departments_code_key"),
                ("towns", ["id"], .uniqueConstraint, "towns_id_key"),
                ("index_keyed", ["code"], .uniqueIndex, "index_keyed_code"),
                ("constraint_first", ["a", "b"], .uniqueConstraint, "constraint_first_a_b_key"),
                ("nullable_code", [], nil, nil),
                ("partial_code", [], nil, nil),
                ("person", ["id"], .primaryKey, nil),
            ]
            for (name, key, source, keyName) in expected {
                let entity = try model.entity(name)
                #expect(entity.primaryKey == key && entity.keySource == source && entity.keyName == keyName, "\(name)")
            }
        }
    }

    @Test func openedByKeyOneObjectPerRowAndWritten() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.data) { fixture in
            let context = fixture.context
            let rhone = try #require(try context.object("departments", primaryKey: "69"))
            #expect(try rhone.value(forKey: "name", as: String.self) == "Rhône")
            // One object per row: the fetch hands back the same instance.
            #expect(try context.fetch("departments", where: "code = $1", ["69"]).first === rhone)
            // An UPDATE by the key, not by id.
            let update = try fixture.sql { try rhone.setValue("Rhône (69)", forKey: "name") }
            #expect(update.count == 1 && update[0].contains("\"code\" = $"), "\(update)")
            // Insert, then write by key, then delete.
            let drome = try context.insert("departments", values: ["code": "26", "capital": "26362", "region": "84", "name": "Drôme"])
            #expect(try drome.value(forKey: "id", as: Int.self) == 4)
            let renamed = try context.update("departments", primaryKey: "26", values: ["name": "La Drôme"])
            #expect(renamed === drome)
            #expect(try drome.value(forKey: "name", as: String.self) == "La Drôme")
            try context.delete(drome)
            #expect(try context.object("departments", primaryKey: "26") == nil)
            // towns are keyed by id.
            let lyon = try #require(try context.object("towns", primaryKey: 1))
            try lyon.setValue("Lyon 1er", forKey: "name")
            #expect(try fixture.disagreements().isEmpty)
        }
    }

    @Test func relationshipsToTheCodesReadAndWriteBothWays() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.data) { fixture in
            let context = fixture.context
            let auvergne = try #require(try context.object("regions", primaryKey: "84"))
            let provence = try #require(try context.object("regions", primaryKey: "93"))
            let departments = try auvergne.objects(forKey: "departments")
            #expect(Set(try departments.allObjects.map { try $0.value(forKey: "code", as: String.self)! }) == ["69", "38"])
            let isere = try #require(try context.object("departments", primaryKey: "38"))
            #expect(try isere.object(forKey: "regions") === auvergne)
            // Moving Isère to Provence: one UPDATE of its region column, both sets follow.
            try provence.objects(forKey: "departments").insert(isere)
            #expect(try isere.value(forKey: "region", as: String.self) == "93")
            #expect(!departments.contains(isere))
            // A town's department, and the department's towns.
            let grenoble = try #require(try context.object("towns", primaryKey: 3))
            #expect(try grenoble.object(forKey: "departments") === isere)
            #expect(try isere.objects(forKey: "towns").contains(grenoble))
            // The key itself written: ON UPDATE CASCADE moves the towns, memory follows.
            try isere.setValue("38X", forKey: "code")
            #expect(try grenoble.value(forKey: "department", as: String.self) == "38X")
            #expect(try context.object("departments", primaryKey: "38X") === isere)
            #expect(try fixture.disagreements().isEmpty)
        }
    }

    @Test func aTableWithoutAKeyStaysReadOnlyAndSaysWhy() throws {
        try ObjectFixture.with("hard_cases", extraSQL: "INSERT INTO nullable_code VALUES ('a', 'A'), (NULL, 'B');") { fixture in
            let context = fixture.context
            let rows = try context.fetch("nullable_code", orderBy: "label")
            #expect(rows.count == 2)
            let statements = fixture.sql {
                let error = #expect(throws: RelateError.self) { try rows[0].setValue("C", forKey: "label") }
                #expect(error?.kind == .invalidWrite)
                #expect(error?.message.contains("no primary key, nor a unique key whose columns are all NOT NULL") == true)
                #expect(error?.message.contains("Override.primaryKey(of:columns:)") == true)
            }
            #expect(statements.isEmpty)
            let byKey = #expect(throws: RelateError.self) { try context.object("partial_code", primaryKey: "x") }
            #expect(byKey?.message.contains("\"partial_code\" has no key") == true)
        }
    }

    @Test func liveQueriesFollowWritesByTheUniqueKey() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.data) { fixture in
            let context = fixture.context
            let live = try context.liveFetch(FetchRequest("departments", where: Key("region") == "84", orderBy: [Ordering("code")]))
            #expect(try live.objects.map { try $0.value(forKey: "code", as: String.self) } == ["38", "69"])
            let bouches = try #require(try context.object("departments", primaryKey: "13"))
            try bouches.setValue("84", forKey: "region")
            #expect(try live.objects.map { try $0.value(forKey: "code", as: String.self) } == ["13", "38", "69"])
            #expect(live.lastDifference.inserted.map(\.index) == [0])
        }
    }

    /// `relate enable`'s triggers send the unique key the model takes: another client's
    /// update reaches the very object, without reading the table again.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func changeTrackingCarriesTheUniqueKey(_ mechanism: ChangeTracking.Mechanism) throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE TABLE regions (id serial UNIQUE NOT NULL, code varchar(4) UNIQUE NOT NULL, name text UNIQUE NOT NULL);
                CREATE TABLE towns (id serial UNIQUE NOT NULL, code varchar(10) NOT NULL, name text NOT NULL,
                    region varchar(4) NOT NULL REFERENCES regions (code), UNIQUE (code, region));
                \(Self.trackedData)
                """)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            if mechanism == .triggers {
                // The trigger function of regions builds its keys from code, the model's key.
                let body = try setup.query("""
                    SELECT p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                     WHERE n.nspname = 'relate_tracking' AND p.proname = 'notify_' || 'regions'::regclass::oid
                    """)
                #expect(try body[0].decode(String.self, at: 0).contains("jsonb_build_array(r.code)"))
            }
            let context = try DatabaseContext(url: url)
            try context.startTrackingChanges(using: mechanism)
            let auvergne = try #require(try context.object("regions", primaryKey: "84"))
            let towns = try auvergne.objects(forKey: "towns")
            #expect(towns.count == 1)
            try setup.execute("UPDATE regions SET name = 'AURA' WHERE code = '84'")
            try setup.execute("INSERT INTO towns (code, name, region) VALUES ('185', 'Grenoble', '84')")
            var changes = try context.waitForChanges(timeout: .seconds(5))
            while changes.count < 2 {
                let more = try context.waitForChanges(timeout: .seconds(2))
                if more.isEmpty { break }
                changes += more
            }
            let update = try #require(changes.first { $0.entity == "regions" })
            #expect(update.kind == .update && update.primaryKey.map { $0 as? String } == ["84"] && update.changedKeys == ["name"])
            let insert = try #require(changes.first { $0.entity == "towns" })
            #expect(insert.kind == .insert && insert.primaryKey.map { $0 as? Int } == [2])
            #expect(try auvergne.value(forKey: "name", as: String.self) == "AURA")
            #expect(towns.count == 2)
            #expect(try ObjectFixture.disagreements(of: context, with: try DatabaseContext(url: url)).isEmpty)
        }
    }

    static let trackedData = """
        INSERT INTO regions (code, name) VALUES ('84', 'Auvergne-Rhône-Alpes'), ('93', 'Provence-Alpes-Côte d''Azur');
        INSERT INTO towns (code, name, region) VALUES ('123', 'Lyon', '84');
        """

    // MARK: - Override.primaryKey(of:columns:)

    /// A view over one table (`hard_cases.sql`'s `big_departments`) is keyed by an override:
    /// opened by key, one object per row, written through (PostgreSQL updates a simple view itself).
    @Test func anOverrideKeysAnUpdatableView() throws {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample("hard_cases", into: connection, schema: schema)
            try connection.executeScript(Self.data)
            let context = try DatabaseContext(
                connection: connection, overrides: [
                    .primaryKey(of: "big_departments", columns: ["code"]),
                    .foreignKey("big_departments", ["region"], references: "regions"),
                ], schemas: [schema, "\(schema)_other"])
            let view = try context.model.entity("big_departments")
            #expect(view.primaryKey == ["code"] && view.keySource == .override)
            let rhone = try #require(try context.object("big_departments", primaryKey: "69"))
            #expect(try context.fetch("big_departments", orderBy: "code").last === rhone)
            try rhone.setValue("Rhône", forKey: "name")
            #expect(try connection.query("SELECT name FROM departments WHERE code = '69'")[0].decode(String.self, at: 0) == "Rhône")
            // The declared relationship reads both ways.
            let auvergne = try #require(try rhone.object(forKey: "regions"))
            #expect(try auvergne.value(forKey: "code", as: String.self) == "84")
            #expect(try auvergne.objects(forKey: "big_departments").count == 2)
        }
    }
}
