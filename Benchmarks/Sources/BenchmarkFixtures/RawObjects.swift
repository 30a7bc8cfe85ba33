import CLibPQRaw

/// The raw libpq baselines of the object benchmarks: the same work written by hand, binary
/// results, every cell's length checked and decoded into Swift values.
extension RawConnection {
    package struct Parent {
        var id: Int
        var name: String
    }

    package struct Child {
        var id: Int
        var parentID: Int
        var name: String
        var amount: Double
    }

    /// Benchmark 2's baseline: the parents, then all their children in one
    /// `WHERE parent_id = ANY($1)` query (an int4[] in binary form), grouped by parent in a
    /// dictionary. Answers each parent's number of children, in fetch order.
    @inline(never)
    package func childCounts() throws -> [Int] {
        let parentResult = try execute(ObjectFixture.selectParents, types: [23, 25])
        defer { PQclear(parentResult) }
        var parents: [Parent] = []
        let parentCount = PQntuples(parentResult)
        parents.reserveCapacity(Int(parentCount))
        for row in 0..<parentCount {
            parents.append(Parent(id: try Self.int4(parentResult, row, 0), name: try Self.text(parentResult, row, 1)))
        }

        let array = Self.int4Array(parents.map(\.id))

        let childResult = try array.withUnsafeBufferPointer { bytes in
            try execute(
                ObjectFixture.selectChildren, types: [23, 23, 25, 701],
                parameter: (type: 1007, bytes: UnsafeRawBufferPointer(bytes)))
        }
        defer { PQclear(childResult) }
        var children: [Int: [Child]] = [:]
        children.reserveCapacity(parents.count)
        for row in 0..<PQntuples(childResult) {
            let child = Child(
                id: try Self.int4(childResult, row, 0), parentID: try Self.int4(childResult, row, 1),
                name: try Self.text(childResult, row, 2), amount: try Self.float8(childResult, row, 3))
            children[child.parentID, default: []].append(child)
        }
        return parents.map { children[$0.id]?.count ?? 0 }
    }

    /// Benchmark 3's baseline: one `INSERT` per target in pipeline mode (int4 parameters in
    /// binary form), one sync, every result read. Answers the number of rows inserted.
    @inline(never)
    package func insertPairs(owner: Int, targets: [Int]) throws -> Int {
        guard PQenterPipelineMode(handle) == 1 else {
            throw Failure(description: "cannot enter pipeline mode: \(String(cString: PQerrorMessage(handle)))")
        }
        defer { _ = PQexitPipelineMode(handle) }
        let types: [Oid] = [23, 23]
        let lengths: [Int32] = [4, 4]
        let formats: [Int32] = [1, 1]
        var values = [Int32(owner).bigEndian, 0]
        for target in targets {
            values[1] = Int32(target).bigEndian
            let sent = values.withUnsafeBytes { bytes in
                let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
                let pointers: [UnsafePointer<CChar>?] = [UnsafePointer(base), UnsafePointer(base + 4)]
                return PQsendQueryParams(handle, ObjectFixture.insertPair, 2, types, pointers, lengths, formats, 1)
            }
            guard sent == 1 else { throw Failure(description: String(cString: PQerrorMessage(handle))) }
        }
        guard PQpipelineSync(handle) == 1 else { throw Failure(description: String(cString: PQerrorMessage(handle))) }
        var inserted = 0
        var failure: String?
        for _ in targets {
            guard let result = PQgetResult(handle) else { throw Failure(description: "a pipeline result is missing") }
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                inserted += 1
            } else if failure == nil {
                failure = String(cString: PQresultErrorMessage(result))
            }
            PQclear(result)
            // Each statement's results end with a NULL.
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        while PQstatus(handle) == CONNECTION_OK {
            guard let result = PQgetResult(handle) else { continue }
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if let failure { throw Failure(description: failure) }
        return inserted
    }

    /// Benchmark 3's other baseline: the same pairs in one statement,
    /// `INSERT … SELECT $1, unnest($2::int4[])`, the owner's key as an int4 and the targets'
    /// as an int4[], both binary. Answers the number of rows inserted.
    @inline(never)
    package func insertPairsUnnest(owner: Int, targets: [Int]) throws -> Int {
        var ownerValue = Int32(owner).bigEndian
        let array = Self.int4Array(targets)
        let types: [Oid] = [23, 1007]
        let lengths: [Int32] = [4, Int32(array.count)]
        let formats: [Int32] = [1, 1]
        let result = withUnsafeBytes(of: &ownerValue) { owner in
            array.withUnsafeBytes { array in
                let values: [UnsafePointer<CChar>?] = [
                    owner.baseAddress!.assumingMemoryBound(to: CChar.self), array.baseAddress!.assumingMemoryBound(to: CChar.self),
                ]
                return PQexecParams(handle, ObjectFixture.insertPairsUnnest, 2, types, values, lengths, formats, 1)
            }
        }
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw Failure(description: String(cString: PQerrorMessage(handle)))
        }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// An int4[] in binary: ndim, has-null flag, element type, then length and lower bound
    /// of the one dimension, then each element as its length and value.
    static func int4Array(_ values: [Int]) -> [UInt8] {
        var array: [UInt8] = []
        array.reserveCapacity(20 + 8 * values.count)
        func put(_ value: Int32) { withUnsafeBytes(of: value.bigEndian) { array.append(contentsOf: $0) } }
        put(1); put(0); put(23); put(Int32(values.count)); put(1)
        for value in values { put(4); put(Int32(value)) }
        return array
    }

    package func execute(_ sql: String) throws {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK else {
            throw Failure(description: String(cString: PQerrorMessage(handle)))
        }
    }

    // MARK: - Helpers

    /// `PQexecParams` with binary results and at most one binary parameter; the columns'
    /// types are checked once.
    func execute(
        _ sql: String, types expected: [Oid], parameter: (type: Oid, bytes: UnsafeRawBufferPointer)? = nil
    ) throws -> OpaquePointer {
        let result: OpaquePointer?
        if let parameter {
            var type = parameter.type
            var length = Int32(parameter.bytes.count)
            var format: Int32 = 1
            var value: UnsafePointer<CChar>? = parameter.bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
            result = PQexecParams(handle, sql, 1, &type, &value, &length, &format, 1)
        } else {
            result = PQexecParams(handle, sql, 0, nil, nil, nil, nil, 1)
        }
        guard let result else { throw Failure(description: String(cString: PQerrorMessage(handle))) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            let message = String(cString: PQresultErrorMessage(result))
            PQclear(result)
            throw Failure(description: message)
        }
        guard PQnfields(result) == Int32(expected.count),
              expected.indices.allSatisfy({ PQftype(result, Int32($0)) == expected[$0] && PQfformat(result, Int32($0)) == 1 })
        else {
            PQclear(result)
            throw Failure(description: "unexpected columns for \(sql)")
        }
        return result
    }

    @inline(__always)
    static func int4(_ result: OpaquePointer, _ row: Int32, _ column: Int32) throws -> Int {
        guard PQgetlength(result, row, column) == 4 else { throw Failure(description: "bad int4 in row \(row)") }
        return Int(Int32(bigEndian: UnsafeRawPointer(PQgetvalue(result, row, column)!).loadUnaligned(as: Int32.self)))
    }

    @inline(__always)
    static func float8(_ result: OpaquePointer, _ row: Int32, _ column: Int32) throws -> Double {
        guard PQgetlength(result, row, column) == 8 else { throw Failure(description: "bad float8 in row \(row)") }
        return Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(PQgetvalue(result, row, column)!).loadUnaligned(as: UInt64.self)))
    }

    @inline(__always)
    static func text(_ result: OpaquePointer, _ row: Int32, _ column: Int32) throws -> String {
        let length = Int(PQgetlength(result, row, column))
        guard length > 0 || PQgetisnull(result, row, column) == 0 else { throw Failure(description: "NULL text in row \(row)") }
        return String(decoding: UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: length), as: UTF8.self)
    }
}
