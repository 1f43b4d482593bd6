import IrisAPI
import Media
import MediaStreams

/// What a session's media services were asked for when it started (`createWithTN`/`join`
/// and the profile): begun once the call is answered.
struct ServiceRequest: Sendable {
    /// Record from the answer (the request's `recording`, or the profile's `always`).
    var recording: CallRecordingConfiguration?
    /// Detect who answered (outbound only).
    var amd: AMDSettings?
}

/// A session's media services, on the SIP loop: its recording, its streams (the agent's leg
/// and forks), answering-machine detection. Each is a `MediaAudioSink` on the call's media.
struct SessionServices {
    var pending = ServiceRequest()
    var connected = false
    var recording: SessionRecording?
    /// True while a recording's file is being opened (off the loop).
    var recordingStarting = false
    var amd: AMDTap?
    var amdResult: AMDInfo?
    /// Live streams by id, and how many the call has had.
    var streams: [String: SessionStream] = [:]
    var streamsStarted = 0
    /// The copy to the profile's SIPREC recording server, while it lasts.
    var siprec: SIPRECRecorder?
    /// How the SIPREC copy ended (`stopped`, or why), for the record.
    var siprecEnded: String?
    /// The carrier's party after a transfer moved the call to another number.
    var carrierParty: String?

    /// The platform leg is a voice agent's stream.
    var hasAgent: Bool { streams.values.contains { $0.kind == .agent } }
}

/// A session's recording: the writer (its own thread and queue) and its state.
final class SessionRecording {
    let sink: RecordingTap
    let configuration: CallRecordingConfiguration
    var paused = false

    init(sink: RecordingTap) {
        self.sink = sink
        configuration = sink.writer.configuration
    }

    var writer: CallRecordingWriter { sink.writer }

    func info(_ state: String, summary: CallRecordingSummary? = nil, reason: String? = nil) -> RecordingInfo {
        Self.info(configuration, state, summary: summary, reason: reason)
    }

    static func info(
        _ configuration: CallRecordingConfiguration, _ state: String, summary: CallRecordingSummary? = nil,
        reason: String? = nil
    ) -> RecordingInfo {
        RecordingInfo(
            state: state, format: configuration.format.rawValue, channels: configuration.layout.channels,
            durationSec: summary.map { ($0.duration * 100).rounded() / 100 },
            pausedSec: summary.map { s in s.pausedIntervals.reduce(0) { $0 + $1.end - $1.start } },
            bytes: summary?.bytes, reason: reason)
    }
}

/// One WebSocket media stream of a session: the voice agent's leg, or a fork.
final class SessionStream {
    enum Kind: String { case agent, fork }
    let id: String
    let kind: Kind
    let bridge: MediaStreamBridge
    let hangupOnClose: Bool
    var opened = false
    var refusalReported = false

    init(id: String, kind: Kind, bridge: MediaStreamBridge, hangupOnClose: Bool) {
        self.id = id
        self.kind = kind
        self.bridge = bridge
        self.hangupOnClose = hangupOnClose
    }

    func info(_ state: String, reason: String? = nil) -> StreamInfo {
        let statistics = bridge.connection.statistics
        return StreamInfo(
            streamId: id, kind: kind.rawValue, state: state, track: bridge.tracks.rawValue, reason: reason,
            droppedFrames: statistics.droppedAudioFrames)
    }
}
