import Foundation
import Media
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One call's audio for the answering-machine tests, described; `AMDCorpus.audio` makes it.
struct AMDSample: Sendable, CustomTestStringConvertible {
    enum Content: Sendable {
        /// A person: speech (" | " marks a pause of 600 ms), then silence as they wait for
        /// an answer.
        case person(voice: String, text: String)
        /// A machine: a greeting, a gap, a beep of `beepHz` for 300 ms, then silence.
        case machine(voice: String, text: String, beepHz: Double)
        /// A calling fax's CNG: 1100 Hz, 0.5 s on, 3 s off.
        case faxCalling
        /// An answering fax's CED (2100 Hz, 3.3 s), with V.8's 15 Hz AM when `modulated`.
        case faxAnswer(modulated: Bool)
        /// Nothing but the line's noise.
        case silence
    }

    let name: String
    let content: Content
    let expected: AMDVerdict
    var speed = 165
    /// Silence before the callee's first sound.
    var leadMs = 400
    var sampleRate = 8_000
    /// White noise under everything, RMS in dBFS.
    var noise = -50.0
    /// The speech's peak, in dBFS.
    var speechPeak = -6.0
    /// Through G.711 µ-law and back, as on a PCMU trunk.
    var ulaw = false

    var testDescription: String { name }
}

/// A sample's audio, and where its beep ends if it has one.
struct AMDAudio: Sendable {
    var pcm: [Int16]
    var beepEndMs: Double?
}

/// Makes the test calls: speech from espeak-ng (each phrase spoken once per test run,
/// through a temporary WAV that is removed once read), resampled from its 22050 Hz to the
/// call's rate, with tones and noise synthesised here.
actor AMDCorpus {
    static let shared = AMDCorpus()

    /// The whole set: people, machines, faxes and a dead line, in several voices.
    static let samples: [AMDSample] =
        people + machines + faxes + [
            AMDSample(name: "dead line", content: .silence, expected: .machine)
        ]

    static let people: [AMDSample] = [
        AMDSample(name: "en-us Hello?", content: .person(voice: "en-us", text: "Hello?"), expected: .human),
        AMDSample(name: "en-us Hi", content: .person(voice: "en-us", text: "Hi"), expected: .human, leadMs: 700),
        AMDSample(
            name: "en-gb Yes, hello, who is this?",
            content: .person(voice: "en-gb", text: "Yes, hello, who is this?"), expected: .human),
        AMDSample(
            name: "en-us Good morning, this is Anna",
            content: .person(voice: "en-us", text: "Good morning, this is Anna"), expected: .human, speed: 185),
        AMDSample(
            name: "en-gb Hello?", content: .person(voice: "en-gb", text: "Hello?"), expected: .human, leadMs: 250),
        AMDSample(name: "de Hallo?", content: .person(voice: "de", text: "Hallo?"), expected: .human),
        AMDSample(name: "de Ja, bitte?", content: .person(voice: "de", text: "Ja, bitte?"), expected: .human),
        AMDSample(name: "fr Allô ?", content: .person(voice: "fr-fr", text: "Allô ?"), expected: .human),
        AMDSample(
            name: "fr Oui, bonjour ?", content: .person(voice: "fr-fr", text: "Oui, bonjour ?"), expected: .human),
        AMDSample(name: "es ¿Diga?", content: .person(voice: "es", text: "¿Diga?"), expected: .human),
        AMDSample(
            name: "es Hola, ¿quién es?", content: .person(voice: "es", text: "Hola, ¿quién es?"), expected: .human),
        AMDSample(
            name: "en-us Hello? at 16 kHz", content: .person(voice: "en-us", text: "Hello?"), expected: .human,
            sampleRate: 16_000),
        AMDSample(
            name: "en-us Hello, who is this? on a noisy line",
            content: .person(voice: "en-us", text: "Hello, who is this?"), expected: .human, noise: -35),
        AMDSample(
            name: "en-us Hi, quiet line", content: .person(voice: "en-us", text: "Hi"), expected: .human,
            speechPeak: -20),
        AMDSample(name: "it Pronto?", content: .person(voice: "it", text: "Pronto?"), expected: .human),
        AMDSample(
            name: "nl Met Jan, hallo?", content: .person(voice: "nl", text: "Met Jan, hallo?"), expected: .human,
            ulaw: true),
        AMDSample(
            name: "en-us Hello? | Hello?", content: .person(voice: "en-us", text: "Hello? | Hello?"),
            expected: .human),
        AMDSample(
            name: "en-gb Hello? slowly through µ-law", content: .person(voice: "en-gb", text: "Hello?"),
            expected: .human, speed: 120, ulaw: true)
    ]

    static let machines: [AMDSample] = [
        AMDSample(
            name: "en-us voicemail of John Smith",
            content: .machine(
                voice: "en-us",
                text: "Hi, you have reached the voicemail of John Smith. I am not available right now, "
                    + "please leave a message after the tone.", beepHz: 1000), expected: .machine),
        AMDSample(
            name: "en-gb Anna and Tom",
            content: .machine(
                voice: "en-gb",
                text: "Hello, you've reached Anna and Tom. We can't come to the phone right now. "
                    + "Please leave your name and number after the beep.", beepHz: 1000), expected: .machine,
            leadMs: 900),
        AMDSample(
            name: "en-us carrier voicemail",
            content: .machine(
                voice: "en-us",
                text: "The person you are calling is not available. At the tone, please record your message.",
                beepHz: 1400), expected: .machine),
        AMDSample(
            name: "de Anrufbeantworter",
            content: .machine(
                voice: "de",
                text: "Hallo, hier ist der Anrufbeantworter von Familie Müller. Wir sind gerade nicht zu Hause. "
                    + "Bitte sprechen Sie nach dem Signalton.", beepHz: 1000), expected: .machine),
        AMDSample(
            name: "fr messagerie",
            content: .machine(
                voice: "fr-fr",
                text: "Bonjour, vous êtes bien sur la messagerie de Marie Dupont. Je ne suis pas disponible "
                    + "pour le moment, laissez-moi un message après le bip sonore.", beepHz: 1000),
            expected: .machine),
        AMDSample(
            name: "es buzón",
            content: .machine(
                voice: "es",
                text: "Hola, has llamado a Carlos García. En este momento no puedo atender tu llamada. "
                    + "Deja tu mensaje después de la señal.", beepHz: 1000), expected: .machine),
        AMDSample(
            name: "en-us voicemail at 16 kHz",
            content: .machine(
                voice: "en-us",
                text: "Hi, you have reached the voicemail of John Smith. Please leave a message after the tone.",
                beepHz: 1000), expected: .machine, sampleRate: 16_000),
        AMDSample(
            name: "en-gb voicemail on a noisy line",
            content: .machine(
                voice: "en-gb",
                text: "Sorry, we missed your call. Leave a message after the tone and we will call you back.",
                beepHz: 1000), expected: .machine, noise: -35),
        AMDSample(
            name: "nl voicemail through µ-law",
            content: .machine(
                voice: "nl",
                text: "Hallo, u spreekt met de voicemail van Jan de Vries. Ik ben er momenteel niet, "
                    + "spreek een bericht in na de piep.", beepHz: 1000), expected: .machine, ulaw: true),
        AMDSample(
            name: "it segreteria, fast",
            content: .machine(
                voice: "it",
                text: "Ciao, sono Giulia. Al momento non posso rispondere, lasciate un messaggio dopo il segnale.",
                beepHz: 800), expected: .machine, speed: 210)
    ]

    static let faxes: [AMDSample] = [
        AMDSample(name: "fax CNG", content: .faxCalling, expected: .fax, leadMs: 200),
        AMDSample(name: "fax CED", content: .faxAnswer(modulated: false), expected: .fax, leadMs: 300),
        AMDSample(name: "modem ANSam", content: .faxAnswer(modulated: true), expected: .fax, leadMs: 300),
        AMDSample(
            name: "fax CNG at 16 kHz", content: .faxCalling, expected: .fax, leadMs: 200, sampleRate: 16_000)
    ]

    /// The gap between a greeting and its beep, and the beep's length.
    static let beepGapMs = 600.0
    static let beepMs = 300.0

    private var speech: [String: Task<[Int16], any Error>] = [:]
    private var made: [String: Task<AMDAudio, any Error>] = [:]

    /// The sample's audio at its rate, noise included.
    func audio(_ sample: AMDSample, beep: Bool = true) async throws -> AMDAudio {
        // Several tests hear the same call: make each once.
        let key = "\(sample.name)|\(beep)"
        let task = made[key] ?? Task { try await make(sample, beep: beep) }
        made[key] = task
        return try await task.value
    }

    private func make(_ sample: AMDSample, beep: Bool) async throws -> AMDAudio {
        let rate = Double(sample.sampleRate)
        var pcm = [Double](repeating: 0, count: Int(Double(sample.leadMs) * rate / 1000))
        var beepEndMs: Double?
        func append(silenceMs: Double) { pcm += [Double](repeating: 0, count: Int(silenceMs * rate / 1000)) }
        func append(toneHz: Double, ms: Double, peak: Double, modulated: Bool = false) {
            let count = Int(ms * rate / 1000)
            let base = pcm.count
            for n in 0..<count {
                let t = Double(base + n) / rate
                let envelope = modulated ? 1 + 0.2 * sin(2 * Double.pi * 15 * t) : 1
                pcm.append(peak * envelope * sin(2 * Double.pi * toneHz * t))
            }
        }
        let tonePeak = 32_767 * pow(10, -12.0 / 20)
        switch sample.content {
        case .person(let voice, let text):
            for (index, part) in text.split(separator: " | ").enumerated() {
                if index > 0 { append(silenceMs: 600) }
                pcm += try await spoken(
                    voice: voice, text: String(part), speed: sample.speed, rate: rate, peak: sample.speechPeak)
            }
            append(silenceMs: 4_000)
        case .machine(let voice, let text, let beepHz):
            pcm += try await spoken(voice: voice, text: text, speed: sample.speed, rate: rate, peak: sample.speechPeak)
            append(silenceMs: Self.beepGapMs)
            if beep {
                append(toneHz: beepHz, ms: Self.beepMs, peak: tonePeak)
                beepEndMs = Double(pcm.count) * 1000 / rate
            }
            append(silenceMs: 3_000)
        case .faxCalling:
            for _ in 0..<2 {
                append(toneHz: 1100, ms: 500, peak: tonePeak)
                append(silenceMs: 3_000)
            }
        case .faxAnswer(let modulated):
            append(toneHz: 2100, ms: 3_300, peak: tonePeak, modulated: modulated)
            append(silenceMs: 2_000)
        case .silence:
            append(silenceMs: 6_000)
        }
        var noise = WhiteNoise(seed: UInt64(truncatingIfNeeded: sample.name.utf8.reduce(5381) { $0 &* 33 &+ Int($1) }))
        // Uniform noise of peak a has RMS a/√3.
        let noisePeak = 32_768 * pow(10, sample.noise / 20) * 3.0.squareRoot()
        var samples = pcm.map { Int16(clamping: Int(($0 + noise.next() * noisePeak).rounded())) }
        if sample.ulaw {
            var bytes: [UInt8] = []
            G711.encodeULaw(samples, into: &bytes)
            G711.decodeULaw(bytes, into: &samples)
        }
        return AMDAudio(pcm: samples, beepEndMs: beepEndMs)
    }

    /// espeak-ng's rendering of `text`, at `rate` Hz, scaled to `peak` dBFS.
    private func spoken(voice: String, text: String, speed: Int, rate: Double, peak: Double) async throws -> [Double] {
        let key = "\(voice)|\(speed)|\(text)"
        let task =
            speech[key]
            ?? Task {
                let path = FileManager.default.temporaryDirectory
                    .appendingPathComponent("irisgw-amd-\(UUID().uuidString.prefix(8)).wav").path
                defer { try? FileManager.default.removeItem(atPath: path) }
                let run = try await ChildProcess.run(
                    "/usr/bin/espeak-ng", ["-v", voice, "-s", "\(speed)", "-w", path, text], timeout: 30)
                guard run.status == 0 else { throw ChildProcess.Failure("espeak-ng failed: \(run.output)") }
                let wav = try WAVFile(contentsOf: path)
                return Self.trimmed(wav.samples, sampleRate: wav.sampleRate).map { $0 }
            }
        speech[key] = task
        let raw = try await task.value
        // Resampled from espeak's 22050 Hz here, per rate: the cache holds the original.
        let resampled = Self.resample(raw.map(Double.init), from: 22_050, to: rate)
        let top = resampled.reduce(0) { max($0, abs($1)) }
        guard top > 0 else { return resampled }
        let gain = 32_767 * pow(10, peak / 20) / top
        return resampled.map { $0 * gain }
    }

    /// espeak pads its output with silence; the sample's lead and tail are set here instead.
    private static func trimmed(_ samples: [Int16], sampleRate: Int) -> [Int16] {
        guard let first = samples.firstIndex(where: { abs(Int($0)) > 200 }),
            let last = samples.lastIndex(where: { abs(Int($0)) > 200 })
        else { return [] }
        return Array(samples[first...last])
    }

    /// Windowed-sinc resampling: the low-pass (at 0.45 of the lower rate) and the
    /// interpolation in one filter of 16 input samples each side.
    static func resample(_ input: [Double], from inRate: Double, to outRate: Double) -> [Double] {
        let cutoff = 0.45 * min(inRate, outRate) / inRate  // cycles per input sample
        let half = 16
        let count = Int(Double(input.count) * outRate / inRate)
        var output = [Double](repeating: 0, count: count)
        for n in 0..<count {
            let position = Double(n) * inRate / outRate
            let center = Int(position)
            var sum = 0.0
            for k in (center - half + 1)...(center + half) where k >= 0 && k < input.count {
                let x = position - Double(k)
                let sinc = x == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * x) / (Double.pi * x)
                let window = 0.5 + 0.5 * cos(Double.pi * x / Double(half))  // Hann
                sum += input[k] * sinc * window
            }
            output[n] = sum
        }
        return output
    }
}

/// Deterministic white noise in -1...1 (SplitMix64), so every run hears the same line.
struct WhiteNoise {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 52) - 1
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
