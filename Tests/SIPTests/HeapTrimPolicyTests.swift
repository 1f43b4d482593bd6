import Testing

@testable import SIP

@Suite struct HeapTrimPolicyTests {
    @Test(
        "trims once most of a large peak has ended",
        arguments: [
            ([10, 100, 300, 100, 0], [false, false, false, false, false]),  // never large
            ([600, 2000, 1000, 600, 499, 400, 0], [false, false, false, false, true, false, false]),
            ([5000, 1249, 5000, 1000], [false, true, false, true])  // a second flood trims again
        ] as [([Int], [Bool])])
    func trims(_ counts: [Int], _ expected: [Bool]) {
        var policy = HeapTrimPolicy(minimumPeak: 512)
        #expect(counts.map { policy.shouldTrim(liveTransactions: $0) } == expected)
    }
}
