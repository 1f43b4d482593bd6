/// The call detail record (CDR) of one room: who called whom through which trunk profile,
/// when it rang, was answered and ended, why it ended, and how the media fared.
///
/// Times are Unix seconds (fractions allowed) on the gateway's clock. `CallRecordStore`
/// keeps one row per record, keyed by `roomId`.
public struct CallRecord: Sendable, Equatable, Codable {
    /// The room (session) id; unique per call.
    public var roomId: String
    /// The trace id that ties the record to logs and SIP traces.
    public var traceId: String
    /// "outbound" (towards the PSTN) or "inbound" (from it).
    public var direction: String
    /// The calling number (E.164 as the gateway normalised it).
    public var sourceTN: String
    /// The called number.
    public var targetTN: String
    /// The trunk profile's name.
    public var profile: String
    /// When the call began: the INVITE sent (outbound) or received (inbound).
    public var startedAt: Double
    /// The first 18x provisional response; post-dial delay is `ringingAt - startedAt`.
    public var ringingAt: Double?
    /// The 2xx to the INVITE.
    public var answeredAt: Double?
    /// BYE, CANCEL, final failure response or media timeout; nil while the call is up.
    public var endedAt: Double?
    /// completed | busy | no-answer | declined | canceled | rejected | failed | media-timeout.
    public var endReason: String?
    /// The SIP status code that ended the call (486, 603...), when one did.
    public var sipCode: Int?
    /// The reason phrase with `sipCode`, or the gateway's own explanation.
    public var sipReason: String?
    /// The Q.850 cause (RFC 3326 Reason header), e.g. 16 normal clearing, 17 user busy.
    public var q850Cause: Int?
    /// The negotiated codec, e.g. "PCMU", "opus".
    public var codec: String?
    /// RTP packets lost over the call (RTCP, RFC 3550 §6.4.1 cumulative number lost).
    public var packetsLost: Int64?
    /// Interarrival jitter in milliseconds (RFC 3550 §6.4.1).
    public var jitterMs: Double?
    /// Round-trip time in milliseconds from RTCP LSR/DLSR (RFC 3550 §6.4.1).
    public var roundTripMs: Double?
    /// A transfer of the call: the number it was sent to (blind, or a carrier's Refer-To).
    public var transferTarget: String?
    /// How the last transfer ended: `succeeded` or `failed`.
    public var transferOutcome: String?
    /// Who asked for it: `app` or `carrier`.
    public var transferredBy: String?
    /// How it was done: `refer`, `bridge`, `dial` or `replaces` (`TransferInfo.method`).
    public var transferMethod: String?
    /// The other session it involved: an attended transfer's, or the gateway's own call to the
    /// target in a bridge (whose record names this one back).
    public var transferRoomId: String?
    /// The call's recording file (under the recordings directory), once one was started.
    public var recordingPath: String?
    /// Seconds in the recording, paused stretches (silence in the file) included.
    public var recordingDurationSec: Double?
    /// The paused stretches, seconds into the recording: `"12.40-31.02,40.00-41.50"`.
    public var recordingPaused: String?
    /// Answering-machine detection's verdict: `human`, `machine`, `fax` or `unknown`.
    public var amdResult: String?
    /// Milliseconds of audio after the answer the verdict took.
    public var amdMs: Int?
    /// Media streams the call had (the agent's leg and forks).
    public var streams: Int?

    /// A record; everything after `startedAt` defaults to unknown.
    public init(
        roomId: String, traceId: String, direction: String, sourceTN: String, targetTN: String,
        profile: String, startedAt: Double, ringingAt: Double? = nil, answeredAt: Double? = nil,
        endedAt: Double? = nil, endReason: String? = nil, sipCode: Int? = nil, sipReason: String? = nil,
        q850Cause: Int? = nil, codec: String? = nil, packetsLost: Int64? = nil, jitterMs: Double? = nil,
        roundTripMs: Double? = nil
    ) {
        self.roomId = roomId
        self.traceId = traceId
        self.direction = direction
        self.sourceTN = sourceTN
        self.targetTN = targetTN
        self.profile = profile
        self.startedAt = startedAt
        self.ringingAt = ringingAt
        self.answeredAt = answeredAt
        self.endedAt = endedAt
        self.endReason = endReason
        self.sipCode = sipCode
        self.sipReason = sipReason
        self.q850Cause = q850Cause
        self.codec = codec
        self.packetsLost = packetsLost
        self.jitterMs = jitterMs
        self.roundTripMs = roundTripMs
    }

    /// Post-dial delay: milliseconds from the start to the first 18x, rounded; nil when the
    /// call never rang.
    public var postDialDelayMs: Int? {
        guard let ringingAt else { return nil }
        return Int(((ringingAt - startedAt) * 1000).rounded())
    }

    /// Seconds from answer to end: 0 when the call ended without being answered, nil while
    /// it is still going. Never negative, even if the clock stepped back.
    public var durationSec: Double? {
        guard let answeredAt else { return endedAt == nil ? nil : 0 }
        guard let endedAt else { return nil }
        return max(0, endedAt - answeredAt)
    }
}
