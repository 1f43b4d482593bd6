/// `POST /v1/sessions/{roomId}/transfer`: hand the call on. Exactly one of the two:
/// `targetTN` for a blind transfer (REFER to that number), `replacesRoomId` for an attended
/// one (REFER with `Replaces` naming the other session's dialog on the same trunk).
public struct TransferRequest: Codable, Sendable, Equatable {
    public var targetTN: String?
    public var replacesRoomId: String?
    public init(targetTN: String? = nil, replacesRoomId: String? = nil) {
        self.targetTN = targetTN
        self.replacesRoomId = replacesRoomId
    }
}

/// Where a transfer stands (`onSessionTransfer.transfer.state`).
public enum TransferState: String, Codable, Sendable, Equatable, CaseIterable {
    /// Asked: our REFER is out, or the carrier's REFER arrived (`onSessionTransferRequest`).
    case requested
    /// The transfer target has the call (NOTIFY `100 Trying`, or our INVITE to it).
    case trying
    /// The target is ringing (NOTIFY `180`/`183`).
    case ringing
    /// Done: the target answered; the session ends `transferred` (or, for a transfer the
    /// carrier made with Replaces or that we dialled, goes on with the new leg).
    case succeeded
    /// Not done; `sip` says why. The call is as it was before.
    case failed
}

/// What `onSessionTransfer` and `onSessionTransferRequest` carry beyond the common fields.
public struct TransferInfo: Codable, Sendable, Equatable {
    public var state: TransferState
    /// Who started it: `app` (the control API) or `carrier` (a REFER or an INVITE with Replaces).
    public var by: String
    /// How: `refer` (the carrier moved the call), `bridge` (the gateway dialled the target
    /// and joined the two trunk legs), `dial` (the gateway dialled the target for a carrier's
    /// REFER and moved the app onto it), `replaces` (a carrier's INVITE with Replaces took the
    /// place of the trunk leg).
    public var method: String
    /// The number the call goes to (blind transfer, a carrier's Refer-To).
    public var targetTN: String?
    /// The other session of an attended transfer.
    public var replacesRoomId: String?
    /// A carrier's `Referred-By`, as sent.
    public var referredBy: String?

    public init(
        state: TransferState, by: String, method: String, targetTN: String? = nil, replacesRoomId: String? = nil,
        referredBy: String? = nil
    ) {
        self.state = state
        self.by = by
        self.method = method
        self.targetTN = targetTN
        self.replacesRoomId = replacesRoomId
        self.referredBy = referredBy
    }
}
