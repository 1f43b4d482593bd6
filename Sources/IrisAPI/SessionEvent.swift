/// SIP details kept on statuses, errors and endings: the response code and reason phrase,
/// and the Q.850 cause from a `Reason` header when the carrier sent one.
public struct SIPDetails: Codable, Sendable, Equatable {
    public var code: Int
    public var reason: String
    public var cause: Int?
    public init(code: Int, reason: String, cause: Int? = nil) {
        self.code = code
        self.reason = reason
        self.cause = cause
    }
}

/// Iris session statuses, as `onSessionSIPStatus` reports them.
public enum SessionStatus: String, Codable, Sendable, Equatable {
    case initializing = "Initializing"
    case connecting = "Connecting"
    case connected = "Connected"
    case hold = "Hold"
    case disconnected = "Disconnected"
}

/// How a session ended (`onSessionEnded.reason`), in Twilio's and Iris's terms.
public enum EndReason: String, Codable, Sendable, Equatable, CaseIterable {
    case completed, busy, declined, canceled, rejected, failed
    case noAnswer = "no-answer"
    case mediaTimeout = "media-timeout"
    /// The node holding the session died; another node of the cluster ended its call.
    case nodeLost = "node-lost"
    /// The call was handed on: the carrier completed our REFER, or the gateway bridged the
    /// caller to the transfer target (the app has left the call).
    case transferred
}

/// The Iris-shaped `userdata` of an inbound notification.
public struct NotificationUserData: Codable, Sendable, Equatable {
    public struct Data: Codable, Sendable, Equatable {
        /// Caller name and caller id (both the calling number), and the called DID.
        public var cname: String
        public var cid: String
        public var tar: String
    }
    public struct Notification: Codable, Sendable, Equatable {
        public var type: String
        public var topic: String
    }
    public var data: Data
    public var notification: Notification
    public init(caller: String, did: String) {
        data = Data(cname: caller, cid: caller, tar: did)
        notification = Notification(type: "pstn", topic: "federation/pstn")
    }
}

/// One event of a session (docs/events.md): `{event, roomId, traceId, seq, at, ...}`.
/// `seq` increases by one per session from 1; `at` is Unix time in milliseconds. Fields that
/// do not apply to an event are absent from its JSON.
public struct SessionEvent: Codable, Sendable, Equatable {
    public enum Name: String, Codable, Sendable {
        case onSessionCreated, onSessionSIPStatus, onSessionEarlyMedia, onStreamQualityIndicator
        case onSessionMerged, onSessionDTMF, onSessionError, onSessionEnded, onNotification
        /// A transfer's progress (ours or the carrier's): `transfer`, `sip`, `message`.
        case onSessionTransfer
        /// The carrier asked to transfer the call (REFER) under `inbound.refer: app`: the app
        /// answers with `acceptTransfer` or `declineTransfer`.
        case onSessionTransferRequest
        /// Answering-machine detection's verdict (`amd` on createWithTN): `amd`.
        case onSessionAMD
        /// The machine's greeting tone ended, or no tone came (`amd.mode: detectBeep`): `beep`.
        case onSessionBeep
        /// A media stream (the agent's leg or a fork) started or ended: `stream`.
        case onSessionStream
        /// The recording started, paused, resumed, stopped or failed: `recording`.
        case onSessionRecording
        /// Only in a replay: events `fromSeq...toSeq` of a long session were dropped from its
        /// history (the per-session bound); the event's own `seq` is `toSeq`.
        case onSessionEventsDropped
    }
    public var event: Name
    public var roomId: String
    public var traceId: String
    public var seq: Int
    public var at: Int64

    // onSessionCreated
    public var direction: String?
    // onSessionSIPStatus
    public var status: SessionStatus?
    public var earlyMedia: Bool?
    public var by: String?
    public var sip: SIPDetails?
    // onStreamQualityIndicator
    public var quality: String?
    public var codec: String?
    // onSessionMerged
    public var heldRoomId: String?
    // onSessionDTMF
    public var digit: String?
    public var durationMs: Int?
    // onSessionError
    public var code: Int?
    public var message: String?
    // onSessionTransfer, onSessionTransferRequest
    public var transfer: TransferInfo?
    // onSessionAMD, onSessionBeep, onSessionStream, onSessionRecording
    public var amd: AMDInfo?
    public var beep: BeepInfo?
    public var stream: StreamInfo?
    public var recording: RecordingInfo?
    // onSessionEnded
    public var reason: EndReason?
    public var durationSec: Double?
    // onSessionEventsDropped
    public var fromSeq: Int?
    public var toSeq: Int?
    // onNotification (Iris names, lower case)
    public var type: String?
    public var roomid: String?
    public var roomtoken: String?
    public var roomtokenexpirytime: Int64?
    public var rtcserver: String?
    public var traceid: String?
    public var routingid: String?
    public var userdata: NotificationUserData?
    /// What the carrier's INVITE said beyond the numbers (inbound `notify` only).
    public var carrier: CarrierCallInfo?

    public init(event: Name, roomId: String, traceId: String, seq: Int = 0, at: Int64 = 0) {
        self.event = event
        self.roomId = roomId
        self.traceId = traceId
        self.seq = seq
        self.at = at
    }
}
