import Foundation

extension SuiteRunner {
    /// Like `run(_:)`, but asks `shouldStop` before each call: once it says yes, no other
    /// call starts (the one in progress has finished) and nil is returned for the
    /// incomplete run. For `irisgw test --every`, which stops on SIGTERM.
    public func run(_ suite: TestSuite, shouldStop: () -> Bool) -> [TestCallResult]? {
        var results: [TestCallResult] = []
        for test in suite.tests {
            for i in 1...test.repeatCount {
                if shouldStop() { return nil }
                let label = test.repeatCount > 1 ? "\(test.name) #\(i)" : test.name
                progress("▶ \(label): dialling \(test.target)")
                let r = runCall(test, iteration: i)
                progress(r.passed ? String(format: "✔ \(label) (%.1f s)", r.durationSec)
                                  : String(format: "✘ \(label) (%.1f s): step \(r.failedStep ?? 0): \(r.failure ?? "")", r.durationSec))
                results.append(r)
            }
        }
        return results
    }
}
