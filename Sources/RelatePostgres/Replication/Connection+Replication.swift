import CLibPQ
import Foundation

extension Connection {
    /// Creates a temporary logical replication slot with the built-in `pgoutput` plugin
    /// (dropped by the server when this connection ends) and starts streaming the changes
    /// of `publications` committed from now on. The connection must have been opened with
    /// `replication=database`; afterwards it only reads ``readReplicationMessage()`` and
    /// sends ``sendStandbyStatus(received:flushed:)``.
    ///
    /// Slot names are lowercase letters, digits and underscores (the server's rule).
    ///
    /// ```swift
    /// let stream = try Connection(sameAs: connection, adding: ["replication": "database"])
    /// try stream.startLogicalReplication(slot: "relate_feed", publications: ["relate_changes"])
    /// while true {
    ///     guard let message = try stream.readReplicationMessage() else {
    ///         _ = try stream.waitForInput(timeout: .seconds(10))
    ///         continue
    ///     }
    ///     if case .data(_, let end, let payload) = message {
    ///         print(try PgOutputMessage(payload))
    ///         try stream.sendStandbyStatus(received: end, flushed: end)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - slot: The temporary slot's name.
    ///   - publications: The publications whose tables' changes are streamed; at least one.
    ///   - importer: Given, the slot exports its snapshot — the database as of its
    ///     consistent point, whose later changes the stream brings — and `importer` is called
    ///     with the snapshot's name before streaming starts, the only moment it can be taken:
    ///     another connection of the database takes it then (`SET TRANSACTION SNAPSHOT`
    ///     first in a `REPEATABLE READ` transaction) and reads, in that transaction, the
    ///     rows the stream's changes apply to. (Read here instead, `USE_SNAPSHOT`, any error
    ///     would drop the temporary slot.)
    /// - Returns: The position the stream starts from: the slot's consistent point.
    /// - Throws: A ``PostgresError``: ``PostgresError/Kind-swift.struct/invalidInput`` for a bad
    ///   slot name or no publication, the server's error (no `REPLICATION` attribute, a
    ///   `wal_level` below `logical`, a missing publication), or a lost connection.
    @discardableResult
    public func startLogicalReplication(slot: String, publications: [String], exportingSnapshotTo importer: ((String) -> Void)? = nil) throws -> LSN {
        guard !slot.isEmpty, slot.utf8.count <= 63,
            slot.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
        else {
            throw PostgresError(kind: .invalidInput, message: "replication slot name \"\(slot)\" must be lowercase letters, digits and underscores")
        }
        guard !publications.isEmpty else {
            throw PostgresError(kind: .invalidInput, message: "logical replication needs at least one publication")
        }
        let handle = try openHandle()
        let create = "CREATE_REPLICATION_SLOT \(slot) TEMPORARY LOGICAL pgoutput \(importer == nil ? "NOEXPORT_SNAPSHOT" : "EXPORT_SNAPSHOT")"
        let created = try roundTrip(.replication, .one(create, nil)) { try checked(PQexec(handle, create), sql: create, parameters: nil) }
        guard let point = LSN((try? created[0].decode(String.self, at: 1)) ?? "") else {
            throw PostgresError(kind: .client, message: "the server answered CREATE_REPLICATION_SLOT without a consistent point", sql: create)
        }
        if let importer, let snapshot = try? created[0].decode(String.self, at: 2) { importer(snapshot) }
        let names = try quoteLiteral(try publications.map { try quoteIdentifier($0) }.joined(separator: ","))
        let start = "START_REPLICATION SLOT \(slot) LOGICAL \(point) (proto_version '1', publication_names \(names))"
        try roundTrip(.replication, .one(start, nil)) {
            guard let result = PQexec(handle, start) else { throw connectionError(sql: start) }
            guard PQresultStatus(result) == PGRES_COPY_BOTH else {
                _ = try checked(result, sql: start, parameters: nil)
                throw PostgresError(kind: .client, message: "the server did not start streaming", sql: start)
            }
            PQclear(result)
        }
        return point
    }

    /// The next message of the replication stream, without waiting: `nil` when none has
    /// arrived yet (``waitForInput(timeout:)`` waits for one). The end of the stream or a
    /// dropped connection is an error.
    ///
    /// - Returns: The next message, or `nil` when none has arrived.
    /// - Throws: A ``PostgresError`` when the stream ended, the connection dropped, or a
    ///   message is malformed.
    public func readReplicationMessage() throws -> ReplicationMessage? {
        let handle = try openHandle()
        guard PQconsumeInput(handle) == 1 else { throw connectionError(sql: nil) }
        var buffer: UnsafeMutablePointer<CChar>?
        let length = PQgetCopyData(handle, &buffer, 1)
        if length > 0, let buffer {
            defer { PQfreemem(buffer) }
            let bytes = [UInt8](UnsafeRawBufferPointer(start: buffer, count: Int(length)))
            return try ReplicationMessage(bytes)
        }
        if length == 0 { return nil }
        // -1: the server ended the stream; its final result says why. -2: an error.
        var failure = connectionError(sql: nil)
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_FATAL_ERROR {
                failure = Self.error(from: result, sql: "START_REPLICATION", parameters: nil, connectionLost: !isOpen, libpqMessage: libpqMessage)
            }
            PQclear(result)
        }
        if failure.message.isEmpty { failure.message = "the server ended the replication stream" }
        throw failure
    }

    /// Tells the server how far this client has read and handled the stream: what it may
    /// forget, and the answer a keepalive that asks for one waits for.
    ///
    /// - Parameters:
    ///   - received: The position up to which messages were received.
    ///   - flushed: The position up to which their changes were handled for good: the slot may
    ///     forget what comes before.
    /// - Throws: A ``PostgresError`` when the connection dropped.
    public func sendStandbyStatus(received: LSN, flushed: LSN) throws {
        let handle = try openHandle()
        let message = ReplicationMessage.statusUpdate(received: received, flushed: flushed, applied: flushed)
        let sent = message.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
        }
        guard sent == 1, PQflush(handle) == 0 else { throw connectionError(sql: nil) }
    }

    /// `text` as a quoted SQL string literal, by libpq's `PQescapeLiteral`.
    ///
    /// - Parameter text: The text to quote.
    /// - Returns: The literal, quotes and escapes included (`'it''s'`).
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/invalidInput``
    ///   when the text holds a NUL byte or libpq cannot quote it.
    public func quoteLiteral(_ text: String) throws -> String {
        let handle = try openHandle()
        guard !text.utf8.contains(0) else {
            throw PostgresError(kind: .invalidInput, message: "a string literal cannot contain a NUL byte")
        }
        guard let quoted = PQescapeLiteral(handle, text, text.utf8.count) else {
            throw PostgresError(kind: .invalidInput, message: "cannot quote literal: \(libpqMessage)")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }
}
