/// The media services of a session (docs/api.md, "Media services"): a voice agent or a fork
/// over WebSocket (Twilio Media Streams' messages), recording, answering-machine detection.

/// `media.websocket`: the platform leg is a WebSocket to a voice agent instead of RTP or
/// WebRTC. The carrier's audio goes to the agent as `media` messages; the agent's `media` is
/// played to the carrier, its `mark` echoed once the audio before it has been played, its
/// `clear` drops what is queued; digits go to it as `dtmf`.
public struct MediaWebSocket: Codable, Sendable, Equatable {
    /// `ws://` or `wss://` (checked against the gateway's `mediaStreams.caFile`, else the
    /// system's CAs).
    public var url: String
    /// Extra headers for the upgrade request (an agent's own token, say). Optional.
    public var headers: [String: String]?
    /// `audio/x-mulaw` (8 kHz, the default: Twilio's) or `audio/l16;rate=16000`.
    public var encoding: String?
    /// Passed to the agent in `start.customParameters`. Optional.
    public var customParameters: [String: String]?
    /// End the session when the agent's socket fails or closes (default true); false keeps
    /// the call up, silent toward the carrier.
    public var hangupOnClose: Bool?

    public init(
        url: String, headers: [String: String]? = nil, encoding: String? = nil,
        customParameters: [String: String]? = nil, hangupOnClose: Bool? = nil
    ) {
        self.hangupOnClose = hangupOnClose
        self.url = url
        self.headers = headers
        self.encoding = encoding
        self.customParameters = customParameters
    }
}

/// `POST /v1/sessions/{roomId}/streams`: a one-way fork of the call's audio to a WebSocket
/// (a transcriber, a monitor). The call goes on whatever happens to the fork.
public struct StreamRequest: Codable, Sendable, Equatable {
    public var url: String
    public var headers: [String: String]?
    /// `inbound` (what the carrier says; the default), `outbound` (what it hears) or `both`.
    public var track: String?
    /// As `MediaWebSocket.encoding`.
    public var encoding: String?
    public var customParameters: [String: String]?
    /// End the session when this fork's socket fails or closes. Default false: the fork ends
    /// (`onSessionStream` with the reason) and the call goes on.
    public var hangupOnClose: Bool?

    public init(
        url: String, headers: [String: String]? = nil, track: String? = nil, encoding: String? = nil,
        customParameters: [String: String]? = nil, hangupOnClose: Bool? = nil
    ) {
        self.hangupOnClose = hangupOnClose
        self.url = url
        self.headers = headers
        self.track = track
        self.encoding = encoding
        self.customParameters = customParameters
    }
}

/// A stream of a session: the answer to `POST .../streams`, and `stream` on `onSessionStream`.
public struct StreamInfo: Codable, Sendable, Equatable {
    /// The stream's id (`streamSid` in its messages); `DELETE .../streams/{streamId}` stops it.
    public var streamId: String
    /// `agent` (the platform leg) or `fork`.
    public var kind: String
    /// `started` (the socket is open), `stopped` (asked, or the session ended), `failed`.
    public var state: String
    public var track: String?
    /// Why it ended, when it did.
    public var reason: String?
    /// Audio frames dropped because the consumer read too slowly.
    public var droppedFrames: Int?

    public init(
        streamId: String, kind: String, state: String, track: String? = nil, reason: String? = nil,
        droppedFrames: Int? = nil
    ) {
        self.streamId = streamId
        self.kind = kind
        self.state = state
        self.track = track
        self.reason = reason
        self.droppedFrames = droppedFrames
    }
}

/// `recording` on `createWithTN`/`join` (over the profile's `recording`), and on
/// `POST .../recording` with `action: "start"`.
public struct RecordingOptions: Codable, Sendable, Equatable {
    /// 2 (the default: the carrier left, the app right) or 1 (mixed).
    public var channels: Int?
    /// `wav` (the default) or `ogg` (Opus).
    public var format: String?

    public init(channels: Int? = nil, format: String? = nil) {
        self.channels = channels
        self.format = format
    }
}

/// `POST /v1/sessions/{roomId}/recording`.
public struct RecordingRequest: Codable, Sendable, Equatable {
    /// `start`, `pause`, `resume` or `stop`.
    public var action: String
    /// For `start`: as `RecordingOptions` (the profile's otherwise).
    public var channels: Int?
    public var format: String?

    public init(action: String, channels: Int? = nil, format: String? = nil) {
        self.action = action
        self.channels = channels
        self.format = format
    }
}

/// A session's recording: on `onSessionRecording`, in the snapshot and the call record.
public struct RecordingInfo: Codable, Sendable, Equatable {
    /// `recording`, `paused`, `stopped` (the file is complete) or `failed`.
    public var state: String
    public var format: String
    public var channels: Int
    /// Seconds recorded so far (final once stopped), paused stretches included as silence.
    public var durationSec: Double?
    /// Seconds paused in all.
    public var pausedSec: Double?
    /// The file's size once stopped.
    public var bytes: Int?
    /// Why it failed.
    public var reason: String?
    /// The copy to the profile's SIPREC recording server: `recording` (the server took it),
    /// `ended` (with `siprecReason` when it was not ours to end); absent without one.
    public var siprec: String?
    public var siprecReason: String?

    public init(
        state: String, format: String, channels: Int, durationSec: Double? = nil, pausedSec: Double? = nil,
        bytes: Int? = nil, reason: String? = nil, siprec: String? = nil, siprecReason: String? = nil
    ) {
        self.siprec = siprec
        self.siprecReason = siprecReason
        self.state = state
        self.format = format
        self.channels = channels
        self.durationSec = durationSec
        self.pausedSec = pausedSec
        self.bytes = bytes
        self.reason = reason
    }
}

/// `amd` on `createWithTN`: answering-machine detection once the call is answered.
public struct AMDOptions: Codable, Sendable, Equatable {
    /// `detect` (a verdict) or `detectBeep` (and, on a machine, the end of its beep).
    public var mode: String

    public init(mode: String) { self.mode = mode }
}

/// `onSessionAMD.amd`: who answered, from the audio alone.
public struct AMDInfo: Codable, Sendable, Equatable {
    /// `human`, `machine`, `fax` or `unknown`.
    public var result: String
    /// Milliseconds of audio after the answer it took.
    public var ms: Int
    /// Why (`humanGreeting`, `longGreeting`, `maxWords`, `initialSilence`, `faxTone` ...).
    public var cause: String

    public init(result: String, ms: Int, cause: String) {
        self.result = result
        self.ms = ms
        self.cause = cause
    }
}

/// `onSessionBeep.beep`: the machine's greeting tone ended (start the message now), or none
/// came within `amd.beepTimeoutMs`.
public struct BeepInfo: Codable, Sendable, Equatable {
    /// `beep` or `noBeep`.
    public var result: String
    /// Milliseconds after the answer when the tone ended (or the search gave up).
    public var ms: Int

    public init(result: String, ms: Int) {
        self.result = result
        self.ms = ms
    }
}
