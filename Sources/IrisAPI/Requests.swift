/// The control API's request and response bodies (docs/api.md). Shared by the server
/// (ControlAPI) and the Swift client (IrisClient), so both sides read one definition.

/// The platform leg's media: an SDP offer from the app, or the gateway's answer.
/// A request carries exactly one of `sdp` and `websocket`.
public struct MediaBody: Codable, Sendable, Equatable {
    public var sdp: String?
    /// The platform leg as a WebSocket to a voice agent (requests only).
    public var websocket: MediaWebSocket?
    public init(sdp: String) { self.sdp = sdp }
    public init(websocket: MediaWebSocket) { self.websocket = websocket }
}

/// `POST /v1/sessions`: Iris `createWithTN`.
public struct CreateSessionRequest: Codable, Sendable, Equatable {
    /// The number to dial.
    public var targetTN: String
    /// The caller id to present.
    public var sourceTN: String
    /// Opaque app data, echoed in events. Optional.
    public var notificationData: String?
    /// The trunk profile's name. Default: the gateway's default profile.
    public var profile: String?
    /// Subscribers of this routing id see the session's events. Optional.
    public var routingId: String?
    /// Carried through logs and events; generated when absent.
    public var traceId: String?
    public var media: MediaBody
    /// The caller's name: the From display name (and the asserted identity's, when the
    /// profile sends one). 1-128 bytes of UTF-8 without control bytes. Optional; default
    /// the profile's `callerId.displayName`, else none.
    public var callerName: String?
    /// RFC 3323 privacy for the call, as the Privacy header writes it: `none`, `id`, `header`,
    /// `user`, `session`, `critical`, joined with `;` (`"id;critical"`). `id`, `user` and
    /// `header` make the From anonymous. Optional; default no Privacy header.
    public var privacy: String?
    /// Extra SIP headers for the INVITE, name to value: `X-` names and the names the
    /// profile's `outbound.appHeaders` allows. Names are RFC 3261 tokens; values hold no
    /// control byte (CR, LF, NUL, HTAB ...); at most 16 headers, 2048 bytes a value, 4096
    /// bytes in all. Optional.
    public var headers: [String: String]?
    /// The platform leg's Opus settings for this session only, over the profile's
    /// `media.opus` (keys and values as there; an absent key keeps the profile's value).
    /// Optional; a bad value is 400 naming `opus.<key>`.
    public var opus: OpusOptions?
    /// Record a capture of the trunk leg (its SIP and RTP, RTCP included) for
    /// `GET /v1/sessions/{roomId}/pcap`. Optional, default false; the SIP trace
    /// (`GET /v1/sessions/{roomId}/sip`) is kept for every session.
    public var capture: Bool?
    /// Record the call (over the profile's `recording`). Optional.
    public var recording: RecordingOptions?
    /// Answering-machine detection once the call is answered. Optional.
    public var amd: AMDOptions?

    public init(
        targetTN: String, sourceTN: String, notificationData: String? = nil, profile: String? = nil,
        routingId: String? = nil, traceId: String? = nil, media: MediaBody,
        callerName: String? = nil, privacy: String? = nil, headers: [String: String]? = nil, opus: OpusOptions? = nil,
        capture: Bool? = nil, recording: RecordingOptions? = nil, amd: AMDOptions? = nil
    ) {
        self.recording = recording
        self.amd = amd
        self.targetTN = targetTN
        self.sourceTN = sourceTN
        self.notificationData = notificationData
        self.profile = profile
        self.routingId = routingId
        self.traceId = traceId
        self.media = media
        self.callerName = callerName
        self.privacy = privacy
        self.headers = headers
        self.opus = opus
        self.capture = capture
    }
}

/// `POST /v1/sessions/{roomId}/join`: answers an inbound call.
public struct JoinRequest: Codable, Sendable, Equatable {
    public var roomToken: String
    public var traceId: String?
    public var media: MediaBody
    /// Record a capture of the trunk leg's RTP and RTCP, with the SIP trace, for
    /// `GET /v1/sessions/{roomId}/pcap`. Optional, default false.
    public var capture: Bool?
    /// Record the call (over the profile's `recording`). Optional.
    public var recording: RecordingOptions?

    public init(roomToken: String, traceId: String? = nil, media: MediaBody) {
        self.roomToken = roomToken
        self.traceId = traceId
        self.media = media
    }
}

/// `POST /v1/sessions/{roomId}/reject`.
public struct RejectRequest: Codable, Sendable, Equatable {
    public enum Reason: String, Codable, Sendable { case decline, busy }
    public var roomToken: String
    /// `decline` (603, the default) or `busy` (486).
    public var reason: Reason?
    public init(roomToken: String, reason: Reason? = nil) {
        self.roomToken = roomToken
        self.reason = reason
    }
}

/// `POST /v1/sessions/{roomId}/merge`.
public struct MergeRequest: Codable, Sendable, Equatable {
    public var heldRoomId: String
    public init(heldRoomId: String) { self.heldRoomId = heldRoomId }
}

/// `POST /v1/sessions/{roomId}/dtmf`: Iris `insertDTMFtone`.
public struct DTMFRequest: Codable, Sendable, Equatable {
    /// Digits `0-9 * # A-D`.
    public var tones: String
    /// Per digit; default 100 ms.
    public var durationMs: Int?
    public init(tones: String, durationMs: Int? = nil) {
        self.tones = tones
        self.durationMs = durationMs
    }
}

/// The answer to `createWithTN` and `join`.
public struct SessionResponse: Codable, Sendable, Equatable {
    public var roomId: String
    public var traceId: String
    public var media: MediaBody?
    public init(roomId: String, traceId: String, media: MediaBody?) {
        self.roomId = roomId
        self.traceId = traceId
        self.media = media
    }
}

/// Every error body: `{"error": {"code": <Iris code>, "message": "..."}}`.
public struct APIErrorBody: Codable, Sendable, Equatable, Error {
    public struct Detail: Codable, Sendable, Equatable {
        public var code: Int
        public var message: String
    }
    public var error: Detail
    public init(code: Int, message: String) { error = Detail(code: code, message: message) }
}

/// `POST /v1/page-tokens` (API key only): a short-lived bearer for the dialer page.
public struct PageTokenRequest: Codable, Sendable, Equatable {
    /// The routing id the token is scoped to: its sessions, its events, its inbound calls.
    /// 1-128 of `[A-Za-z0-9._:@-]`.
    public var routingId: String
    /// Seconds the token is valid: 1-86400; default 3600.
    public var ttlSec: Int?
    /// Trunk profiles the page's creates may use, 1-8 names; a create that names none uses
    /// the first. Default: the gateway's default profile only.
    public var profiles: [String]?
    /// The page may ask for `capture` (create, join). Default false.
    public var allowCapture: Bool?
    /// The page may set `headers`, `callerName` and `privacy` on create. Default false.
    public var allowHeaders: Bool?
    public init(
        routingId: String, ttlSec: Int? = nil, profiles: [String]? = nil, allowCapture: Bool? = nil,
        allowHeaders: Bool? = nil
    ) {
        self.routingId = routingId
        self.ttlSec = ttlSec
        self.profiles = profiles
        self.allowCapture = allowCapture
        self.allowHeaders = allowHeaders
    }
}

/// The answer to `POST /v1/page-tokens`.
public struct PageTokenResponse: Codable, Sendable, Equatable {
    /// The bearer: `Authorization: Bearer <token>`, or `access_token=` on the event socket.
    public var token: String
    public var routingId: String
    /// Unix seconds; the token is refused (401, -105) from then on.
    public var expiresAt: Int64
    /// The page's path with the token in its fragment: `/app#token=...`.
    public var appPath: String
    /// The profiles the token allows, the one used when a create names none first.
    public var profiles: [String]
    public var allowCapture: Bool
    public var allowHeaders: Bool
    public init(
        token: String, routingId: String, expiresAt: Int64, appPath: String, profiles: [String] = [],
        allowCapture: Bool = false, allowHeaders: Bool = false
    ) {
        self.token = token
        self.routingId = routingId
        self.expiresAt = expiresAt
        self.appPath = appPath
        self.profiles = profiles
        self.allowCapture = allowCapture
        self.allowHeaders = allowHeaders
    }
}
