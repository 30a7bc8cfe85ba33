import CLibPQRaw

/// The raw libpq baselines of the fetch-request benchmarks: the same SQL, binary results,
/// every cell's length checked and decoded.
extension RawConnection {
    /// Items tagged `tag 7` (`RequestFixture.existsSQL`, the tag's name as a text
    /// parameter); answers the sum of their ids.
    @inline(never)
    package func exists() throws -> Int {
        let result = try RequestFixture.wantedTag.withCString { tag in
            var value: UnsafePointer<CChar>? = tag
            let result = PQexecParams(handle, RequestFixture.existsSQL, 1, nil, &value, nil, nil, 1)
            guard let result, PQresultStatus(result) == PGRES_TUPLES_OK, PQnfields(result) == 2,
                  PQftype(result, 0) == 23, PQftype(result, 1) == 25
            else {
                if let result { PQclear(result) }
                throw Failure(description: "exists: \(String(cString: PQerrorMessage(handle)))")
            }
            return result
        }
        defer { PQclear(result) }
        var sum = 0
        for row in 0..<PQntuples(result) {
            sum &+= try Self.int4(result, row, 0)
            _ = try Self.text(result, row, 1)
        }
        return sum
    }

    /// The 1,000 parents' children counted in one grouped query (`RequestFixture.countSQL`,
    /// the parent ids as an int4[] in binary form), kept by parent; answers the total.
    @inline(never)
    package func childCountTotal() throws -> Int {
        var array: [UInt8] = []
        array.reserveCapacity(20 + 8 * ObjectFixture.parentCount)
        func put(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { array.append(contentsOf: $0) } }
        put(1); put(0); put(23); put(Int32(ObjectFixture.parentCount)); put(1)
        for id in 1...ObjectFixture.parentCount { put(4); put(Int32(id)) }
        let result = try array.withUnsafeBufferPointer { bytes in
            try execute(RequestFixture.countSQL, types: [23, 20], parameter: (type: 1007, bytes: UnsafeRawBufferPointer(bytes)))
        }
        defer { PQclear(result) }
        var counts: [Int: Int] = [:]
        counts.reserveCapacity(ObjectFixture.parentCount)
        for row in 0..<PQntuples(result) {
            guard PQgetlength(result, row, 1) == 8 else { throw Failure(description: "bad count in row \(row)") }
            counts[try Self.int4(result, row, 0)] =
                Int(Int64(bigEndian: UnsafeRawPointer(PQgetvalue(result, row, 1)!).loadUnaligned(as: Int64.self)))
        }
        return (1...ObjectFixture.parentCount).reduce(0) { $0 + (counts[$1] ?? 0) }
    }

    /// Every row of `sql` (the five columns of `bench_fetch.rows`) in libpq's single-row
    /// mode: one result per row, decoded and freed at once, so memory stays flat.
    @inline(never)
    package func walkSingleRow(_ sql: String) throws -> WalkSum {
        guard PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 1) == 1, PQsetSingleRowMode(handle) == 1 else {
            throw Failure(description: "single-row mode: \(String(cString: PQerrorMessage(handle)))")
        }
        var total = WalkSum()
        var failure: String?
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_SINGLE_TUPLE:
                guard failure == nil else { continue }
                do {
                    guard PQgetlength(result, 0, 0) == 4, PQgetlength(result, 0, 3) == 1, PQgetlength(result, 0, 4) == 8 else {
                        throw Failure(description: "unexpected cell")
                    }
                    total.add(FetchedRow(
                        i: try Self.int4(result, 0, 0), t: try Self.text(result, 0, 1), f: try Self.float8(result, 0, 2),
                        b: UnsafeRawPointer(PQgetvalue(result, 0, 3)!).load(as: UInt8.self) != 0,
                        l: Int(Int64(bigEndian: UnsafeRawPointer(PQgetvalue(result, 0, 4)!).loadUnaligned(as: Int64.self)))))
                } catch {
                    // Read on to the end, so that the connection stays usable.
                    failure = "\(error)"
                }
            case PGRES_TUPLES_OK:
                break
            default:
                failure = String(cString: PQresultErrorMessage(result))
            }
        }
        if let failure { throw Failure(description: failure) }
        return total
    }
}
