import Testing

/// A trait that lets at most `limit` tests of the suite it marks run at once (the gateway
/// suites: one `irisgw serve` with real-time media threads per core). A test waits for a
/// slot suspended, holding no thread; suites beside it run on.
struct ConcurrencyLimit: SuiteTrait, TestTrait, TestScoping {
    let slots: TestSlots
    var isRecursive: Bool { true }

    /// Scopes each test case (and each argument of a parameterized test), not the suites.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { testCase == nil ? nil : self }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await slots.acquire()
        do {
            try await function()
        } catch {
            await slots.release()
            throw error
        }
        await slots.release()
    }
}

extension SuiteTrait where Self == ConcurrencyLimit {
    /// At most `limit` test cases of the suite (and the suites inside it) at once.
    static func atMost(_ slots: TestSlots) -> Self { ConcurrencyLimit(slots: slots) }
}

/// A counting semaphore for tests: `acquire` suspends (FIFO) until a slot is free.
actor TestSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}
