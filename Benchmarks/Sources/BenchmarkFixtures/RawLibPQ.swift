import CLibPQRaw

/// The baseline: libpq called directly, as careful hand-written code would. It checks the
/// result's shape and column types once, each cell's length (which also rules out NULL
/// in the fixed-width columns: libpq gives a NULL length 0) and, for an empty text, NULL;
/// nothing more.
package final class RawConnection {
    package let handle: OpaquePointer

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package init(url: String) throws {
        guard let handle = PQconnectdb(url) else { throw Failure(description: "PQconnectdb returned NULL") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            throw Failure(description: "raw libpq could not connect: \(message)")
        }
        self.handle = handle
    }

    deinit { PQfinish(handle) }

    /// Benchmark 2: the same SELECT, binary results, decoded by hand.
    @inline(never)
    package func fetch() throws -> [FetchedRow] {
        let result = try execute()
        defer { PQclear(result) }
        return try Self.decode(result)
    }

    /// `PQexecParams` with no parameters and binary results (resultFormat 1).
    package func execute() throws -> OpaquePointer {
        guard let result = PQexecParams(handle, Fixture.select, 0, nil, nil, nil, nil, 1) else {
            throw Failure(description: String(cString: PQerrorMessage(handle)))
        }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            let message = String(cString: PQresultErrorMessage(result))
            PQclear(result)
            throw Failure(description: message)
        }
        return result
    }

    @inline(never)
    package static func decode(_ result: OpaquePointer) throws -> [FetchedRow] {
        // int4, text, float8, bool, int8, all in binary form.
        let expected: [Oid] = [23, 25, 701, 16, 20]
        guard PQnfields(result) == 5,
              (0..<5).allSatisfy({ PQftype(result, $0) == expected[Int($0)] && PQfformat(result, $0) == 1 })
        else {
            throw Failure(description: "unexpected columns")
        }
        let count = PQntuples(result)
        var rows: [FetchedRow] = []
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            let textLength = Int(PQgetlength(result, row, 1))
            guard PQgetlength(result, row, 0) == 4,
                  textLength > 0 || PQgetisnull(result, row, 1) == 0,
                  PQgetlength(result, row, 2) == 8,
                  PQgetlength(result, row, 3) == 1,
                  PQgetlength(result, row, 4) == 8
            else {
                throw Failure(description: "unexpected cell in row \(row)")
            }
            rows.append(FetchedRow(
                i: Int(Int32(bigEndian: UnsafeRawPointer(PQgetvalue(result, row, 0)!).loadUnaligned(as: Int32.self))),
                t: String(decoding: UnsafeRawBufferPointer(start: PQgetvalue(result, row, 1), count: textLength), as: UTF8.self),
                f: Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(PQgetvalue(result, row, 2)!).loadUnaligned(as: UInt64.self))),
                b: UnsafeRawPointer(PQgetvalue(result, row, 3)!).load(as: UInt8.self) != 0,
                l: Int(Int64(bigEndian: UnsafeRawPointer(PQgetvalue(result, row, 4)!).loadUnaligned(as: Int64.self)))))
        }
        return rows
    }
}

/// `PQclear`, for files that do not import libpq themselves.
package func PQclearRaw(_ result: OpaquePointer) { PQclear(result) }
