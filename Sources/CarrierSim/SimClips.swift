import Foundation
import Speech
import Synchronization

/// Audio a leg plays from the answer on, prepared whole at both call rates (8 kHz for
/// G.711, 16 kHz for G.722) so the media thread only copies samples. After its end a clip
/// is silence (sent as audio, as a phone's line is), or starts again when it `repeats`.
public struct SimClip: Sendable {
    /// The clip at 8 kHz.
    public let narrowband: [Int16]
    /// The clip at 16 kHz.
    public let wideband: [Int16]
    /// Whether it plays again from the start when it ends (the fax's CNG cadence).
    public let repeats: Bool

    /// A clip made by `render` at 8000 and at 16000 Hz.
    public init<Failure: Error>(repeats: Bool = false, render: (Int) throws(Failure) -> [Int16]) throws(Failure) {
        narrowband = try render(8_000)
        wideband = try render(16_000)
        self.repeats = repeats
    }

    /// The clip at `sampleRate` (16000: wideband; anything else: narrowband).
    public func samples(at sampleRate: Int) -> [Int16] { sampleRate == 16_000 ? wideband : narrowband }
}

/// Where a leg is in its clip: counted in frames, so a codec change mid-call keeps the place.
struct SimClipPlayer {
    let clip: SimClip
    private var frame = 0

    init(_ clip: SimClip) { self.clip = clip }

    /// Mixes the next `pcm.count` samples of the clip at `sampleRate` into `pcm`.
    mutating func mix(into pcm: UnsafeMutableBufferPointer<Int16>, sampleRate: Int) {
        defer { frame += 1 }
        let source = clip.samples(at: sampleRate)
        guard !source.isEmpty else { return }
        let start = frame * pcm.count
        guard clip.repeats || start < source.count else { return }
        for i in pcm.indices {
            var k = start + i
            if clip.repeats { k %= source.count } else if k >= source.count { break }
            pcm[i] = Int16(clamping: Int32(pcm[i]) + Int32(source[k]))
        }
    }
}

/// What the answering-machine numbers play: a person's "Hello?", a voicemail's greeting and
/// beep (both espeak-ng's), a fax's CNG. Timings in milliseconds from the answer.
public struct SimAMDClips: Sendable {
    /// Silence before the person speaks.
    public static let personLeadMs = 300.0
    /// What the person says (espeak-ng, en-us).
    public static let personPhrase = Phrase(voice: "en-us", text: "Hello?")
    /// Silence before the greeting.
    public static let voicemailLeadMs = 400.0
    /// The voicemail's greeting (espeak-ng, en-us): about 6 s.
    public static let greetingPhrase = Phrase(
        voice: "en-us",
        text: "Hi, you have reached the voicemail of John Smith. I am not available right now, "
            + "please leave a message after the tone.")
    /// Silence between the greeting and the beep.
    public static let beepGapMs = 600.0
    /// The beep: 1000 Hz for 500 ms at -12 dBFS.
    public static let beepHz = 1000.0
    public static let beepMs = 500.0
    /// The fax's CNG (ITU-T T.30): 1100 Hz, 500 ms on, 3 s off, at -12 dBFS, from the answer.
    public static let cngHz = 1100.0
    public static let cngOnMs = 500.0
    public static let cngOffMs = 3_000.0
    /// Speech peak and tone level, dBFS.
    public static let speechPeak = -6.0
    public static let toneLevel = -12.0

    public let person: SimClip
    public let voicemail: SimClip
    /// The fax's clip needs no speech, so no espeak-ng.
    public static let fax = SimClip(repeats: true) { rate in
        var audio = CallAudioBuilder(sampleRate: rate)
        audio.appendTone(hz: cngHz, ms: cngOnMs, dBFS: toneLevel)
        audio.appendSilence(ms: cngOffMs)
        return audio.pcm()
    }
    /// Where the beep ends, ms from the answer (the greeting's length is espeak-ng's).
    public let beepEndMs: Double

    /// Makes the person's and the voicemail's clips; blocks while espeak-ng speaks (off any loop).
    public init(synthesizer: SpeechSynthesizer = .shared) throws(SpeechError) {
        person = try SimClip { rate throws(SpeechError) in
            var audio = CallAudioBuilder(sampleRate: rate)
            audio.appendSilence(ms: Self.personLeadMs)
            audio.append(
                speech: try synthesizer.speech(Self.personPhrase, sampleRate: rate, peak: Self.speechPeak))
            return audio.pcm()
        }
        var beepEnd = 0.0
        voicemail = try SimClip { rate throws(SpeechError) in
            var audio = CallAudioBuilder(sampleRate: rate)
            audio.appendSilence(ms: Self.voicemailLeadMs)
            audio.append(
                speech: try synthesizer.speech(Self.greetingPhrase, sampleRate: rate, peak: Self.speechPeak))
            audio.appendSilence(ms: Self.beepGapMs)
            audio.appendTone(hz: Self.beepHz, ms: Self.beepMs, dBFS: Self.toneLevel)
            beepEnd = audio.milliseconds
            return audio.pcm()
        }
        beepEndMs = beepEnd
    }

    /// The clip of an answering-machine behaviour; nil for the others.
    public func clip(for behaviour: Behaviour) -> SimClip? {
        switch behaviour {
        case .answersAsPerson: person
        case .answersAsVoicemail: voicemail
        case .answersAsFax: Self.fax
        default: nil
        }
    }
}

/// The answering-machine clips, made on a thread of their own once per process and
/// espeak-ng path (a simulator starts them; calls to those numbers wait for them, on loop
/// timers); `state` never blocks.
final class SimClipStore: Sendable {
    enum State: Sendable {
        case preparing
        case ready(SimAMDClips)
        case failed(SpeechError)
    }

    private static let stores = Mutex<[String: SimClipStore]>([:])

    /// The store for `executable`, its preparation started on first use.
    static func shared(executable: String) -> SimClipStore {
        let (store, isNew) = stores.withLock { stores -> (SimClipStore, Bool) in
            if let store = stores[executable] { return (store, false) }
            let store = SimClipStore()
            stores[executable] = store
            return (store, true)
        }
        if isNew {
            let thread = Thread {
                let made: State
                do throws(SpeechError) {
                    let synthesizer =
                        executable == SpeechSynthesizer.defaultExecutable
                        ? SpeechSynthesizer.shared : SpeechSynthesizer(executable: executable)
                    made = .ready(try SimAMDClips(synthesizer: synthesizer))
                } catch {
                    made = .failed(error)
                }
                store.current.withLock { $0 = made }
            }
            thread.name = "carrier-sim-speech"
            thread.start()
        }
        return store
    }

    private let current = Mutex<State>(.preparing)

    /// Where the preparation stands.
    var state: State { current.withLock { $0 } }
}
