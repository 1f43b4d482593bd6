// BENCH amd on a small set: the line's fields as `make bench` prints them, and its skip.

import Foundation
import Media
import Speech
import TestSupport
import Testing

@testable import irisgw_bench

@Suite struct AMDBenchTests {
    /// `key=value` fields of a BENCH line (quoted values may hold spaces).
    static func fields(_ line: String) -> [String: String] {
        var out: [String: String] = [:]
        let pattern = /([a-z0-9_]+)=("[^"]*"|\S+)/
        for match in line.matches(of: pattern) {
            out[String(match.1)] = String(match.2).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return out
    }

    /// Two people and two machines in different voices: all right, the times those of the
    /// detector's rules, the beeps found where they end.
    @Test func tinySetGivesEveryField() async throws {
        let samples = [AMDSamples.people[0], AMDSamples.people[5], AMDSamples.machines[0], AMDSamples.machines[3]]
        let line = await offThePool { AMDBench.run(samples: samples) }
        #expect(line.hasPrefix("BENCH amd "), "\(line)")
        let f = Self.fields(line)
        #expect(f["people"] == "2" && f["machines"] == "2", "\(line)")
        #expect(f["human_accuracy"] == "1.00" && f["machine_accuracy"] == "1.00", "\(line)")
        let median = try #require(f["median_verdict_ms"].flatMap(Double.init))
        let p90 = try #require(f["p90_verdict_ms"].flatMap(Double.init))
        // A person is decided by 800 ms of silence after a word, a machine by 1.5 s of speech.
        #expect(median >= 1_000 && p90 >= median && p90 <= 5_000, "\(line)")
        #expect(f["beep_found_rate"] == "1.00", "\(line)")
        let beepError = try #require(f["median_beep_end_error_ms"].flatMap(Double.init))
        #expect(beepError <= 100)
        #expect(f["pass"] == "true" && f["wrong"] == nil, "\(line)")
        for key in [
            "target_accuracy_min", "target_median_verdict_ms_max", "target_beep_found_rate_min",
            "target_beep_end_error_ms_max", "detector_us_per_frame", "seconds"
        ] {
            #expect(f[key].flatMap(Double.init) != nil, "\(key) in \(line)")
        }
    }

    /// A wrong verdict fails the line and is named; a beep missed lowers the found-rate.
    @Test func wrongVerdictsFailTheLine() {
        let person = AMDSamples.people[0]
        let machine = AMDSamples.machines[0]
        let outcomes = [
            AMDBench.Outcome(
                sample: person, result: AMDResult(verdict: .machine, cause: .longGreeting, milliseconds: 2_000)),
            AMDBench.Outcome(
                sample: machine, result: AMDResult(verdict: .machine, cause: .maxWords, milliseconds: 1_800)),
            AMDBench.Outcome(
                sample: machine, result: AMDResult(verdict: .machine, cause: .maxWords, milliseconds: 1_900),
                beepErrorMs: 12)
        ]
        let f = Self.fields(AMDBench.line(outcomes, targets: .init(), usPerFrame: 1, wallSeconds: 1))
        #expect(f["human_accuracy"] == "0.00" && f["machine_accuracy"] == "1.00")
        #expect(f["beep_found_rate"] == "0.50" && f["median_beep_end_error_ms"] == "12")
        #expect(f["median_verdict_ms"] == "1900" && f["p90_verdict_ms"] == "2000")
        #expect(f["pass"] == "false")
        #expect(f["wrong"] == "en-us Hello?: machine/longGreeting@2000ms")
    }

    /// Without espeak-ng the bench says so and measures nothing.
    @Test func skippedWithoutEspeak() async {
        let line = await offThePool {
            AMDBench.run(
                samples: [AMDSamples.people[0]], synthesizer: SpeechSynthesizer(executable: "/nonexistent/espeak-ng"))
        }
        #expect(line.hasPrefix("BENCH amd skipped=\""), "\(line)")
        #expect(line.contains("espeak-ng not found at /nonexistent/espeak-ng"), "\(line)")
    }
}
