import Foundation
import IOCore
import Synchronization
import TestSupport
import Testing

@testable import Media

/// A call's commands never wait on its media thread (the SIP loop sends them and goes on):
/// with the thread held busy they return at once, run there in the order sent once it is
/// free, and `close` hands the final statistics back on the media thread.
@Suite(.serialized) struct MediaCallNoWaitTests {
    /// What a caller thread got done while the media thread was held.
    final class Progress: Sendable {
        let returned = Mutex<[String]>([])
        let closedWith = Mutex<(stats: [MediaLeg: MediaLegStatistics], onMediaThread: Bool)?>(nil)
        let reconfigured = Mutex<(error: String?, onMediaThread: Bool)?>(nil)
    }

    enum Command: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case reconfigureThenClose, closeOnly
        var testDescription: String { rawValue }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Command.allCases)
    func commandsReturnWhileTheMediaThreadIsBusy(_ command: Command) async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let carrier = try RTPTestPeer()
        let config = MediaCallConfiguration(
            trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
            platform: .init(codec: .pcmu, payloadType: 0))
        let call = try engine.openCall(config)
        let thread = try #require(engine.threads.first)
        // Hold the media thread until the caller's commands have returned (or the wait gave up).
        let gate = DispatchSemaphore(value: 0)
        thread.loop.execute { gate.wait() }
        let progress = Progress()
        var pcma = config
        pcma.trunk = .init(codec: .pcma, payloadType: 8, remote: carrier.address)
        let reconfigure = pcma
        Thread {
            if command == .reconfigureThenClose {
                call.reconfigure(reconfigure) { error in
                    progress.reconfigured.withLock { $0 = (error.map { "\($0)" }, thread.loop.isInLoop) }
                }
                progress.returned.withLock { $0.append("reconfigure") }
            }
            call.close { stats in
                progress.closedWith.withLock { $0 = (stats, thread.loop.isInLoop) }
            }
            progress.returned.withLock { $0.append("close") }
        }.start()
        let expected = command == .reconfigureThenClose ? ["reconfigure", "close"] : ["close"]
        let returned = await eventually(timeout: 5) { progress.returned.withLock { $0 } == expected }
        #expect(returned, "the commands waited for the busy media thread")
        // Nothing ran while the thread was held.
        #expect(progress.closedWith.withLock { $0 == nil } && progress.reconfigured.withLock { $0 == nil })
        gate.signal()
        #expect(await eventually(timeout: 5) { progress.closedWith.withLock { $0 != nil } })
        let closed = try #require(progress.closedWith.withLock { $0 })
        #expect(closed.onMediaThread)
        #expect(Set(closed.stats.keys) == [.trunk, .platform], "the final statistics of both legs")
        if command == .reconfigureThenClose {
            let reconfigured = try #require(progress.reconfigured.withLock { $0 }, "the rebuild ran before the close")
            #expect(reconfigured.error == nil && reconfigured.onMediaThread)
        }
        // The call is gone from its thread and its ports went back (to quarantine).
        #expect(await eventually(timeout: 5) { thread.callCount == 0 })
        // Closing again hands back nothing, at once.
        let again = Mutex<[MediaLeg: MediaLegStatistics]?>(nil)
        call.close { stats in again.withLock { $0 = stats } }
        #expect(again.withLock { $0 } == [:])
    }

    /// Opening a call from another event loop's thread never waits on the media thread:
    /// with it held busy the open returns, and the call is attached once the thread is free.
    @Test(.timeLimit(.minutes(1)))
    func openingFromALoopDoesNotWaitOnTheMediaThread() async throws {
        let engine = try TestMediaEngine.make()
        defer { engine.shutdown() }
        let thread = try #require(engine.threads.first)
        let gate = DispatchSemaphore(value: 0)
        thread.loop.execute { gate.wait() }
        let sip = try EventLoop()
        sip.start(name: "test-sip-loop")
        defer { sip.stop() }
        let opened = Mutex<MediaCall?>(nil)
        sip.execute {
            let config = MediaCallConfiguration(
                trunk: .init(codec: .pcmu, payloadType: 0), platform: .init(codec: .pcmu, payloadType: 0))
            let call = try? engine.openCall(config)
            opened.withLock { $0 = call }
        }
        #expect(
            await eventually(timeout: 5) { opened.withLock { $0 != nil } }, "the open waited for the busy media thread")
        #expect(thread.callCount == 0, "attached only once the thread is free")
        gate.signal()
        #expect(await eventually(timeout: 5) { thread.callCount == 1 })
        opened.withLock { $0 }?.close()
        #expect(await eventually(timeout: 5) { thread.callCount == 0 })
    }
}
