import Foundation
import MediaStreams
import Synchronization

/// Names a test's mark echo saw, across threads.
final class EchoLog: Sendable {
    private let log = Mutex<[String]>([])
    func add(_ name: String) { log.withLock { $0.append(name) } }
    var names: [String] { log.withLock { $0 } }
}

/// Everything a stream's handler was given, in order, for a test to wait on; audio, marks
/// and clears also go to `player` when there is one.
final class StreamRecorder: Sendable {
    private let log = Mutex<[MediaStreamEvent]>([])
    let player: MediaStreamPlayer?

    init(player: MediaStreamPlayer? = nil) { self.player = player }

    func handle(_ event: MediaStreamEvent) {
        log.withLock { $0.append(event) }
        player?.handle(event)
    }

    var events: [MediaStreamEvent] { log.withLock { $0 } }

    var audio: [[Int16]] {
        events.compactMap {
            if case .audio(let samples) = $0 { samples } else { nil }
        }
    }

    var ends: [MediaStreamEnd] {
        events.compactMap {
            if case .ended(let why) = $0 { why } else { nil }
        }
    }

    var refusals: [MediaStreamMessageError] {
        events.compactMap {
            if case .refused(let error) = $0 { error } else { nil }
        }
    }
}

/// Test audio: a tone and a measure of how much of a signal is one frequency.
enum Tone {
    /// `count` frames of `samples` each of a `hz` sine at `rate`, continuous across frames.
    static func frames(hz: Double, rate: Double = 8_000, samples: Int = 160, count: Int) -> [[Int16]] {
        (0..<count).map { f in
            (0..<samples).map { i in
                Int16(8_000 * sin(2 * .pi * hz * Double(f * samples + i) / rate))
            }
        }
    }

    /// The share (0...1) of `signal`'s energy at `hz` (Goertzel).
    static func share(of hz: Double, in signal: [Int16], rate: Double = 8_000) -> Double {
        guard !signal.isEmpty else { return 0 }
        let k = 2 * cos(2 * .pi * hz / rate)
        var s1 = 0.0, s2 = 0.0, energy = 0.0
        for x in signal.map(Double.init) {
            let s = x + k * s1 - s2
            s2 = s1
            s1 = s
            energy += x * x
        }
        let power = s1 * s1 + s2 * s2 - k * s1 * s2
        return energy > 0 ? min(1, 2 * power / (Double(signal.count) * energy)) : 0
    }
}
