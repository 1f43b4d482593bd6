import Media

/// Someone in the recorded call, as the recording metadata names them (RFC 7865
/// `participant`): an address of record, a display name, and which of the call's two tracks
/// they send and receive. The gateway says who is in the call; the recorder gives each one
/// an id (kept while the same AOR stays) and the times they joined and left.
public struct SIPRECParticipant: Sendable, Equatable {
    /// A SIP or tel URI (`sip:+15551230001@carrier.example`).
    public var aor: String
    /// A display name, when the call has one.
    public var name: String?
    /// The tracks this participant is heard on (`inbound`: the carrier's side).
    public var sends: [MediaAudioTrack]
    /// The tracks this participant hears.
    public var receives: [MediaAudioTrack]

    /// Creates a participant.
    public init(aor: String, name: String? = nil, sends: [MediaAudioTrack], receives: [MediaAudioTrack]) {
        self.aor = aor
        self.name = name
        self.sends = sends
        self.receives = receives
    }

    /// The carrier's side: heard on `inbound` (label 1), hears `outbound` (label 2).
    public static func carrier(aor: String, name: String? = nil) -> SIPRECParticipant {
        SIPRECParticipant(aor: aor, name: name, sends: [.inbound], receives: [.outbound])
    }

    /// The application's side: heard on `outbound` (label 2), hears `inbound` (label 1).
    public static func application(aor: String, name: String? = nil) -> SIPRECParticipant {
        SIPRECParticipant(aor: aor, name: name, sends: [.outbound], receives: [.inbound])
    }
}
