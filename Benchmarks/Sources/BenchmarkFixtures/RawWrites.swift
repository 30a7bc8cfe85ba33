import CLibPQRaw
import Foundation

/// The writes by the thousand written by hand (issue 38): the rows by binary `COPY`, the
/// update and the delete as one statement each, parameters in binary.
extension RawConnection {
    /// The rows by `COPY … FROM STDIN (FORMAT binary)`: encoded into the copy format a chunk
    /// at a time, each chunk sent (`PQputCopyData`) as it fills, so that the server works
    /// while the next is encoded. Answers the rows the server reports.
    @inline(never)
    package func copy(_ readings: [Reading]) throws -> Int {
        let started = PQexec(handle, WriteFixture.copyReadings)
        guard let started, PQresultStatus(started) == PGRES_COPY_IN else {
            if let started { PQclear(started) }
            throw Failure(description: "COPY: \(String(cString: PQerrorMessage(handle)))")
        }
        PQclear(started)
        let chunk = 1 << 16
        var buffer: [UInt8] = []
        buffer.reserveCapacity(chunk + 256)
        func put<Integer: FixedWidthInteger>(_ value: Integer) {
            withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
        }
        func send() throws {
            let sent = buffer.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
            }
            guard sent == 1 else { throw Failure(description: "COPY: \(String(cString: PQerrorMessage(handle)))") }
            buffer.removeAll(keepingCapacity: true)
        }
        // Header: signature, flags, extension length.
        buffer += Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
        put(Int32(0)); put(Int32(0))
        for reading in readings {
            put(Int16(5))
            put(Int32(8)); put(Int64(reading.id))
            var name = reading.name
            name.withUTF8 { text in
                put(Int32(text.count))
                buffer.append(contentsOf: text)
            }
            put(Int32(8)); put(reading.amount.bitPattern)
            put(Int32(1)); buffer.append(reading.active ? 1 : 0)
            // timestamptz: microseconds since 2000-01-01 UTC.
            put(Int32(8)); put(Int64(((reading.created.timeIntervalSince1970 - 946_684_800) * 1_000_000).rounded()))
            if buffer.count >= chunk { try send() }
        }
        put(Int16(-1))
        try send()
        guard PQputCopyEnd(handle, nil) == 1 else { throw Failure(description: "COPY: \(String(cString: PQerrorMessage(handle)))") }
        var copied = 0
        var failure: String?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                copied = Int(String(cString: PQcmdTuples(result))) ?? 0
            } else if failure == nil {
                failure = String(cString: PQresultErrorMessage(result))
            }
            PQclear(result)
        }
        if let failure { throw Failure(description: "COPY: \(failure)") }
        return copied
    }

    /// `UPDATE … SET stamp = $1 WHERE id <= $2` (int8 and int4, binary). Answers the rows
    /// changed.
    @inline(never)
    package func updateStamp(_ stamp: Int) throws -> Int {
        var stampValue = Int64(stamp).bigEndian
        var bound = Int32(WriteFixture.updatedRows).bigEndian
        return try withUnsafeBytes(of: &stampValue) { stamp in
            try withUnsafeBytes(of: &bound) { bound in
                try command(WriteFixture.updateStamp, types: [20, 23], values: [stamp, bound])
            }
        }
    }

    /// `DELETE … WHERE id <= $1` (int4, binary): the server cascades to the children.
    /// Answers the parents deleted.
    @inline(never)
    package func deleteParents() throws -> Int {
        var bound = Int32(WriteFixture.deletedParents).bigEndian
        return try withUnsafeBytes(of: &bound) { bound in
            try command(WriteFixture.deleteParents, types: [23], values: [bound])
        }
    }

    /// `PQexecParams` of a statement that returns no rows, its parameters in binary;
    /// answers `PQcmdTuples`.
    private func command(_ sql: String, types: [Oid], values: [UnsafeRawBufferPointer]) throws -> Int {
        let pointers: [UnsafePointer<CChar>?] = values.map { $0.baseAddress!.assumingMemoryBound(to: CChar.self) }
        let lengths = values.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: values.count)
        let result = PQexecParams(handle, sql, Int32(values.count), types, pointers, lengths, formats, 1)
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw Failure(description: String(cString: PQerrorMessage(handle)))
        }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }
}
