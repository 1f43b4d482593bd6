// The pieces of BENCH transfer that decide what it measures: every call let go at once, and
// each room's milestones stamped when they first arrive.

import Foundation
import IrisAPI
import Synchronization
import TestSupport
import Testing

@testable import irisgw_bench

@Suite struct TransferBenchTests {
    /// Each body waits until all have started: run one after another, none would finish.
    @Test func togetherRunsEveryBodyAtOnceAndKeepsTheOrder() async {
        let started = Atomic<Int>(0)
        let count = 20
        let results = await offThePool {
            TransferBench.together(Array(0..<count)) { i -> (Int, Bool) in
                started.add(1, ordering: .relaxed)
                let end = Date().addingTimeInterval(10)
                while started.load(ordering: .relaxed) < count, Date() < end { usleep(1_000) }
                return (i * 10, started.load(ordering: .relaxed) == count)
            }
        }
        #expect(results.map(\.0) == (0..<count).map { $0 * 10 })
        #expect(results.allSatisfy { $0.1 })
        #expect(TransferBench.together([String]()) { $0 }.isEmpty)
    }

    static func event(
        _ name: SessionEvent.Name, room: String, status: SessionStatus? = nil, transfer: TransferState? = nil
    ) -> SessionEvent {
        var e = SessionEvent(event: name, roomId: room, traceId: "t")
        e.status = status
        e.transfer = transfer.map { TransferInfo(state: $0, by: "app", method: "refer") }
        return e
    }

    @Test func arrivalsKeepTheFirstTimeOfEachMilestone() {
        let a = TransferBench.Arrivals()
        a.record(Self.event(.onSessionSIPStatus, room: "r1", status: .connecting), arrived: 1)
        a.record(Self.event(.onSessionSIPStatus, room: "r1", status: .connected), arrived: 2)
        a.record(Self.event(.onSessionSIPStatus, room: "r1", status: .connected), arrived: 3)
        a.record(Self.event(.onSessionTransfer, room: "r1", transfer: .ringing), arrived: 4)
        a.record(Self.event(.onSessionTransfer, room: "r1", transfer: .succeeded), arrived: 5)
        a.record(Self.event(.onSessionTransfer, room: "r2", transfer: .failed), arrived: 6)
        // The carrier's transfer request is not our transfer's outcome.
        a.record(Self.event(.onSessionTransferRequest, room: "r3", transfer: .succeeded), arrived: 7)
        #expect(a.at("r1", .connected) == 2)
        #expect(a.at("r1", .succeeded) == 5)
        #expect(a.at("r1", .failed) == nil)
        #expect(a.at("r2", .failed) == 6 && a.at("r2", .succeeded) == nil)
        #expect(a.at("r3", .succeeded) == nil)
    }
}
