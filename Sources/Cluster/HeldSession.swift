/// What the cluster keeps of a session while a node holds it: enough for another node to
/// find the holder, and for a survivor to end the session and tell its app after the
/// holder died. JSON in `P:held:M`.
public struct HeldSession: Codable, Sendable, Equatable {
    public var roomId: String
    public var traceId: String
    public var routingId: String?
    /// `outbound` or `inbound`.
    public var direction: String
    /// The trunk profile.
    public var profile: String
    /// Unix seconds.
    public var startedAt: Double
    /// The trunk direction whose cluster limits count the call (`outbound`/`inbound`); nil
    /// when none does.
    public var countedIn: String?
    /// Ringing outbound: the INVITE to CANCEL if the holder dies before an answer (JSON the
    /// gateway understands); nil once answered or for inbound.
    public var pendingInvite: String?

    public init(
        roomId: String, traceId: String, routingId: String?, direction: String, profile: String, startedAt: Double,
        countedIn: String? = nil, pendingInvite: String? = nil
    ) {
        self.roomId = roomId
        self.traceId = traceId
        self.routingId = routingId
        self.direction = direction
        self.profile = profile
        self.startedAt = startedAt
        self.countedIn = countedIn
        self.pendingInvite = pendingInvite
    }
}

/// A dead member's sessions as a survivor reads them: what it held, and the dialogs of the
/// answered ones (room id → dialog JSON).
public struct DeadMemberSessions: Sendable {
    public var member: NodeMember
    public var sessions: [HeldSession]
    public var dialogs: [String: String]
    /// When the member was last known alive (Unix seconds), when Redis still knows.
    public var lastSeen: Double?
}
