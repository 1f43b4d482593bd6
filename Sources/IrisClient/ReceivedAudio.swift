import Media

/// The PCM a leg has received and decoded, one 20 ms frame per tick from the first packet
/// on (gaps and losses as silence or concealment, so it follows wall-clock time):
/// a recording bounded by a limit, and a ring of the last seconds for tone measurements.
///
/// Both are allocated once, except the recording, which grows (amortised) up to its limit
/// rather than reserving e.g. 10 minutes of 48 kHz audio (55 MB) up front.
struct ReceivedAudio: Sendable {
    /// Seconds of audio the analysis ring holds (the most `toneLevel` can look back).
    static let analysisSeconds = 10.0

    let sampleRate: Int
    let recordingLimit: Int
    private(set) var recording: [Int16] = []
    private var ring: [Int16]
    private var ringNext = 0
    private var ringFilled = 0

    init(sampleRate: Int, recordingLimitSeconds: Double) {
        self.sampleRate = sampleRate
        recordingLimit = max(Int(recordingLimitSeconds * Double(sampleRate)), 0)
        ring = [Int16](repeating: 0, count: Int(Self.analysisSeconds * Double(sampleRate)))
        recording.reserveCapacity(min(recordingLimit, 60 * sampleRate))
    }

    /// Appends one decoded frame.
    mutating func append(_ frame: UnsafeBufferPointer<Int16>) {
        let room = recordingLimit - recording.count
        if room > 0 { recording.append(contentsOf: UnsafeBufferPointer(rebasing: frame[0..<min(room, frame.count)])) }
        var next = ringNext
        ring.withUnsafeMutableBufferPointer { ring in
            for sample in frame {
                ring[next] = sample
                next = next + 1 == ring.count ? 0 : next + 1
            }
        }
        ringNext = next
        ringFilled = min(ringFilled + frame.count, ring.count)
    }

    /// Empties the recording and the analysis ring.
    mutating func clear() {
        recording.removeAll(keepingCapacity: true)
        ringFilled = 0
        ringNext = 0
    }

    /// A fresh copy of the recording. Built element by element so it never shares storage
    /// with `recording`: a shared buffer would make the media thread's next append copy
    /// the whole recording.
    func recordingCopy() -> [Int16] {
        [Int16](unsafeUninitializedCapacity: recording.count) { out, count in
            recording.withUnsafeBufferPointer { source in
                guard let from = source.baseAddress, let to = out.baseAddress else { return }
                to.initialize(from: from, count: source.count)
            }
            count = recording.count
        }
    }

    /// The last `count` samples received (fewer when less has arrived), oldest first.
    func last(_ count: Int) -> [Int16] {
        let n = min(max(count, 0), ringFilled)
        var start = ringNext - n
        if start < 0 { start += ring.count }
        if start + n <= ring.count { return Array(ring[start..<(start + n)]) }
        return Array(ring[start...]) + Array(ring[0..<(start + n - ring.count)])
    }

    /// The share (0...1) of the energy of `samples` at `hz`: Goertzel power in blocks of a
    /// whole number of cycles nearest 50 ms (so a tone exactly at `hz` has no leakage, and
    /// one a few Hz off still scores high), summed and divided by the total energy.
    /// 0 for silence, for no samples, and for `hz` at or above the Nyquist frequency.
    static func toneLevel(_ samples: [Int16], hz: Double, sampleRate: Int) -> Double {
        let rate = Double(sampleRate)
        guard hz > 0, hz < rate / 2, !samples.isEmpty else { return 0 }
        let cycles = max((hz * 0.05).rounded(), 1)
        let block = max(min(Int((cycles * rate / hz).rounded()), samples.count), 1)
        let goertzel = Goertzel(frequency: hz, sampleRate: rate)
        var toneEnergy = 0.0
        var energy = 0.0
        // Whole blocks from the newest sample back; the oldest remainder is left out.
        var end = samples.count
        while end - block >= 0 {
            let slice = samples[(end - block)..<end]
            // A sine's bin power is A²N²/4 and its energy A²N/2: 2·P/N is its energy.
            toneEnergy += 2 * goertzel.power(slice) / Double(block)
            for s in slice { energy += Double(s) * Double(s) }
            end -= block
        }
        guard energy > 0 else { return 0 }
        return min(toneEnergy / energy, 1)
    }
}
