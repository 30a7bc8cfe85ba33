import BenchmarkFixtures
import Foundation
import PostgresNIO

/// The writes by the thousand through postgres-nio (issue 38): its `COPY` (text format, the
/// only one it has) and, for comparison, one `INSERT … SELECT * FROM unnest(…)` of bound
/// arrays; the update and the delete as the raw side's statements.
extension PostgresNIOPeer {
    /// `copyFrom(table:columns:format:)`, which names the table unqualified: the
    /// connection's search path is set to the table's schema once (not measured).
    package func useSchema(_ schema: String) async throws {
        _ = try await connection.query(PostgresQuery(unsafeSQL: "SET search_path TO \(schema)"), logger: logger).collect()
    }

    /// The rows by `copyFrom` in its text format: each row's values as text, tab-separated,
    /// written 64 KB at a time. Answers the rows sent.
    package func copy(_ readings: [Reading]) async throws -> Int {
        try await connection.copyFrom(table: "reading", columns: WriteFixture.readingColumns, logger: logger) { writer in
            let chunk = 1 << 16
            var buffer = ByteBufferAllocator().buffer(capacity: chunk + 256)
            for reading in readings {
                buffer.writeString(String(reading.id))
                buffer.writeInteger(UInt8(ascii: "\t"))
                Self.writeEscaped(reading.name, to: &buffer)
                buffer.writeInteger(UInt8(ascii: "\t"))
                buffer.writeString(reading.amount.description)
                buffer.writeString(reading.active ? "\tt\t" : "\tf\t")
                Self.writeTimestamp(reading.created, to: &buffer)
                buffer.writeInteger(UInt8(ascii: "\n"))
                if buffer.readableBytes >= chunk {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
        return readings.count
    }

    /// The rows in one statement, each column one bound array (binary).
    package func insertUnnest(_ readings: [Reading]) async throws -> Int {
        var binds = PostgresBindings(capacity: 5)
        binds.append(readings.map(\.id))
        binds.append(readings.map(\.name))
        binds.append(readings.map(\.amount))
        binds.append(readings.map(\.active))
        binds.append(readings.map(\.created))
        _ = try await connection.query(PostgresQuery(unsafeSQL: WriteFixture.insertReadingsUnnest, binds: binds), logger: logger).collect()
        return readings.count
    }

    /// The raw side's `UPDATE … SET stamp = $1 WHERE id <= $2`.
    package func updateStamp(_ stamp: Int) async throws -> Int {
        var binds = PostgresBindings(capacity: 2)
        binds.append(stamp)
        binds.append(Int32(WriteFixture.updatedRows))
        _ = try await connection.query(PostgresQuery(unsafeSQL: WriteFixture.updateStamp, binds: binds), logger: logger).collect()
        return WriteFixture.updatedRows
    }

    /// The raw side's `DELETE … WHERE id <= $1`.
    package func deleteParents() async throws -> Int {
        var binds = PostgresBindings(capacity: 1)
        binds.append(Int32(WriteFixture.deletedParents))
        _ = try await connection.query(PostgresQuery(unsafeSQL: WriteFixture.deleteParents, binds: binds), logger: logger).collect()
        return WriteFixture.deletedParents
    }

    /// Text as COPY's text format takes it: backslash, tab, newline and carriage return escaped.
    private static func writeEscaped(_ text: String, to buffer: inout ByteBuffer) {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\t") || $0 == 10 || $0 == 13 }) else {
            buffer.writeString(text)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeString("\\t")
            case 10: buffer.writeString("\\n")
            case 13: buffer.writeString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }

    /// A `timestamptz` in UTC, `YYYY-MM-DD HH:MM:SS.ffffff+00`, written digit by digit (a
    /// date formatter per row would cost more than the copy).
    private static func writeTimestamp(_ date: Date, to buffer: inout ByteBuffer) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = time_t(micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000)
        let fraction = Int(micros - Int64(seconds) * 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                buffer.writeInteger(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); buffer.writeInteger(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); buffer.writeInteger(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); buffer.writeInteger(UInt8(ascii: " "))
        digits(Int(parts.tm_hour), 2); buffer.writeInteger(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); buffer.writeInteger(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); buffer.writeInteger(UInt8(ascii: "."))
        digits(fraction, 6)
        buffer.writeString("+00")
    }
}
