import Foundation

/// The threads a `Database` owns: libpq blocks the thread that calls it until the server
/// answers, so every call runs here, never on a thread of Swift's cooperative pool, where
/// a wait would hold up every other task.
///
/// It is a `TaskExecutor`: a unit of work runs its task here (`withTaskExecutorPreference`),
/// checks a connection out, and runs its body on the thread it is on. A task that already
/// prefers this executor (a loop of units, a request handler) runs unit after unit with no
/// hop between threads at all; any other task hops here and back once a unit.
///
/// At most `maxThreads` threads, started when a job finds none idle and ended when there is
/// no job left after ``shutDown()``: jobs that come later (a connection given back after
/// `close()`) still run, each on a thread started for it, so a task that keeps preferring
/// the executor after that pays a thread per hop.
final class PoolExecutor: TaskExecutor, @unchecked Sendable {
    private enum Job {
        case task(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private let maxThreads: Int
    private let name: String
    /// Guards everything below; idle threads wait on it.
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var threads = 0
    /// Threads waiting for a job, and how many of them a job has already been signalled to:
    /// a job starts a thread rather than queue behind a job another thread is about to take.
    private var idleThreads = 0
    private var signalled = 0
    private var startedThreads = 0
    private var isShutDown = false
    private var taken = 0

    init(name: String, maxThreads: Int) {
        self.name = name
        self.maxThreads = maxThreads
    }

    func enqueue(_ job: consuming ExecutorJob) {
        add(.task(UnownedJob(job)))
    }

    /// Runs `work` on a thread of this executor, after the jobs before it.
    func submit(_ work: @escaping @Sendable () -> Void) {
        add(.closure(work))
    }

    /// Whether the calling thread is one of this executor's.
    var isCurrentThread: Bool { pthread_getspecific(Self.threadMarker) == Unmanaged.passUnretained(self).toOpaque() }

    /// Whether the calling thread is one of any `PoolExecutor`'s.
    static var isPoolThread: Bool { pthread_getspecific(threadMarker) != nil }

    /// How many jobs (tasks hopping here, work handed over) threads have taken so far.
    var jobsTaken: Int {
        condition.lock()
        defer { condition.unlock() }
        return taken
    }

    /// Lets the threads end once no job is left; later jobs start threads that end the same way.
    func shutDown() {
        condition.lock()
        isShutDown = true
        condition.broadcast()
        condition.unlock()
    }

    private func add(_ job: Job) {
        condition.lock()
        jobs.append(job)
        let start = idleThreads == signalled && threads < maxThreads
        if start {
            threads += 1
            startedThreads += 1
        } else if idleThreads > signalled {
            signalled += 1
            condition.signal()
        }
        let number = startedThreads
        condition.unlock()
        if start { startThread(number: number) }
    }

    private func startThread(number: Int) {
        // The thread holds the executor until it ends.
        let name = "\(name).\(number)"
        let thread = Thread { [self] in
            // Named from inside: on Linux a name given before the start is not the one
            // perf and gdb show.
            Thread.current.name = name
            pthread_setspecific(Self.threadMarker, Unmanaged.passUnretained(self).toOpaque())
            while let job = nextJob() {
                switch job {
                case .task(let task): task.runSynchronously(on: asUnownedTaskExecutor())
                case .closure(let work): work()
                }
            }
        }
        // Units recurse (a cascade through a long chain of rows, a deep decode): a main
        // thread's stack, not the 512 KB a secondary thread gets on macOS.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// The next job, waiting for one; nil when the thread should end.
    private func nextJob() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            if isShutDown {
                threads -= 1
                return nil
            }
            idleThreads += 1
            condition.wait()
            idleThreads -= 1
            signalled = max(0, signalled - 1)
        }
        let job = jobs[head]
        head += 1
        taken += 1
        // The queue is a list read from `head`: emptied when read to the end, compacted
        // when the read part outgrows the rest, so a busy queue neither shifts nor grows.
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    /// This executor, on its threads, so a unit can check it runs on one before it blocks.
    private static let threadMarker: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}
