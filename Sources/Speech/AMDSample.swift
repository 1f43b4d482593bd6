import Foundation
import Media

/// One call's audio for answering-machine detection, described: who answers, what they
/// say and how the line sounds. `AMDSample.render` makes it.
public struct AMDSample: Sendable, CustomStringConvertible {
    public enum Content: Sendable {
        /// A person: speech (" | " marks a pause of 600 ms), then silence as they wait for
        /// an answer.
        case person(voice: String, text: String)
        /// A machine: a greeting, a gap, a beep of `beepHz` (`AMDSamples.beepMs`), then silence.
        case machine(voice: String, text: String, beepHz: Double)
        /// A calling fax's CNG: 1100 Hz, 0.5 s on, 3 s off.
        case faxCalling
        /// An answering fax's CED (2100 Hz, 3.3 s), with V.8's 15 Hz AM when `modulated`.
        case faxAnswer(modulated: Bool)
        /// Nothing but the line's noise.
        case silence
    }

    public var name: String
    public var content: Content
    /// What a detector should say.
    public var expected: AMDVerdict
    /// Words per minute of the speech.
    public var speed = 165
    /// Silence before the callee's first sound.
    public var leadMs = 400
    public var sampleRate = 8_000
    /// White noise under everything, RMS in dBFS.
    public var noise = -50.0
    /// The speech's peak, in dBFS.
    public var speechPeak = -6.0
    /// Through G.711 µ-law and back, as on a PCMU trunk.
    public var ulaw = false

    public init(
        name: String, content: Content, expected: AMDVerdict, speed: Int = 165, leadMs: Int = 400,
        sampleRate: Int = 8_000, noise: Double = -50, speechPeak: Double = -6, ulaw: Bool = false
    ) {
        self.name = name
        self.content = content
        self.expected = expected
        self.speed = speed
        self.leadMs = leadMs
        self.sampleRate = sampleRate
        self.noise = noise
        self.speechPeak = speechPeak
        self.ulaw = ulaw
    }

    public var description: String { name }

    /// Whether it is a person's or a machine's speech (not a fax or a dead line).
    public var isSpeech: Bool {
        switch content {
        case .person, .machine: true
        default: false
        }
    }
}

/// A sample's audio, and where its beep ends if it has one.
public struct AMDAudio: Sendable {
    public var pcm: [Int16]
    public var beepEndMs: Double?

    public init(pcm: [Int16], beepEndMs: Double?) {
        self.pcm = pcm
        self.beepEndMs = beepEndMs
    }
}

extension AMDSample {
    /// The sample's audio at its rate, noise included; the machine's beep left out when
    /// `beep` is false. Blocks while espeak-ng makes a phrase `synthesizer` has not made yet.
    public func render(beep: Bool = true, synthesizer: SpeechSynthesizer = .shared) throws(SpeechError) -> AMDAudio {
        var audio = CallAudioBuilder(sampleRate: sampleRate)
        var beepEndMs: Double?
        audio.appendSilence(ms: Double(leadMs))
        func say(_ voice: String, _ text: String) throws(SpeechError) {
            audio.append(
                speech: try synthesizer.speech(
                    Phrase(voice: voice, text: text, speed: speed), sampleRate: sampleRate, peak: speechPeak))
        }
        switch content {
        case .person(let voice, let text):
            for (index, part) in text.split(separator: " | ").enumerated() {
                if index > 0 { audio.appendSilence(ms: 600) }
                try say(voice, String(part))
            }
            audio.appendSilence(ms: 4_000)
        case .machine(let voice, let text, let beepHz):
            try say(voice, text)
            audio.appendSilence(ms: AMDSamples.beepGapMs)
            if beep {
                audio.appendTone(hz: beepHz, ms: AMDSamples.beepMs, dBFS: AMDSamples.toneLevel)
                beepEndMs = audio.milliseconds
            }
            audio.appendSilence(ms: 3_000)
        case .faxCalling:
            for _ in 0..<2 {
                audio.appendTone(hz: 1100, ms: 500, dBFS: AMDSamples.toneLevel)
                audio.appendSilence(ms: 3_000)
            }
        case .faxAnswer(let modulated):
            audio.appendTone(hz: 2100, ms: 3_300, dBFS: AMDSamples.toneLevel, amplitudeModulation: modulated)
            audio.appendSilence(ms: 2_000)
        case .silence:
            audio.appendSilence(ms: 6_000)
        }
        var samples = audio.pcm(
            noise: noise, seed: UInt64(truncatingIfNeeded: name.utf8.reduce(5381) { $0 &* 33 &+ Int($1) }))
        if ulaw {
            var bytes: [UInt8] = []
            G711.encodeULaw(samples, into: &bytes)
            G711.decodeULaw(bytes, into: &samples)
        }
        return AMDAudio(pcm: samples, beepEndMs: beepEndMs)
    }
}
