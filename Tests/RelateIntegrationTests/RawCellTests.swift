import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// A fetch whose columns all read in place keeps raw cells over its result (numbers, bools
/// and dates decoded, texts, UUIDs and bytes where they lie): every value reads as the
/// typed decoders read it, a write moves the object to cells of its own, and the result
/// lives as long as an object reads from it.
@Suite struct RawCellTests {
    static let schema = """
        CREATE TABLE reading (
            id int4 PRIMARY KEY, small int2, big int8, real4 float4, real8 float8, flag bool,
            label text, code varchar(8), padded char(3), born date, seen timestamp, at timestamptz,
            ref uuid, blob bytea);
        INSERT INTO reading VALUES
            (1, -2, 9000000000, 1.5, 2.25, true, 'Ada Lovelace, née Byron 🜁', 'AL', 'x', '1815-12-10',
             '2026-11-22 10:00:00.123456', '2026-11-22 10:00:00+00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff'),
            (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
            (3, 32767, -9223372036854775808, 'NaN', '-Infinity', false, '', '', '', 'infinity',
             '-infinity', 'infinity', '00000000-0000-0000-0000-000000000000', '\\x');
        """

    static func with(_ body: (DatabaseContext, Connection) throws -> Void) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            try body(try DatabaseContext(connection: connection, schemas: [schema]), connection)
        }
    }

    /// Every column as the typed decoders read it from a result of its own.
    static func decoded(_ connection: Connection, id: Int) throws -> [String: StoredValue] {
        let result = try connection.query("SELECT * FROM reading WHERE id = $1", [id], format: .binary)
        let readers = StoredValue.Reader.readers(for: result)
        var values: [String: StoredValue] = [:]
        for (column, reader) in zip(result.columns, readers) {
            values[column.name] = try reader.read(result[0], at: result.columns.firstIndex(of: column)!)
        }
        return values
    }

    @Test func everyValueReadsAsTheDecodersReadIt() throws {
        try Self.with { context, connection in
            let rows = try context.fetch(FetchRequest("reading", orderBy: [.ascending("id")]))
            #expect(rows.count == 3)
            #expect(rows.allSatisfy { $0.storage.isRaw })
            for row in rows {
                let expected = try Self.decoded(connection, id: try #require(try row.value(forKey: "id", as: Int.self)))
                for attribute in row.entity.attributes {
                    let stored = row.storedValue(at: row.entity.attributes.firstIndex(of: attribute)!)
                    let wanted = try #require(expected[attribute.name])
                    // NaN is not equal to itself: compared by its text.
                    #expect(stored.isSame(as: wanted) || "\(stored)" == "\(wanted)", "\(attribute.name) of row \(row)")
                }
            }
            let ada = rows[0]
            #expect(try ada.value(forKey: "label", as: String.self) == "Ada Lovelace, née Byron 🜁")
            #expect(try ada.value(forKey: "padded") as? String == "x  ")
            #expect(try ada.value(forKey: "ref") as? UUID == UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))
            #expect(try ada.value(forKey: "blob", as: Data.self) == Data([0, 255]))
            #expect(try ada.value(forKey: "real4", as: Float.self) == 1.5)
            let seen = try #require(try ada.value(forKey: "seen", as: Date.self))
            #expect(abs(seen.timeIntervalSince1970 - 1_795_341_600.123456) < 1e-6)
            #expect(try rows[2].value(forKey: "born", as: Date.self) == Date(timeIntervalSince1970: .infinity))
            #expect(try rows[2].value(forKey: "label", as: String.self) == "")
            #expect(try rows[2].value(forKey: "blob", as: Data.self) == Data())
            #expect(try rows[2].value(forKey: "big", as: Int.self) == Int.min)
            for attribute in rows[1].entity.attributes where attribute.name != "id" {
                #expect(try rows[1].value(forKey: attribute.key) == nil, "\(attribute.name)")
            }
        }
    }

    @Test func aWriteMovesTheObjectToCellsOfItsOwn() throws {
        try Self.with { context, connection in
            let rows = try context.fetch(FetchRequest("reading", orderBy: [.ascending("id")]))
            try rows[0].setValue("Grace", forKey: "label")
            #expect(!rows[0].storage.isRaw)
            #expect(rows[1].storage.isRaw)
            #expect(try rows[0].value(forKey: "label", as: String.self) == "Grace")
            #expect(try rows[0].value(forKey: "big", as: Int.self) == 9_000_000_000)
            let stored = try connection.query("SELECT label FROM reading WHERE id = 1", format: .binary)
            #expect(try stored[0].decode(String.self, at: 0) == "Grace")
            // Read again: the registered object is refreshed, not made anew.
            let again = try context.fetch(FetchRequest("reading", orderBy: [.ascending("id")]))
            #expect(again[0] === rows[0])
            #expect(try again[0].value(forKey: "label", as: String.self) == "Grace")
        }
    }

    @Test func anObjectKeptPastAResetStillReadsItsText() throws {
        try Self.with { context, _ in
            var kept = try context.fetch(FetchRequest("reading", orderBy: [.ascending("id")]))[0]
            context.reset()
            // Only this object holds the fetch's storage, and with it the result.
            #expect(try kept.value(forKey: "label", as: String.self) == "Ada Lovelace, née Byron 🜁")
            #expect(try kept.value(forKey: "ref") as? UUID == UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))
            #expect(isKnownUniquelyReferenced(&kept))
        }
    }

    @Test func aWalkReadsEveryBatchAndKeepsWhatItsBodyKeeps() throws {
        try Self.with { context, connection in
            try connection.execute(
                "INSERT INTO reading (id, label, blob) SELECT g, 'row ' || g || repeat('.', g % 40), int4send(g) FROM generate_series(10, 2509) AS g")
            var kept: [DatabaseObject] = []
            var seen = 0
            try context.fetch(FetchRequest("reading", orderBy: [.ascending("id")]), batchSize: 100) { batch in
                for object in batch {
                    let id = try #require(try object.value(forKey: "id", as: Int.self))
                    if id >= 10 {
                        #expect(try object.value(forKey: "label", as: String.self) == "row \(id)" + String(repeating: ".", count: id % 40))
                        #expect(try object.value(forKey: "blob", as: Data.self) == withUnsafeBytes(of: Int32(id).bigEndian) { Data($0) })
                    }
                    seen += 1
                }
                if kept.count < 3 { kept.append(batch[batch.count / 2]) }
            }
            #expect(seen == 2_503)
            // Kept past their batches: still read their values.
            for object in kept {
                let id = try #require(try object.value(forKey: "id", as: Int.self))
                if id >= 10 { #expect(try object.value(forKey: "label", as: String.self) == "row \(id)" + String(repeating: ".", count: id % 40)) }
            }
        }
    }

    /// What no honest server sends (an `int4` of three bytes, a bool of 2, a `uuid` of 15
    /// bytes): the fetch fails with the typed decoders' error naming the column, and nothing
    /// is registered. Cells of the right lengths read in place.
    @Test func aMalformedCellFailsTheFetchNamingItsColumn() throws {
        try Self.with { context, _ in
            let entity = try context.entityIndex(named: "reading")
            let attributes = context.model.entities[entity].attributes
            func result(_ replace: [String: [UInt8]?]) throws -> PostgresResult {
                let columns = attributes.map { (name: $0.name, type: PostgresType($0.typeOID), format: PostgresFormat.binary) }
                var cells: [[UInt8]?] = attributes.map { _ in nil }
                cells[0] = [0, 0, 0, 7]
                for (name, bytes) in replace { cells[attributes.firstIndex { $0.name == name }!] = bytes }
                return try #require(PostgresResult.crafted(columns: columns, rows: [cells]))
            }
            let good = try context.graph.materialize(
                entity: entity, result: try result(["flag": [1], "label": Array("hé".utf8), "ref": Array(repeating: 0xab, count: 16)]),
                rowsAreDistinct: true)
            #expect(good[0].storage.isRaw)
            #expect(try good[0].value(forKey: "id", as: Int.self) == 7)
            #expect(try good[0].value(forKey: "flag", as: Bool.self) == true)
            #expect(try good[0].value(forKey: "label", as: String.self) == "hé")
            #expect(try good[0].value(forKey: "ref", as: UUID.self)?.uuidString == "ABABABAB-ABAB-ABAB-ABAB-ABABABABABAB")
            context.reset()
            for (column, bytes) in [("small", [0, 0, 1] as [UInt8]), ("flag", [2]), ("ref", Array(repeating: 0, count: 15)), ("big", [1])] {
                let error = #expect(throws: RelateError.self) {
                    try context.graph.materialize(entity: entity, result: try result([column: bytes]), rowsAreDistinct: true)
                }
                #expect(error?.postgresError?.column == column, "\(column): \(String(describing: error))")
                #expect(context.graph.registries[entity].isEmpty)
            }
        }
    }

    @Test func aTableWithAColumnNotReadInPlaceKeepsDecodedCells() throws {
        try Self.with { context, connection in
            try connection.execute("ALTER TABLE reading ADD COLUMN amount numeric DEFAULT 1.5")
            let fresh = try DatabaseContext(connection: connection, schemas: context.model.entities.map(\.schema))
            let rows = try fresh.fetch(FetchRequest("reading", orderBy: [.ascending("id")]))
            #expect(rows.allSatisfy { !$0.storage.isRaw })
            #expect(try rows[0].value(forKey: "amount", as: Decimal.self) == Decimal(string: "1.5"))
            #expect(try rows[0].value(forKey: "label", as: String.self) == "Ada Lovelace, née Byron 🜁")
        }
    }
}
