/// In-band DTMF for one call: 8 kHz PCM frames (20 ms) in, the same `.began`/`.ended`
/// events as `DTMFReceiver` out.
///
/// spandsp's `DTMFDetector` decides that a key was pressed (Q.23/Q.24 level, twist and
/// timing checks, so speech rarely falses it) and reports it once, when it starts. This
/// adapter adds the end: it follows the reported key's two frequencies with Goertzel
/// filters frame by frame, and ends the digit once they have been absent for
/// `endFrames` frames. The duration is the number of frames that held the tone (a frame
/// counts when the pair fills more than half of it) times the frame length.
///
/// Debouncing: a key is one digit for as long as its tones last, whatever spandsp reports
/// meanwhile; a repeat of the same key is a new digit only after a gap. Not thread-safe:
/// one owner (spandsp state inside).
public final class InbandDTMF {
    /// Detector settings.
    public struct Configuration: Sendable, Equatable {
        /// Consecutive frames without the tone pair that end a digit. Default 2 (40 ms at
        /// 20 ms frames): one frame's dropout does not split a held key.
        public var endFrames: Int
        /// Suppress 350/440 Hz dial tone before detection (costs CPU). Default false.
        public var filterDialTone: Bool
        /// The least amplitude (peak, linear 16-bit) each frequency of the pair needs for a
        /// frame to count as holding the tone. Default 100 (about -44 dBm0).
        public var minimumAmplitude: Double

        /// Settings with the documented defaults.
        public init(endFrames: Int = 2, filterDialTone: Bool = false, minimumAmplitude: Double = 100) {
            self.endFrames = max(endFrames, 1)
            self.filterDialTone = filterDialTone
            self.minimumAmplitude = minimumAmplitude
        }
    }

    /// The PCM sample rate, fixed by spandsp.
    public static let sampleRate = 8_000

    /// The settings in use.
    public let configuration: Configuration
    private let detector: DTMFDetector

    // The digit reported by spandsp and still sounding.
    private var active: DTMFDigit?
    private var activeSamples = 0
    private var missedFrames = 0
    private var missedSamples = 0

    // The latest run of frames holding one key's tone pair, kept after it stops because
    // spandsp may confirm the key a frame late.
    private var runDigit: DTMFDigit?
    private var runSamples = 0
    private var runOngoing = false

    /// A detector with no digit in progress.
    public init(configuration: Configuration = Configuration()) throws(SpanDSPError) {
        self.configuration = configuration
        detector = try DTMFDetector(filterDialTone: configuration.filterDialTone)
    }

    /// The key currently held down, if any.
    public var activeDigit: DTMFDigit? { active }

    /// Runs one frame of 8 kHz PCM through the detector; returns what it caused.
    public func process(_ pcm: [Int16]) -> DTMFEvents {
        pcm.withUnsafeBufferPointer { process($0) }
    }

    /// Runs one frame of 8 kHz PCM through the detector; returns what it caused.
    public func process(_ pcm: UnsafeBufferPointer<Int16>) -> DTMFEvents {
        var out = DTMFEvents()
        guard !pcm.isEmpty else { return out }
        let heard = toneHeard(in: pcm)
        if let heard, runOngoing, heard == runDigit {
            runSamples += pcm.count
        } else {
            runOngoing = heard != nil
            if heard != nil {
                runDigit = heard
                runSamples = pcm.count
            }
        }

        var begunNow = false
        for character in detector.process(pcm) {
            guard let digit = DTMFDigit(character) else { continue }
            // The same key with no gap seen is the held key reported again.
            if digit == active, missedFrames == 0 { continue }
            if let active { out.append(.ended(active, durationMs: milliseconds(activeSamples))) }
            active = digit
            begunNow = true
            out.append(.began(digit))
            if runDigit == digit {
                activeSamples = runSamples
                missedFrames = runOngoing ? 0 : 1
            } else {
                // spandsp heard it though this frame was not clearly the pair (a ragged
                // start): count the frame and look for the tone from the next one.
                activeSamples = pcm.count
                missedFrames = 0
            }
            missedSamples = 0
        }
        guard let active, !begunNow else { return out }

        if heard == active {
            // A dropout shorter than `endFrames` was part of the key press.
            activeSamples += missedSamples + pcm.count
            missedFrames = 0
            missedSamples = 0
        } else {
            missedFrames += 1
            missedSamples += pcm.count
            if missedFrames >= configuration.endFrames { end(active, into: &out) }
        }
        return out
    }

    /// Reports that a frame of `count` samples was lost: a digit in progress is assumed
    /// to continue through it.
    public func frameLost(count: Int = 160) -> DTMFEvents {
        detector.skip(count: count)
        if active != nil, missedFrames == 0 { activeSamples += max(count, 0) }
        return DTMFEvents()
    }

    /// Ends a digit still in progress (at the end of the call).
    public func finish() -> DTMFEvents {
        var out = DTMFEvents()
        if let active { end(active, into: &out) }
        return out
    }

    // MARK: - Private

    private func end(_ digit: DTMFDigit, into out: inout DTMFEvents) {
        out.append(.ended(digit, durationMs: milliseconds(activeSamples)))
        active = nil
        activeSamples = 0
        missedFrames = 0
        missedSamples = 0
    }

    private func milliseconds(_ samples: Int) -> Int { (samples * 1000 + Self.sampleRate / 2) / Self.sampleRate }

    /// The key whose tone pair fills most of the frame, if any.
    private func toneHeard(in pcm: UnsafeBufferPointer<Int16>) -> DTMFDigit? {
        var energy = 0.0
        for sample in pcm { energy += Double(sample) * Double(sample) }
        guard energy > 0 else { return nil }
        let (row, rowPower) = strongest(Self.rows, in: pcm)
        let (column, columnPower) = strongest(Self.columns, in: pcm)
        let n = Double(pcm.count)
        // A sine's bin power is A²N²/4: back to amplitudes and shares of the frame energy.
        let minimumPower = configuration.minimumAmplitude * configuration.minimumAmplitude * n * n / 4
        guard rowPower >= minimumPower, columnPower >= minimumPower else { return nil }
        let rowShare = 2 * rowPower / (n * energy)
        let columnShare = 2 * columnPower / (n * energy)
        // Both tones present (twist within about ±9 dB) and together most of the frame.
        guard rowShare > 0.05, columnShare > 0.05, rowShare + columnShare > 0.5 else { return nil }
        return Self.keypad[row * 4 + column]
    }

    private func strongest(_ frequencies: [Goertzel], in pcm: UnsafeBufferPointer<Int16>) -> (Int, Double) {
        var best = 0
        var bestPower = -1.0
        for index in frequencies.indices {
            let power = frequencies[index].power(pcm)
            if power > bestPower {
                best = index
                bestPower = power
            }
        }
        return (best, bestPower)
    }

    private static let rows = [697.0, 770, 852, 941].map { Goertzel(frequency: $0, sampleRate: Double(sampleRate)) }
    private static let columns = [1209.0, 1336, 1477, 1633].map {
        Goertzel(frequency: $0, sampleRate: Double(sampleRate))
    }
    private static let keypad: [DTMFDigit] = [
        .one, .two, .three, .a,
        .four, .five, .six, .b,
        .seven, .eight, .nine, .c,
        .star, .zero, .pound, .d
    ]
}
