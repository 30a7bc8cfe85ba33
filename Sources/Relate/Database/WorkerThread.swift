import Foundation
import Synchronization

/// A thread of the pool's own that runs jobs one after another. libpq blocks the thread
/// that calls it until the server answers, so every call runs here, never on a thread of
/// Swift's cooperative pool, where a wait would hold up every other task.
final class WorkerThread: Sendable {
    private let jobs = Locked<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)

    init(name: String) {
        // The thread holds the worker until `stop()`.
        let thread = Thread { [self] in run() }
        thread.name = name
        // Units recurse (a cascade through a long chain of rows, a deep decode): a main
        // thread's stack, not the 512 KB a secondary thread gets on macOS.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Runs `job` on this thread after the jobs before it.
    func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        ready.signal()
    }

    /// Ends the thread once the jobs submitted so far have run.
    func stop() {
        stopping.store(true, ordering: .releasing)
        ready.signal()
    }

    private func run() {
        while true {
            ready.wait()
            if let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                job()
            } else if stopping.load(ordering: .acquiring) {
                return
            }
        }
    }
}
