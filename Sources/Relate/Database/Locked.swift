import Foundation

/// A value behind a lock. A pthread mutex (through `NSLock`) rather than the standard
/// library's `Mutex`, whose futex-based lock the thread sanitizer does not see: with it,
/// every access under the lock was reported as a race, hiding any real one.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
