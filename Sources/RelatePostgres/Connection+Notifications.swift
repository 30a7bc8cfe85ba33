import CLibPQ
import Foundation

/// A `NOTIFY` the server delivered: sent by a transaction that committed.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel named in `NOTIFY channel` (and in this connection's `LISTEN channel`).
    public var channel: String
    /// The payload string of `NOTIFY channel, 'payload'`; empty when none was given.
    public var payload: String
    /// The backend that sent it (``Connection/backendProcessID`` of the sender).
    public var processID: Int
}

extension Connection {
    /// The process ID of the server backend serving this connection.
    public var backendProcessID: Int {
        guard let handle else { return 0 }
        return Int(PQbackendPID(handle))
    }

    /// The notifications received so far, oldest first, without waiting: reads what the
    /// server has sent (notifications also arrive with the results of other statements).
    ///
    /// ```swift
    /// try connection.execute("LISTEN person_changed")
    /// if try connection.waitForInput(timeout: .seconds(5)) {
    ///     for notification in try connection.notifications() { print(notification.payload) }
    /// }
    /// ```
    ///
    /// - Returns: The notifications received since the last call; empty when there are none.
    /// - Throws: A ``PostgresError`` when the connection dropped.
    public func notifications() throws -> [PostgresNotification] {
        let handle = try openHandle()
        guard PQconsumeInput(handle) == 1 else { throw connectionError(sql: nil) }
        var received: [PostgresNotification] = []
        while let notification = PQnotifies(handle) {
            defer { PQfreemem(notification) }
            received.append(
                PostgresNotification(
                    channel: String(cString: notification.pointee.relname), payload: String(cString: notification.pointee.extra),
                    processID: Int(notification.pointee.be_pid)))
        }
        return received
    }

    /// Waits until the server sends something, at most `timeout`; answers whether it did.
    /// Blocks the calling thread (as every libpq call does).
    ///
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: `true` when the server sent something (read it with ``notifications()`` or
    ///   ``readReplicationMessage()``), `false` when the time ran out.
    /// - Throws: A ``PostgresError`` when the connection is closed or waiting fails.
    public func waitForInput(timeout: Duration) throws -> Bool {
        let handle = try openHandle()
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw connectionError(sql: nil) }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let ready = poll(&descriptor, 1, max(0, milliseconds))
        guard ready >= 0 || errno == EINTR else {
            throw PostgresError(kind: .client, message: "waiting for the server failed: \(String(cString: strerror(errno)))")
        }
        return ready > 0
    }
}
