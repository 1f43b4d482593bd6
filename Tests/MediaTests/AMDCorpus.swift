import Foundation
import Media
import Speech
import TestSupport
import Testing

/// The answering-machine set for the tests: `Speech`'s `AMDSamples` (the data and the
/// rendering are shared with the simulator and `BENCH amd`), each sample made once per test
/// run, off the cooperative pool (espeak-ng runs as a process).
actor AMDCorpus {
    static let shared = AMDCorpus()

    static var samples: [AMDSample] { AMDSamples.all }
    static var people: [AMDSample] { AMDSamples.people }
    static var machines: [AMDSample] { AMDSamples.machines }
    static var faxes: [AMDSample] { AMDSamples.faxes }

    private var made: [String: Task<AMDAudio, any Error>] = [:]

    /// The sample's audio at its rate, noise included.
    func audio(_ sample: AMDSample, beep: Bool = true) async throws -> AMDAudio {
        // Several tests hear the same call: make each once.
        let key = "\(sample.name)|\(beep)"
        let task =
            made[key] ?? Task { try await offThePool { () throws(SpeechError) in try sample.render(beep: beep) } }
        made[key] = task
        return try await task.value
    }
}

/// Everything a detector said about a call, fed 20 ms at a time.
struct AMDRun {
    var events: [AMDEvent] = []
    var result: AMDResult? {
        for case .verdict(let result) in events { return result }
        return nil
    }
    var beepEnd: Int? {
        for case .beep(let endedAt, _, _) in events { return endedAt }
        return nil
    }

    init(_ pcm: [Int16], sampleRate: Int, settings: AMDSettings = AMDSettings()) throws {
        var detector = try AnsweringMachineDetector(sampleRate: sampleRate, settings: settings)
        let frame = sampleRate / 50
        pcm.withUnsafeBufferPointer { all in
            var start = 0
            while start + frame <= all.count, !detector.isFinished {
                if let event = detector.process(UnsafeBufferPointer(rebasing: all[start..<start + frame])) {
                    events.append(event)
                }
                start += frame
            }
        }
    }
}
