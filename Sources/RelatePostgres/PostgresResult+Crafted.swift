import CLibPQ
import Foundation

extension PostgresResult {
    /// A result made in memory with libpq's own functions (`PQmakeEmptyPGresult`,
    /// `PQsetResultAttrs`, `PQsetvalue`), holding exactly the bytes given: what a hostile or
    /// broken server could send and an honest one never does (an `int4` of three bytes), so
    /// that tests can feed it to the readers. `nil` when libpq refuses to make it.
    ///
    /// - Parameters:
    ///   - columns: Each column's name, type and form.
    ///   - rows: Each row's cells, in column order; `nil` for NULL.
    ///   - sql: The statement the result stands for, named in its errors.
    package static func crafted(
        columns: [(name: String, type: PostgresType, format: PostgresFormat)], rows: [[[UInt8]?]], sql: String = "crafted"
    ) -> PostgresResult? {
        guard let handle = PQmakeEmptyPGresult(nil, PGRES_TUPLES_OK) else { return nil }
        // libpq copies the names and the values into the result's own memory.
        let names = columns.map { strdup($0.name) }
        defer { names.forEach { free($0) } }
        var descriptions = zip(columns, names).map { column, name in
            PGresAttDesc(
                name: name, tableid: 0, columnid: 0, format: column.format == .binary ? 1 : 0, typid: column.type.rawValue,
                typlen: -1, atttypmod: -1)
        }
        guard PQsetResultAttrs(handle, Int32(columns.count), &descriptions) == 1 else {
            PQclear(handle)
            return nil
        }
        for (row, cells) in rows.enumerated() {
            for (column, cell) in cells.enumerated() {
                let stored: Int32
                if var cell {
                    stored = cell.withUnsafeMutableBufferPointer { bytes in
                        // A value of no bytes still needs an address (NULL stands for NULL).
                        var empty: CChar = 0
                        return bytes.baseAddress.map { start in
                            start.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                                PQsetvalue(handle, Int32(row), Int32(column), $0, Int32(bytes.count))
                            }
                        } ?? PQsetvalue(handle, Int32(row), Int32(column), &empty, 0)
                    }
                } else {
                    stored = PQsetvalue(handle, Int32(row), Int32(column), nil, -1)
                }
                guard stored == 1 else {
                    PQclear(handle)
                    return nil
                }
            }
        }
        return PostgresResult(handle: handle, sql: sql)
    }
}
