import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP proxy on loopback in front of a PostgreSQL server, for one fault: it forwards bytes
/// both ways as they come, reading only the message frames (a type byte and a length) to
/// tell where a `COMMIT` is, and when armed drops the connection at that point:
///
/// - `.afterCommitReply`: the server's `CommandComplete` for `COMMIT` (the server has
///   committed) is not passed on; `onDrop` runs first (to stop the server, say), then both
///   sockets close.
/// - `.beforeCommit`: the client's `COMMIT` never reaches the server; both sockets close.
///
/// Clients must connect with `sslmode=disable&gssencmode=disable` (the frames are read in
/// clear). One fault per arming.
final class DroppingProxy: @unchecked Sendable {
    enum Fault: Sendable { case afterCommitReply, beforeCommit }

    let port: Int
    private let target: Int
    private let listener: Int32
    private let armed = Mutex<(fault: Fault, onDrop: @Sendable () -> Void)?>(nil)
    private let dropped = Atomic<Int>(0)

    /// Listens on a free port of 127.0.0.1 and forwards to `127.0.0.1:target`.
    init(target: Int) throws {
        self.target = target
        let (listener, port) = try Self.listen()
        self.listener = listener
        self.port = port
        // Ends when the proxy goes (its deinit shuts the listening socket down).
        let thread = Thread { [listener, weak self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                guard let self else {
                    close(client)
                    return
                }
                self.serve(client)
            }
        }
        thread.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Drops the next connection that reaches the fault; `onDrop` runs before the sockets close.
    func arm(_ fault: Fault, onDrop: @escaping @Sendable () -> Void = {}) {
        armed.withLock { $0 = (fault, onDrop) }
    }

    /// How many connections were dropped so far.
    var drops: Int { dropped.load(ordering: .relaxed) }

    /// `url` with the proxy's port and no TLS or GSS negotiation.
    func url(user: String = "relate", database: String = "postgres") -> String {
        "postgresql://\(user)@127.0.0.1:\(port)/\(database)?sslmode=disable&gssencmode=disable&connect_timeout=5"
    }

    /// A listening socket on a free port of 127.0.0.1, and the port.
    private static func listen() throws -> (Int32, Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestFailure("proxy: socket failed: \(errno)") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(listener, 16) == 0 else { throw TestFailure("proxy: bind or listen failed: \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func serve(_ client: Int32) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: UInt16(target))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(server)
            close(client)
            return
        }
        let closed = Atomic<Bool>(false)
        let pair = Pair(client: client, server: server)
        let finish: @Sendable () -> Void = {
            guard closed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
            shutdown(pair.client, Int32(SHUT_RDWR))
            shutdown(pair.server, Int32(SHUT_RDWR))
        }
        Thread { [self] in
            forward(from: pair.client, to: pair.server, startup: true, finish: finish)
            finish()
            close(pair.client)
        }.start()
        Thread { [self] in
            forward(from: pair.server, to: pair.client, startup: false, finish: finish)
            finish()
            close(pair.server)
        }.start()
    }

    private struct Pair: Sendable {
        var client: Int32
        var server: Int32
    }

    /// Forwards whole messages from `source` to `destination` until either ends; the
    /// client's first message (the startup packet) has no type byte.
    private func forward(from source: Int32, to destination: Int32, startup: Bool, finish: @Sendable () -> Void) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var expectingStartup = startup
        while true {
            let count = read(source, &chunk, chunk.count)
            guard count > 0 else { return }
            buffer += chunk[0..<count]
            var forwardable = 0
            while true {
                let header = expectingStartup ? 4 : 5
                guard buffer.count - forwardable >= header else { break }
                let lengthAt = forwardable + (expectingStartup ? 0 : 1)
                let length = Int(buffer[lengthAt]) << 24 | Int(buffer[lengthAt + 1]) << 16 | Int(buffer[lengthAt + 2]) << 8 | Int(buffer[lengthAt + 3])
                let size = (expectingStartup ? 0 : 1) + length
                guard length >= 4, buffer.count - forwardable >= size else { break }
                if !expectingStartup, shouldDrop(type: buffer[forwardable], body: buffer[(forwardable + 5)..<(forwardable + size)], fromClient: startup) {
                    send(buffer[0..<forwardable], to: destination)
                    let onDrop = armed.withLock { state -> (@Sendable () -> Void)? in
                        defer { state = nil }
                        return state?.onDrop
                    }
                    onDrop?()
                    dropped.add(1, ordering: .relaxed)
                    finish()
                    return
                }
                expectingStartup = false
                forwardable += size
            }
            send(buffer[0..<forwardable], to: destination)
            buffer.removeFirst(forwardable)
        }
    }

    /// Whether this message is the armed fault's: the server's `CommandComplete "COMMIT"`, or
    /// the client's `COMMIT` (a simple `Query` or the `Parse` of the extended protocol).
    private func shouldDrop(type: UInt8, body: ArraySlice<UInt8>, fromClient: Bool) -> Bool {
        guard let fault = armed.withLock({ $0?.fault }) else { return false }
        switch (fault, fromClient) {
        case (.afterCommitReply, false):
            return type == UInt8(ascii: "C") && Array(body) == Array("COMMIT\0".utf8)
        case (.beforeCommit, true):
            let text = String(decoding: body, as: UTF8.self)
            if type == UInt8(ascii: "Q") { return text.hasPrefix("COMMIT") }
            // Parse: a statement name (NUL-ended), then the query text.
            if type == UInt8(ascii: "P"), let end = body.firstIndex(of: 0) {
                return String(decoding: body[(end + 1)...], as: UTF8.self).hasPrefix("COMMIT")
            }
            return false
        default:
            return false
        }
    }

    private func send(_ bytes: ArraySlice<UInt8>, to destination: Int32) {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes { write(destination, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }
}
