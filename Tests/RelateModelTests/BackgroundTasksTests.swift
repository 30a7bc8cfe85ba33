import Testing

@testable import Relate

/// ``BackgroundTasks`` without a server: jobs join `run()`'s group while it runs and run on
/// their own otherwise, `run()` returns only once every job ended, cancelling it or closing
/// cancels them, and a closed owner starts nothing.
@Suite struct BackgroundTasksTests {
    /// Waits (a while at most) until `condition` holds; whether it did.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(300)
        while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return condition()
    }

    /// A job that runs until cancelled, and says when it has started.
    private func untilCancelled(_ started: BackgroundTasks.Signal) -> BackgroundTasks.Work {
        {
            started.fire()
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(60)) }
        }
    }

    @Test func withoutRunJobsRunOnTheirOwnAndCloseCancelsThem() async {
        let background = BackgroundTasks()
        let started = BackgroundTasks.Signal()
        #expect(background.start(untilCancelled(started)))
        await started.wait()
        #expect(background.count == 1 && background.detachedCount == 1)
        await background.closeAndWait()
        #expect(background.count == 0 && background.detachedCount == 0)
        // Closed: nothing starts.
        #expect(!background.start {})
        #expect(background.startCancellable {} == nil)
        #expect(background.count == 0)
    }

    @Test func aCancellableJobEndsAloneWhenItsSignalFires() async {
        let background = BackgroundTasks()
        let (first, second) = (BackgroundTasks.Signal(), BackgroundTasks.Signal())
        let stopFirst = background.startCancellable(untilCancelled(first))
        _ = background.startCancellable(untilCancelled(second))
        await first.wait()
        await second.wait()
        #expect(background.count == 2)
        stopFirst?.fire()
        #expect(await eventually { background.count == 1 })
        await background.closeAndWait()
        #expect(background.count == 0)
    }

    @Test func runOwnsTheJobsAndReturnsOnceTheyEnded() async {
        let background = BackgroundTasks()
        let before = BackgroundTasks.Signal()
        background.start(untilCancelled(before))
        await before.wait()
        let closing = BackgroundTasks.Signal()
        let running = Task {
            await background.run {
                // The service's life: until told to close.
                await closing.wait()
                background.close()
            }
        }
        #expect(await eventually { background.hasGroup })
        let during = BackgroundTasks.Signal()
        #expect(background.start(untilCancelled(during)))
        await during.wait()
        // The job started before run() is still a task of its own; the new one is in the group.
        #expect(background.count == 2 && background.detachedCount == 1)

        closing.fire()
        await running.value
        #expect(background.count == 0 && background.detachedCount == 0 && !background.hasGroup)
    }

    @Test func cancellingRunCancelsEveryJob() async {
        let background = BackgroundTasks()
        let running = Task {
            await background.run {
                let forever = BackgroundTasks.Signal()
                await withTaskCancellationHandler { await forever.wait() } onCancel: { forever.fire() }
                // Shutting down after the cancellation: what starts now still runs, and is awaited.
                let late = BackgroundTasks.Signal()
                background.start { late.fire() }
                await late.wait()
                await background.closeAndWait()
            }
        }
        #expect(await eventually { background.hasGroup })
        let job = BackgroundTasks.Signal()
        background.start(untilCancelled(job))
        await job.wait()
        running.cancel()
        await running.value
        #expect(background.count == 0 && background.detachedCount == 0)
    }
}
