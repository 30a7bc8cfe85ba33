import CLibPQ
import Foundation
import Synchronization

/// Asks the server to cancel what a connection is running, from any thread: libpq's cancel
/// request (`PQgetCancel` / `PQcancel`), which opens a separate short connection to the
/// server. The statement then fails with SQLSTATE 57014 (`query_canceled`).
///
/// ```swift
/// let cancel = try connection.makeCancelRequest()
/// Task.detached { try cancel.send() }        // while `connection` waits for a slow query
/// ```
///
/// A request that arrives when nothing runs is ignored by the server; one that arrives
/// late may cancel the next statement, so a connection whose request was sent is best
/// closed rather than reused (``wasSent`` says whether it was).
public final class CancelRequest: Sendable {
    /// libpq's `PGcancel *`: `PQcancel` on it is thread-safe, and it is freed only in `deinit`.
    private nonisolated(unsafe) let handle: OpaquePointer
    private let sent = Atomic<Bool>(false)

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { PQfreeCancel(handle) }

    /// Whether ``send()`` was called.
    public var wasSent: Bool { sent.load(ordering: .acquiring) }

    /// Sends the request from a thread of its own and returns at once: `PQcancel` opens a
    /// connection to the server and waits for it, which must not hold the caller (a task
    /// cancellation handler runs on whichever thread cancels). ``wasSent`` is true on return.
    public func sendInBackground() {
        sent.store(true, ordering: .releasing)
        Thread.detachNewThread { [self] in try? send() }
    }

    /// Sends the request and waits until it is delivered; throws when it could not be (the
    /// server is gone).
    ///
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/client`` with
    ///   libpq's reason.
    public func send() throws {
        sent.store(true, ordering: .releasing)
        var buffer = [CChar](repeating: 0, count: 256)
        guard PQcancel(handle, &buffer, Int32(buffer.count)) == 1 else {
            let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw PostgresError(kind: .client, message: "the cancel request could not be sent: \(message)")
        }
    }
}

extension Connection {
    /// A request that cancels what this connection runs, to send from another thread.
    ///
    /// - Returns: The request; send it with ``CancelRequest/send()`` or
    ///   ``CancelRequest/sendInBackground()``.
    /// - Throws: A ``PostgresError`` when the connection is closed or libpq cannot make one.
    public func makeCancelRequest() throws -> CancelRequest {
        let handle = try openHandle()
        guard let cancel = PQgetCancel(handle) else {
            throw PostgresError(kind: .client, message: "libpq could not make a cancel request for this connection")
        }
        return CancelRequest(handle: cancel)
    }
}
