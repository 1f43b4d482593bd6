import Foundation
import IOCore
import Testing

/// A class that is not Sendable: what `LoopBound` lets cross threads.
final class Counter {
    var count = 0
}

/// Runs `work` on a started loop and suspends until its result (the test thread is no loop).
private func onLoop<T: Sendable>(_ loop: EventLoop, _ work: @escaping @Sendable () -> T) async -> T {
    await loop.run(work)
}

@Suite("Loop confinement")
struct LoopBoundTests {
    enum Place: String, CaseIterable, Sendable { case beforeStart, onLoop, afterStop }

    @Test("Access on the loop, or while it does not run, works", arguments: Place.allCases)
    func accessWhereConfined(_ place: Place) async throws {
        let loop = try EventLoop()
        defer { loop.stop() }
        let bound = LoopBound(Counter(), loop: loop)
        let box = LoopBoundBox(0, loop: loop)
        switch place {
        case .beforeStart:
            #expect(loop.isConfinedHere)
            bound.value.count += 1
            box.value += 1
            #expect(bound.value.count == 1 && box.value == 1)
        case .onLoop:
            loop.start(name: "loopbound-test")
            let seen = await onLoop(loop) { () -> [Int] in
                bound.value.count += 1
                box.value += 1
                return [bound.value.count, box.value, loop.isConfinedHere ? 1 : 0]
            }
            #expect(seen == [1, 1, 1])
            #expect(!loop.isConfinedHere)
        case .afterStop:
            loop.start(name: "loopbound-test")
            loop.stop()
            #expect(loop.isConfinedHere)
            box.value += 1
            #expect(box.value == 1)
        }
    }

    @Test("A box is shared: every holder sees the loop's writes")
    func boxIsShared() async throws {
        let loop = try EventLoop()
        loop.start(name: "loopbound-test")
        defer { loop.stop() }
        let box = await onLoop(loop) { LoopBoundBox([String](), loop: loop) }
        let copy = box
        await onLoop(loop) { box.value.append("a") }
        #expect(await onLoop(loop) { copy.value } == ["a"])
    }

    @Test("The check is false off a running loop and on another loop's thread")
    func checkOffLoop() async throws {
        let loop = try EventLoop(), other = try EventLoop()
        loop.start(name: "loopbound-a")
        other.start(name: "loopbound-b")
        defer {
            loop.stop()
            other.stop()
        }
        #expect(!loop.isConfinedHere)
        #expect(!EventLoop.isOnAnyLoop)
        #expect(await onLoop(other) { loop.isConfinedHere } == false)
        #expect(await onLoop(other) { EventLoop.isOnAnyLoop })
    }

    #if DEBUG
        enum Misuse: String, CaseIterable, Sendable, Codable { case readBound, writeBox, schedule, syncFromLoop }

        @Test("Misuse off the loop traps in debug builds", arguments: Misuse.allCases)
        func misuseTraps(_ misuse: Misuse) async {
            await #expect(processExitsWith: .failure) { [misuse] in
                let loop = try EventLoop(), other = try EventLoop()
                let bound = LoopBound(Counter(), loop: loop)
                let box = LoopBoundBox(0, loop: loop)
                loop.start(name: "loopbound-trap")
                other.start(name: "loopbound-other")
                switch misuse {
                case .readBound: _ = bound.value.count
                case .writeBox: box.value = 1
                case .schedule: loop.schedule(after: 1) {}
                case .syncFromLoop: other.sync { loop.sync { 0 } }
                }
            }
        }
    #endif
}
