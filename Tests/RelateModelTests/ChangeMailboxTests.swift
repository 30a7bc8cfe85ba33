import Synchronization
import Testing

@testable import Relate

/// ``ChangeMailbox`` without a server: it hands over everything posted since the last take
/// at once and in order, then the feed's end (its error after what came before it), and a
/// taker's cancellation stops the feed and drops what comes later.
@Suite struct ChangeMailboxTests {
    /// A transaction that changed `count` rows (told apart by how many changes it has).
    private func committed(_ count: Int) -> CommittedChanges {
        CommittedChanges(changes: (0..<count).map { _ in Change(entity: "item", kind: .update, primaryKey: [1], changedKeys: []) }, mayHaveMissedChanges: false)
    }

    private struct Failed: Error {}

    @Test func everythingPostedMeanwhileComesAtOnceInOrderThenTheEnd() async throws {
        let mailbox = ChangeMailbox(stopFeed: {})
        mailbox.post(committed(1))
        mailbox.post(committed(2))
        mailbox.post(committed(3))
        #expect(try await mailbox.next()?.map(\.changes.count) == [1, 2, 3])
        mailbox.post(committed(4))
        mailbox.finish(nil)
        // What came before the end is taken first; what comes after it is dropped.
        mailbox.post(committed(5))
        #expect(try await mailbox.next()?.map(\.changes.count) == [4])
        #expect(try await mailbox.next() == nil)
        #expect(try await mailbox.next() == nil)
    }

    @Test func aWaitingTakerGetsTheFirstPostAndTheFeedsErrorAfterWhatCameBefore() async throws {
        let mailbox = ChangeMailbox(stopFeed: {})
        let taker = Task { try await mailbox.next()?.map(\.changes.count) }
        // The taker may or may not be waiting yet: either way it gets the post alone or with
        // the ones after it, never nothing.
        try await Task.sleep(for: .milliseconds(20))
        mailbox.post(committed(7))
        let first = try await taker.value
        #expect(first?.first == 7)
        mailbox.post(committed(8))
        mailbox.finish(Failed())
        mailbox.finish(nil)
        #expect(try await mailbox.next()?.map(\.changes.count) == [8])
        await #expect(throws: Failed.self) { try await mailbox.next() }
    }

    @Test func cancellingTheTakerStopsTheFeedAndDropsWhatComesLater() async throws {
        let stops = Atomic<Int>(0)
        let mailbox = ChangeMailbox(stopFeed: { stops.add(1, ordering: .relaxed) })
        let taker = Task { try await mailbox.next() }
        try await Task.sleep(for: .milliseconds(20))
        taker.cancel()
        await #expect(throws: CancellationError.self) { try await taker.value }
        #expect(stops.load(ordering: .relaxed) == 1)
        mailbox.post(committed(1))
        await #expect(throws: CancellationError.self) { try await mailbox.next() }
        // Cancelled before it asked: it never waits.
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await ChangeMailbox(stopFeed: {}).next()
        }
        await #expect(throws: CancellationError.self) { try await late.value }
    }
}
