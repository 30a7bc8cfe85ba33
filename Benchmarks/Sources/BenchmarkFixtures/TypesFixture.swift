import Foundation
import Relate
import RelatePostgres

/// One row of `bench_types.sample` as both sides of the types fetch build it (issue 41,
/// item 5): every column of a type issue 41 maps, in the Swift type Relate reads it as.
/// The enum is its label and the composite its two fields, as a dynamic read gives them.
package struct TypedRow: Equatable, Sendable {
    package var id: Int
    package var mood: String
    package var doc: JSONValue
    package var span: PostgresInterval
    package var period: PostgresRange<Int>
    package var during: PostgresRange<Date>
    package var addr: PostgresInet
    package var mac: PostgresMacAddress
    package var price: Decimal
    package var opens: PostgresTime
    package var opensTZ: PostgresTime
    package var pairX: Int?
    package var pairLabel: String?
}

/// The types fetch (issue 41, item 5): 100,000 rows of an enum, `jsonb`, `interval`, an
/// `int4range` and a `tstzrange`, `inet` (a tenth IPv6), `macaddr`, `money`, `time`,
/// `timetz` and a composite, in `bench_types.sample`, created and filled once per server.
/// Not measured.
package enum TypesFixture {
    package static let schema = "bench_types"
    package static let rowCount = 100_000
    /// The schemas of the context: `bench_fetch` first, as `relate generate` read them when
    /// it made `BenchTypesSample` beside `Rows` (Generated/), so the entity is named
    /// `bench_types.sample` in both.
    package static let schemas = [Fixture.schema, schema]
    package static let entity = "bench_types.sample"
    /// The raw side's statement, binary results. Relate's select list is its own (it reads
    /// the enum as `::text` and `money` as `::numeric`).
    package static let select = """
        SELECT id, mood, doc, span, period, during, addr, mac, price, opens, opens_tz, pair FROM bench_types.sample
        """

    /// `bench_types.sample`: an enum `mood`, a composite `pair (x int4, label text)`, and the
    /// table, 100,000 rows. The values vary by row: the JSON's numbers and strings, the
    /// interval's three parts, the ranges' bounds, an IPv4 address with a prefix or an IPv6
    /// one, the money's cents, times with fractions and offsets east and west.
    package static func prepare() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS \(Fixture.schema);
                CREATE SCHEMA IF NOT EXISTS bench_types;
                DO $$ BEGIN
                    CREATE TYPE bench_types.mood AS ENUM ('sad', 'ok', 'happy');
                EXCEPTION WHEN duplicate_object THEN NULL; END $$;
                DO $$ BEGIN
                    CREATE TYPE bench_types.pair AS (x int4, label text);
                EXCEPTION WHEN duplicate_object THEN NULL; END $$;
                CREATE TABLE IF NOT EXISTS bench_types.sample (
                    id int4 PRIMARY KEY, mood bench_types.mood NOT NULL, doc jsonb NOT NULL, span interval NOT NULL,
                    period int4range NOT NULL, during tstzrange NOT NULL, addr inet NOT NULL, mac macaddr NOT NULL,
                    price money NOT NULL, opens time NOT NULL, opens_tz timetz NOT NULL, pair bench_types.pair NOT NULL)
                """,
            counts: [("bench_types.sample", rowCount)],
            fill: """
                TRUNCATE bench_types.sample;
                INSERT INTO bench_types.sample
                SELECT g,
                    (ARRAY['sad', 'ok', 'happy']::bench_types.mood[])[g % 3 + 1],
                    jsonb_build_object('n', g, 'tag', 'tag ' || g % 100, 'ok', g % 2 = 0, 'list', jsonb_build_array(g % 7, 'x')),
                    make_interval(months => g % 12, days => g % 31, secs => g % 86400),
                    int4range(g, g + 1 + g % 10),
                    tstzrange(to_timestamp(1767225600 + g), to_timestamp(1767225600 + g + 3600)),
                    CASE WHEN g % 10 = 0 THEN ('2001:db8::' || to_hex(g >> 16) || ':' || to_hex(g % 65536) || '/64')::inet
                         ELSE ('10.' || (g >> 16) % 256 || '.' || (g >> 8) % 256 || '.' || g % 256 || '/' || 8 + g % 25)::inet END,
                    ('08002b' || lpad(to_hex(g), 6, '0'))::macaddr,
                    ((g % 1000000)::numeric / 100)::money,
                    make_time(g / 3600 % 24, g / 60 % 60, g % 60 + 0.25),
                    (make_time(g / 3600 % 24, g / 60 % 60, g % 60)::text
                        || CASE WHEN g % 2 = 0 THEN '+' ELSE '-' END || lpad((g % 12)::text, 2, '0') || ':30')::timetz,
                    ROW(g, 'label ' || g)::bench_types.pair
                FROM generate_series(1, \(rowCount)) AS g
                """)
    }

}

/// What the types fetch's setup opens: Relate's context over ``TypesFixture/schemas``
/// (kept across runs, reset at the end of each) and raw libpq's connection.
package final class TypesState {
    package let context: DatabaseContext
    package let raw: RawConnection

    package init() throws {
        context = try DatabaseContext(connection: try TypesFixture.prepare(), schemas: TypesFixture.schemas)
        raw = try RawConnection(url: try Fixture.url())
    }

    /// Checks, outside any measurement, that `read` gives the rows raw libpq gives.
    package func check(_ read: (DatabaseContext) throws -> [TypedRow]) throws {
        let (relate, raw) = (try read(context), try raw.fetchTypes())
        guard relate.count == raw.count else {
            throw ObjectFixture.Failure(description: "types fetch: Relate read \(relate.count) rows, raw libpq \(raw.count)")
        }
        let byID = Dictionary(uniqueKeysWithValues: raw.map { ($0.id, $0) })
        if let differing = relate.first(where: { byID[$0.id] != $0 }) {
            throw ObjectFixture.Failure(description: "types fetch: row \(differing.id) differs between Relate and raw libpq")
        }
    }
}

// MARK: - Relate's sides

/// Every row of `bench_types.sample` as an object, every attribute read by key with
/// `value(forKey:as:)` (the composite as its `PostgresRecord`, its fields decoded), the
/// context reset at the end as `fetchAsObjects` does.
@inline(never)
package func fetchTypesAsObjects(_ context: DatabaseContext) throws -> [TypedRow] {
    defer { context.reset() }
    let objects = try context.fetch(TypesFixture.entity)
    var rows: [TypedRow] = []
    rows.reserveCapacity(objects.count)
    for object in objects {
        func read<T>(_ key: String, _ type: T.Type) throws -> T {
            guard let value = try object.value(forKey: key, as: type) else {
                throw ObjectFixture.Failure(description: "\(object): \(key) is NULL")
            }
            return value
        }
        let pair = try read("pair", PostgresRecord.self)
        rows.append(TypedRow(
            id: try read("id", Int.self), mood: try read("mood", String.self), doc: try read("doc", JSONValue.self),
            span: try read("span", PostgresInterval.self), period: try read("period", PostgresRange<Int>.self),
            during: try read("during", PostgresRange<Date>.self), addr: try read("addr", PostgresInet.self),
            mac: try read("mac", PostgresMacAddress.self), price: try read("price", Decimal.self),
            opens: try read("opens", PostgresTime.self), opensTZ: try read("opens_tz", PostgresTime.self),
            pairX: try pair.decode(Int.self, at: 0), pairLabel: try pair.decode(String.self, at: 1)))
    }
    return rows
}

/// The same through the generated type `BenchTypesSample`: `context.fetch(_:)` and its
/// getters (the enum as the generated `Mood`, the composite as the generated `Pair`).
@inline(never)
package func fetchTypesAsTypedObjects(_ context: DatabaseContext) throws -> [TypedRow] {
    defer { context.reset() }
    let samples = try context.fetch(BenchTypesSample.self)
    var rows: [TypedRow] = []
    rows.reserveCapacity(samples.count)
    for sample in samples {
        let pair = try sample.pair
        rows.append(TypedRow(
            id: try sample.id, mood: try sample.mood.rawValue, doc: try sample.doc, span: try sample.span,
            period: try sample.period, during: try sample.during, addr: try sample.addr, mac: try sample.mac,
            price: try sample.price, opens: try sample.opens, opensTZ: try sample.opensTz,
            pairX: pair.x, pairLabel: pair.label))
    }
    return rows
}
