import CLibPQRaw

/// The by-key tasks written by hand: one statement per key, an int4 parameter in binary
/// form, binary results decoded as in `fetch()`.
extension RawConnection {
    /// Each key's row of `bench_fetch.rows`, one `SELECT … WHERE i = $1` each.
    @inline(never)
    package func rows(keys: [Int]) throws -> [FetchedRow] {
        var rows: [FetchedRow] = []
        rows.reserveCapacity(keys.count)
        for key in keys {
            let result = try withInt4(key) { try execute(KeyedFixture.selectRow, types: [23, 25, 701, 16, 20], parameter: (23, $0)) }
            defer { PQclear(result) }
            let decoded = try Self.decode(result)
            guard decoded.count == 1 else { throw Failure(description: "no row \(key)") }
            rows.append(decoded[0])
        }
        return rows
    }

    /// Each key's item set to `hits = stamp + id`: one `UPDATE` each (int4 and int8
    /// parameters, binary). Answers the number of rows changed.
    @inline(never)
    package func updateHits(keys: [Int], stamp: Int) throws -> Int {
        let types: [Oid] = [23, 20]
        let lengths: [Int32] = [4, 8]
        let formats: [Int32] = [1, 1]
        var updated = 0
        for key in keys {
            var id = Int32(key).bigEndian
            var hits = Int64(stamp + key).bigEndian
            let result = withUnsafeBytes(of: &id) { id in
                withUnsafeBytes(of: &hits) { hits in
                    let values: [UnsafePointer<CChar>?] = [
                        id.baseAddress!.assumingMemoryBound(to: CChar.self), hits.baseAddress!.assumingMemoryBound(to: CChar.self),
                    ]
                    return PQexecParams(handle, KeyedFixture.updateHits, 2, types, values, lengths, formats, 1)
                }
            }
            defer { PQclear(result) }
            guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else {
                throw Failure(description: String(cString: PQerrorMessage(handle)))
            }
            updated += Int(String(cString: PQcmdTuples(result))) ?? 0
        }
        return updated
    }

    /// `body` with an int4 in binary form.
    func withInt4<Result>(_ value: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var bigEndian = Int32(value).bigEndian
        return try withUnsafeBytes(of: &bigEndian) { try body($0) }
    }
}
