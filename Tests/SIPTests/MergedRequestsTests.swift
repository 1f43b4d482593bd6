import Testing

@testable import SIP

/// RFC 3261 §8.2.2.2 merged requests, as a table of (key, branch, time) -> merged?.
@Suite struct MergedRequestsTests {
    struct Step: Sendable, CustomStringConvertible {
        var key: String
        var branch: String
        var at: Double
        var merged: Bool
        var description: String { "\(key) \(branch) @\(at)" }
    }

    static let rows: [(String, [Step])] = [
        (
            "a second branch of the same request within 32 s merges",
            [
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-a", at: 0, merged: false),
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-b", at: 31.9, merged: true)
            ]
        ),
        (
            "the same branch again is not a merge (a transaction absorbs retransmissions)",
            [
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-a", at: 0, merged: false),
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-a", at: 1, merged: false)
            ]
        ),
        (
            "after the window it is a new request",
            [
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-a", at: 0, merged: false),
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-b", at: 32, merged: false),
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-c", at: 40, merged: true)
            ]
        ),
        (
            "another CSeq is another request",
            [
                Step(key: "f|c|1 INVITE", branch: "z9hG4bK-a", at: 0, merged: false),
                Step(key: "f|c|2 INVITE", branch: "z9hG4bK-b", at: 1, merged: false)
            ]
        )
    ]

    @Test(arguments: rows) func merges(_ name: String, _ steps: [Step]) {
        var requests = MergedRequests()
        for step in steps {
            let merged = requests.isMerged(key: step.key, branch: step.branch, now: step.at)
            #expect(merged == step.merged, "\(name): \(step)")
        }
    }

    /// Expiry goes in arrival order: a flood's 100,000 requests within the window are all
    /// remembered up to the capacity, the oldest dropped first, and all forgotten once the
    /// window has passed.
    @Test func rememberedRequestsAreBoundedAndExpireInOrder() {
        var requests = MergedRequests(window: 32, capacity: 50_000)
        for i in 0..<100_000 {
            _ = requests.isMerged(key: "k\(i)", branch: "b\(i)", now: Double(i) * 0.0001)
        }
        #expect(requests.count <= 50_001)
        // The newest are still known (a second branch merges); the oldest were dropped.
        let newest = requests.isMerged(key: "k99999", branch: "other", now: 10)
        let oldest = requests.isMerged(key: "k0", branch: "other", now: 10)
        #expect(newest)
        #expect(!oldest)
        _ = requests.isMerged(key: "late", branch: "b", now: 100)
        #expect(requests.count == 1)
    }
}
