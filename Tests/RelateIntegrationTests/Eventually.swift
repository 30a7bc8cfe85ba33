/// Polls `condition` every 10 ms for at most `seconds`; whether it came to hold.
///
/// `within` is loose on purpose: in the full suite, synchronous tests hold the two threads of
/// Swift's cooperative pool for up to 90 s, and the task that polls waits for one.
func eventually(within seconds: Double = 300, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return try condition()
}
