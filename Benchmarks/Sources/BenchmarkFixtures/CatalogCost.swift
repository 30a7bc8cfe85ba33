import Foundation
import Relate
import RelatePostgres

/// What reading the catalog and building the model cost (`RelateProfile catalog`), in
/// databases of their own, created once and kept (`bench_catalog_small`, `bench_catalog_10k`):
///
/// - a three-table schema (person, email, a person–title helper, title): the catalog read on
///   an open connection that has read it before, on a new connection (its first catalog
///   read: the server's caches are cold), the model built from it, and
///   `DatabaseContext(connection:)` on a new connection, everything included;
/// - 10,000 tables with 14,995 foreign keys (each table references the one before, every
///   other one also the seventh before): the catalog read and the model built.
package enum CatalogBenchmark {
    package static let tables = 10_000

    package static func run(runs: Int) throws -> [String] {
        let admin = try Connection(url: try Fixture.url())
        let small = try database("bench_catalog_small", like: admin) { connection in
            try connection.executeScript("""
                CREATE TABLE person (id serial PRIMARY KEY, firstname text, surname text);
                CREATE TABLE email (id serial PRIMARY KEY, address text NOT NULL, person_id int REFERENCES person ON DELETE CASCADE);
                CREATE TABLE title (id serial PRIMARY KEY, name text UNIQUE);
                CREATE TABLE person_title (person_id int REFERENCES person, title_id int REFERENCES title, PRIMARY KEY (person_id, title_id));
                """)
        }
        let large = try database("bench_catalog_10k", like: admin) { connection in
            try connection.executeScript("""
                CREATE PROCEDURE make_tables(count int) LANGUAGE plpgsql AS $$
                BEGIN
                    FOR i IN 0..count - 1 LOOP
                        EXECUTE format('CREATE TABLE t%s (id int PRIMARY KEY, a int %s, b int %s, name text)', i,
                            CASE WHEN i > 0 THEN format('REFERENCES t%s', i - 1) ELSE '' END,
                            CASE WHEN i >= 7 AND i % 2 = 0 THEN format('REFERENCES t%s', i - 7) ELSE '' END);
                        -- Within the server's lock table: a transaction per 500 tables.
                        IF i % 500 = 0 THEN COMMIT; END IF;
                    END LOOP;
                END $$;
                """)
            // Alone: a procedure that commits cannot run inside a script's implicit transaction.
            try connection.executeScript("CALL make_tables(\(tables))")
            try connection.executeScript("DROP PROCEDURE make_tables(int)")
        }

        var warm: [Double] = [], cold: [Double] = [], model: [Double] = [], context: [Double] = []
        let open = try Connection(sameAs: admin, adding: ["dbname": small])
        _ = try Catalog.introspect(open)
        for _ in 0..<runs {
            warm.append(try milliseconds { _ = try Catalog.introspect(open) })
            let fresh = try Connection(sameAs: admin, adding: ["dbname": small])
            var catalog: Catalog?
            cold.append(try milliseconds { catalog = try Catalog.introspect(fresh) })
            model.append(try milliseconds { _ = try Model(catalog: catalog!) })
            let another = try Connection(sameAs: admin, adding: ["dbname": small])
            context.append(try milliseconds { _ = try DatabaseContext(connection: another) })
        }
        var largeCatalog: [Double] = [], largeModel: [Double] = []
        for _ in 0..<max(1, runs / 10) {
            let fresh = try Connection(sameAs: admin, adding: ["dbname": large])
            var catalog: Catalog?
            largeCatalog.append(try milliseconds { catalog = try Catalog.introspect(fresh) })
            largeModel.append(try milliseconds { _ = try Model(catalog: catalog!) })
        }
        return [
            String(format: "three tables: catalog %.2f ms on a connection that read it before, %.2f ms on a new one; "
                + "model %.2f ms; DatabaseContext(connection:) on a new connection %.2f ms (medians of %d)",
                median(warm), median(cold), median(model), median(context), runs),
            String(format: "%d tables, 14,995 foreign keys: catalog %.0f ms, model %.0f ms, together %.0f ms (medians of %d, new connections)",
                tables, median(largeCatalog), median(largeModel), median(largeCatalog) + median(largeModel), largeCatalog.count),
        ]
    }

    /// The database `name`, created and filled by `fill` when it is not there yet.
    private static func database(_ name: String, like admin: Connection, fill: (Connection) throws -> Void) throws -> String {
        if try admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]).count == 0 {
            try admin.execute("CREATE DATABASE \(name)")
            do {
                try fill(try Connection(sameAs: admin, adding: ["dbname": name]))
            } catch {
                _ = try? admin.execute("DROP DATABASE \(name)")
                throw error
            }
        }
        return name
    }

    private static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
