import Foundation
import Testing

/// A trait that lets at most `limit` tests of the suite it marks run at once (the gateway
/// suites: one `irisgw serve` with real-time media threads per core). A test waits for a
/// slot suspended, holding no thread; suites beside it run on.
public struct ConcurrencyLimit: SuiteTrait, TestTrait, TestScoping {
    let slots: TestSlots
    public var isRecursive: Bool { true }

    /// Scopes each test case (and each argument of a parameterized test), not the suites.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { testCase == nil ? nil : self }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await slots.acquire()
        let start = Date()
        defer { SlotLog.note(test, testCase, since: start) }
        do {
            try await function()
        } catch {
            await slots.release()
            throw error
        }
        await slots.release()
    }
}

/// With `IRISGW_TEST_SLOT_LOG=FILE`, each test case's time in its slot is appended to FILE
/// (`seconds name`): where a run's time goes, without the wait for a slot in it.
enum SlotLog {
    static let path = ProcessInfo.processInfo.environment["IRISGW_TEST_SLOT_LOG"]

    static func note(_ test: Test, _ testCase: Test.Case?, since start: Date) {
        guard let path else { return }
        let line = String(format: "%.2f %@\n", Date().timeIntervalSince(start), test.name)
        guard let handle = FileHandle(forWritingAtPath: path) ?? create(path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data(line.utf8))
        try? handle.close()
    }

    private static func create(_ path: String) -> FileHandle? {
        FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
    }
}

extension SuiteTrait where Self == ConcurrencyLimit {
    /// At most `limit` test cases of the suite (and the suites inside it) at once.
    public static func atMost(_ slots: TestSlots) -> Self { ConcurrencyLimit(slots: slots) }
}

/// A counting semaphore for tests: `acquire` suspends (FIFO) until a slot is free.
public actor TestSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(_ count: Int) { free = count }

    public func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    public func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// How many gateway tests run at once: `IRISGW_TEST_GATEWAY_SLOTS`, default 2 (one per core),
/// which halves the suite's time against one. The unit tests that once missed a window of a
/// few seconds beside two gateway tests (a keep-alive pong, a queued request, an SRTP rekey)
/// now wait for the condition they need rather than a short deadline; 1 is the fallback on a
/// slower machine. Timing-sensitive tests outside the gateway suites (real-time audio)
/// take a slot too, so at most one gateway test runs beside them.
public let gatewaySlots = TestSlots(
    max(1, Int(ProcessInfo.processInfo.environment["IRISGW_TEST_GATEWAY_SLOTS"] ?? "") ?? 2))
