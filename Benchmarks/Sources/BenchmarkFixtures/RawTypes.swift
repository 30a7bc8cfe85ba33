import CLibPQRaw
import Foundation
import RelatePostgres

/// The types fetch's baseline (issue 41, item 5): `TypesFixture.select` with binary
/// results, each cell decoded by hand from its binary form into the value Relate gives,
/// as careful code over libpq would: the shape and the column types checked once, each
/// cell's length where the form has one. The enum's binary form is its label; `money`'s
/// is its cents as int8 (scaled by two under the server's `lc_monetary`, C here).
///
/// Values are built with the public initialisers of Relate's value types (so that the
/// check compares like with like); the JSON is parsed by `JSONValue(json:)`, the reader
/// Relate parses it with, so the ratio does not measure one JSON parser against another.
extension RawConnection {
    @inline(never)
    package func fetchTypes() throws -> [TypedRow] {
        guard let result = PQexecParams(handle, TypesFixture.select, 0, nil, nil, nil, nil, 1) else {
            throw Failure(description: String(cString: PQerrorMessage(handle)))
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            throw Failure(description: String(cString: PQresultErrorMessage(result)))
        }
        return try Self.decodeTypes(result)
    }

    /// The columns' types: int4, the enum (its own OID), jsonb, interval, int4range,
    /// tstzrange, inet, macaddr, money, time, timetz, the composite (its own OID).
    private static let typeOIDs: [Oid?] = [23, nil, 3802, 1186, 3904, 3910, 869, 829, 790, 1083, 1266, nil]

    @inline(never)
    static func decodeTypes(_ result: OpaquePointer) throws -> [TypedRow] {
        guard PQnfields(result) == Int32(typeOIDs.count),
            typeOIDs.enumerated().allSatisfy({ column, oid in
                PQfformat(result, Int32(column)) == 1 && (oid == nil || PQftype(result, Int32(column)) == oid)
            })
        else {
            throw Failure(description: "unexpected columns")
        }
        let count = PQntuples(result)
        var rows: [TypedRow] = []
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            func cell(_ column: Int32) throws -> UnsafeRawBufferPointer {
                guard PQgetisnull(result, row, column) == 0 else { throw Failure(description: "NULL in row \(row), column \(column)") }
                return UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: Int(PQgetlength(result, row, column)))
            }
            let id = try cell(0), doc = try cell(2), span = try cell(3), mac = try cell(7), price = try cell(8)
            let opens = try cell(9), opensTZ = try cell(10)
            guard id.count == 4, doc.first == 1, span.count == 16, mac.count == 6, price.count == 8, opens.count == 8, opensTZ.count == 12
            else {
                throw Failure(description: "unexpected cell in row \(row)")
            }
            let pair = try record(try cell(11))
            rows.append(TypedRow(
                id: Int(id.int32(at: 0)),
                mood: String(decoding: try cell(1), as: UTF8.self),
                doc: try JSONValue(json: doc.dropFirst()),
                span: PostgresInterval(months: span.int32(at: 12), days: span.int32(at: 8), microseconds: span.int64(at: 0)),
                period: try range(try cell(4)) { bytes in
                    guard bytes.count == 4 else { throw Failure(description: "an int4 bound of \(bytes.count) bytes") }
                    return Int(bytes.int32(at: 0))
                },
                during: try range(try cell(5)) { bytes in
                    guard bytes.count == 8 else { throw Failure(description: "a timestamptz bound of \(bytes.count) bytes") }
                    return Date(timeIntervalSince1970: Double(bytes.int64(at: 0)) / 1_000_000 + 946_684_800)
                },
                addr: try inet(try cell(6)),
                mac: try PostgresMacAddress(bytes: Array(mac)),
                price: Decimal(sign: price.int64(at: 0) < 0 ? .minus : .plus, exponent: -2, significand: Decimal(price.int64(at: 0).magnitude)),
                opens: PostgresTime(microseconds: opens.int64(at: 0)),
                opensTZ: PostgresTime(microseconds: opensTZ.int64(at: 0), utcOffset: -opensTZ.int32(at: 8)),
                pairX: pair.x, pairLabel: pair.label))
        }
        return rows
    }

    /// A range's binary form: a flags byte, then each finite bound as a length and its bytes.
    @inline(__always)
    private static func range<Bound>(
        _ bytes: UnsafeRawBufferPointer, bound: (UnsafeRawBufferPointer) throws -> Bound
    ) throws -> PostgresRange<Bound> {
        let (empty, lowerInclusive, upperInclusive, lowerInfinite, upperInfinite): (UInt8, UInt8, UInt8, UInt8, UInt8) = (1, 2, 4, 8, 16)
        guard let flags = bytes.first else { throw Failure(description: "an empty range cell") }
        if flags & empty != 0 { return .empty }
        var offset = 1
        func end(infinite: UInt8, inclusive: UInt8) throws -> PostgresRange<Bound>.End {
            if flags & infinite != 0 { return .infinite }
            guard offset + 4 <= bytes.count else { throw Failure(description: "a range cut short") }
            let length = Int(bytes.int32(at: offset))
            guard length >= 0, offset + 4 + length <= bytes.count else { throw Failure(description: "a range cut short") }
            let value = try bound(UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 4 + length)]))
            offset += 4 + length
            return flags & inclusive != 0 ? .inclusive(value) : .exclusive(value)
        }
        let lower = try end(infinite: lowerInfinite, inclusive: lowerInclusive)
        return PostgresRange(lower: lower, upper: try end(infinite: upperInfinite, inclusive: upperInclusive))
    }

    /// `inet`'s binary form: family, prefix bits, whether a network (`cidr`), address length, address.
    @inline(__always)
    private static func inet(_ bytes: UnsafeRawBufferPointer) throws -> PostgresInet {
        guard bytes.count >= 4, Int(bytes[3]) == bytes.count - 4 else { throw Failure(description: "an inet of \(bytes.count) bytes") }
        return try PostgresInet(address: Array(bytes[4...]), prefixLength: Int(bytes[1]), isNetwork: bytes[2] == 1)
    }

    /// The composite `pair (x int4, label text)`'s binary form: the field count, then each
    /// field's type OID, length (-1 for NULL) and bytes.
    @inline(__always)
    private static func record(_ bytes: UnsafeRawBufferPointer) throws -> (x: Int?, label: String?) {
        guard bytes.count >= 12, bytes.int32(at: 0) == 2, bytes.int32(at: 4) == 23 else {
            throw Failure(description: "a pair of \(bytes.count) bytes")
        }
        var x: Int?
        var offset = 8
        let xLength = bytes.int32(at: offset)
        offset += 4
        if xLength == 4 {
            guard bytes.count >= offset + 4 + 8 else { throw Failure(description: "a pair cut short") }
            x = Int(bytes.int32(at: offset))
            offset += 4
        } else if xLength != -1 {
            throw Failure(description: "a pair's int4 of \(xLength) bytes")
        }
        guard bytes.count >= offset + 8, bytes.int32(at: offset) == 25 else { throw Failure(description: "a pair cut short") }
        let labelLength = Int(bytes.int32(at: offset + 4))
        offset += 8
        guard labelLength == -1 || offset + labelLength == bytes.count else { throw Failure(description: "a pair's text cut short") }
        let label = labelLength == -1 ? nil : String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset...]), as: UTF8.self)
        return (x, label)
    }
}

extension UnsafeRawBufferPointer {
    /// The big-endian `Int32` at `offset`.
    @inline(__always)
    func int32(at offset: Int) -> Int32 {
        Int32(bigEndian: loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    /// The big-endian `Int64` at `offset`.
    @inline(__always)
    func int64(at offset: Int) -> Int64 {
        Int64(bigEndian: loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }
}
