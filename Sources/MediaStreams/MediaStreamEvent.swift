import WebClient

/// What a `MediaStreamConnection` reports to its handler (on the client loop, in order).
public enum MediaStreamEvent: Sendable, Equatable {
    /// The WebSocket is open; `connected` and `start` are on their way.
    case opened
    /// 20 ms of the agent's audio (160 samples, 8 kHz), decoded from mu-law and re-chunked.
    case audio([Int16])
    /// The agent's mark: everything before it has been reported.
    case mark(String)
    /// The agent asked to drop the audio not yet played.
    case clear
    /// An agent message was refused (and ignored); the stream goes on.
    case refused(MediaStreamMessageError)
    /// The stream is over; reported once, last.
    case ended(MediaStreamEnd)
}

/// Why a stream ended.
public enum MediaStreamEnd: Sendable, Equatable, CustomStringConvertible {
    /// `stop()` ended it.
    case stopped
    /// The agent closed the WebSocket (its close frame's code and reason).
    case closedByAgent(code: UInt16?, reason: String)
    /// It could not be opened, or the connection dropped.
    case failed(IrisTransportError)

    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .closedByAgent(let code, let reason):
            "the agent closed the stream (\(code.map(String.init) ?? "no code")\(reason.isEmpty ? "" : ": \(reason)"))"
        case .failed(let error): "the stream failed: \(error)"
        }
    }
}

/// A stream's direction, in Twilio's words: `inbound` is what the caller says (towards the
/// agent), `outbound` what the call plays to the caller.
public enum MediaStreamTrack: String, Sendable, Equatable {
    case inbound, outbound
}

/// A stream's counters.
public struct MediaStreamStatistics: Sendable, Equatable {
    /// `media` messages handed to the connection.
    public var sentAudioFrames = 0
    /// Frames dropped (oldest first) because the agent read too slowly.
    public var droppedAudioFrames = 0
    /// Messages waiting in the send queue.
    public var queuedMessages = 0
    /// Agent messages refused.
    public var refusedMessages = 0
}
