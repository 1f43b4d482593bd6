import Foundation
import IrisAPI

/// `{ expectAMD: "machine", beep: true, withinSec: 8 }`: the answering-machine detector's
/// verdict on the call (the test's `amd` asks for detection).
public struct AMDStep: Sendable, Equatable {
    /// The verdicts of `onSessionAMD`, in the gateway's words.
    public enum Verdict: String, Sendable, Equatable, CaseIterable {
        case human, machine, fax, unknown
    }

    public var result: Verdict
    /// Also an `onSessionBeep` with `beep` (the test's `amd` must be `detectBeep`).
    public var beep: Bool
    /// Seconds from the step's start for the verdict (and the beep).
    public var within: Double

    public init(result: Verdict, beep: Bool = false, within: Double = 10) {
        self.result = result
        self.beep = beep
        self.within = within
    }
}

/// `{ stream: { track: "both", minAudioSec: 2, toneHz: 1000, withinSec: 10 } }`: a fork of
/// the call's audio (`POST .../streams`) to a WebSocket server the suite runs itself.
public struct StreamStep: Sendable, Equatable {
    /// The fork's `track`, and the `start.tracks` expected of it.
    public enum Track: String, Sendable, Equatable, CaseIterable {
        case inbound, outbound, both

        /// `start.tracks` as the gateway names them for this track.
        public var tracks: [String] { self == .both ? ["inbound", "outbound"] : [rawValue] }
    }

    public var track: Track
    /// Seconds of audio each track must deliver.
    public var minAudioSec: Double
    /// A tone (Hz) that must hold most of each track's audio; nil: any audio.
    public var toneHz: Double?
    /// Seconds from the fork's request for `connected`, `start` and the audio.
    public var within: Double

    public init(track: Track = .inbound, minAudioSec: Double = 1, toneHz: Double? = nil, within: Double = 10) {
        self.track = track
        self.minAudioSec = minAudioSec
        self.toneHz = toneHz
        self.within = within
    }
}

/// `{ expectRecording: { channels: 2, minDurationSec: 3, format: "wav" } }`: the recording the
/// gateway serves for the call, read from the file itself.
public struct RecordingStep: Sendable, Equatable {
    /// 1 or 2; nil: either.
    public var channels: Int?
    /// The shortest acceptable length, seconds. Default 0: any length.
    public var minDurationSec: Double
    /// `wav` or `ogg`; nil: either.
    public var format: String?
    /// Seconds to wait for a file that passes (the gateway may still be writing it).
    public var within: Double

    public init(channels: Int? = nil, minDurationSec: Double = 0, format: String? = nil, within: Double = 10) {
        self.channels = channels
        self.minDurationSec = minDurationSec
        self.format = format
        self.within = within
    }
}

/// The media-service options of a test (`amd`, `recording`, `silent`) and their steps.
extension SuiteReader {
    struct MediaServices {
        var amd: AMDOptions?
        var recording: RecordingOptions?
        var silent: Bool
    }

    /// The test's `amd`, `recording` and `silent`; an `expectAMD` step needs `amd` (and a
    /// `beep` one `detectBeep`), named at the step.
    func mediaServices(_ o: [String: Any], _ path: String, steps: [TestStep]) throws(SuiteError) -> MediaServices {
        var amd: AMDOptions?
        if let mode = try string(o, "amd", path) {
            guard mode == "detect" || mode == "detectBeep" else {
                throw fail(join(path, "amd"), "must be detect or detectBeep")
            }
            amd = AMDOptions(mode: mode)
        }
        var recording: RecordingOptions?
        if let v = o["recording"] {
            let r = try object(v, join(path, "recording"), keys: ["channels", "format"])
            let channels = try number(r, "channels", join(path, "recording"), in: 1...2)
            if let c = channels, c != c.rounded() { throw fail(join(path, "recording.channels"), "must be 1 or 2") }
            let format = try recordingFormat(r, join(path, "recording"))
            recording = RecordingOptions(channels: channels.map { Int($0) }, format: format)
        }
        if let s = o["silent"], !Self.isBoolean(s) { throw fail(join(path, "silent"), "must be true or false") }
        for (i, step) in steps.enumerated() {
            guard case .expectAMD(let a) = step else { continue }
            let at = join(path, "steps[\(i)]")
            guard let amd else {
                throw fail(join(at, "expectAMD"), "the test asks for no detection: give the test amd: \"detect\"")
            }
            if a.beep, amd.mode != "detectBeep" {
                throw fail(join(at, "beep"), "a beep is only looked for with the test's amd: \"detectBeep\"")
            }
        }
        return MediaServices(amd: amd, recording: recording, silent: o["silent"] as? Bool ?? false)
    }

    func recordingFormat(_ o: [String: Any], _ path: String) throws(SuiteError) -> String? {
        guard let f = try string(o, "format", path) else { return nil }
        guard f == "wav" || f == "ogg" else { throw fail(join(path, "format"), "must be wav or ogg") }
        return f
    }

    func expectAMD(_ o: [String: Any], _ path: String, within: Double) throws(SuiteError) -> TestStep {
        let r = try string(o, "expectAMD", path) ?? ""
        guard let result = AMDStep.Verdict(rawValue: r) else {
            throw fail(
                join(path, "expectAMD"),
                "must be one of " + AMDStep.Verdict.allCases.map(\.rawValue).joined(separator: ", "))
        }
        if let b = o["beep"], !Self.isBoolean(b) { throw fail(join(path, "beep"), "must be true or false") }
        return .expectAMD(AMDStep(result: result, beep: o["beep"] as? Bool ?? false, within: within))
    }

    /// `stream: { track, withinSec, minAudioSec, toneHz }`; the step's own `withinSec` is the
    /// default of the inner one.
    func stream(_ v: Any, _ path: String, within outer: Double?) throws(SuiteError) -> TestStep {
        let o = try object(v, path, keys: ["track", "withinSec", "minAudioSec", "toneHz"])
        let t = try string(o, "track", path) ?? "inbound"
        guard let track = StreamStep.Track(rawValue: t) else {
            throw fail(join(path, "track"), "must be inbound, outbound or both")
        }
        let within = try number(o, "withinSec", path, in: 0.1...600) ?? outer ?? 10
        let minAudio = try number(o, "minAudioSec", path, in: 0.02...600) ?? 1
        guard minAudio < within else {
            throw fail(join(path, "minAudioSec"), "must be less than withinSec (\(within) s) to arrive in time")
        }
        return .stream(
            StreamStep(
                track: track, minAudioSec: minAudio, toneHz: try number(o, "toneHz", path, in: 100...3500),
                within: within))
    }

    func expectRecording(_ v: Any, _ path: String, within: Double) throws(SuiteError) -> TestStep {
        let o = try object(v, path, keys: ["channels", "minDurationSec", "format"])
        let channels = try number(o, "channels", path, in: 1...2)
        if let c = channels, c != c.rounded() { throw fail(join(path, "channels"), "must be 1 or 2") }
        return .expectRecording(
            RecordingStep(
                channels: channels.map { Int($0) },
                minDurationSec: try number(o, "minDurationSec", path, in: 0...86_400) ?? 0,
                format: try recordingFormat(o, path), within: within))
    }
}
