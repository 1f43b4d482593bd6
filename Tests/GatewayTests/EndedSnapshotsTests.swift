import IrisAPI
import Testing

@testable import Gateway

/// Ended sessions' snapshots live as long as their event history, and never beyond the cap.
@Suite struct EndedSnapshotsTests {
    static func snapshot(_ room: String) -> SessionSnapshot {
        SessionSnapshot(
            roomId: room, traceId: "t", direction: "outbound", status: .disconnected, sourceTN: "+15557654321",
            targetTN: "+15551230001", profile: "p", routingId: nil, earlyMedia: false, muted: false, sip: nil,
            codec: nil, ended: .completed, trunk: nil, platform: nil, lastSeq: 7)
    }

    @Test func keptForTheRetentionThenForgotten() {
        var ended = EndedSnapshots(retention: 300)
        ended.keep(Self.snapshot("a"), of: "a", now: 0)
        ended.keep(Self.snapshot("b"), of: "b", now: 200)
        #expect(ended["a"]?.roomId == "a" && ended["b"] != nil)
        ended.keep(Self.snapshot("c"), of: "c", now: 300.5)
        #expect(ended["a"] == nil, "ended 300.5 s ago: its history is gone, so is its snapshot")
        #expect(ended["b"] != nil && ended["c"] != nil && ended.count == 2)
    }

    /// A steady churn holds the table at the retention's worth, however many calls go by:
    /// the soak's RSS stepped with every doubling when the table was kept by count alone.
    @Test func aSteadyChurnKeepsTheTableLevel() {
        var ended = EndedSnapshots(retention: 300)
        for i in 0..<20_000 { ended.keep(Self.snapshot("r\(i)"), of: "r\(i)", now: Double(i) * 0.25) }
        #expect(ended.count == 1201, "300 s at 4 ends a second: \(ended.count)")
        #expect(ended["r19999"] != nil && ended["r18000"] == nil)
    }

    @Test func theCapHoldsWhenEndsComeFasterThanTheRetention() {
        var ended = EndedSnapshots(retention: 300, capacity: 100)
        for i in 0..<1_000 { ended.keep(Self.snapshot("r\(i)"), of: "r\(i)", now: 1) }
        #expect(ended.count == 100 && ended["r899"] == nil && ended["r900"] != nil)
    }
}
