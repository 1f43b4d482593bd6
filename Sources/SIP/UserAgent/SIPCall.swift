import SDP

/// How an INVITE session ended, classified where it happens so the layer above can map it
/// to its own terms (session end reasons, Iris error codes) without reading SIP again.
public enum SIPCallEnd: Sendable, Equatable {
    /// A final non-2xx response to our INVITE (or one we sent to theirs).
    case rejected(status: Int)
    /// Our CANCEL took effect (487), or the caller cancelled theirs.
    case canceled
    /// The peer sent BYE.
    case remoteHangup
    /// We sent BYE (whatever its response).
    case localHangup
    /// No final response to our INVITE (Timer B) or to our CANCEL's INVITE within 64*T1.
    case timeout
    /// No response at all to our INVITE within the policy's `failoverTimeout`: the INVITE
    /// was abandoned without a CANCEL (RFC 3261 §9.1: nothing to cancel at a target that
    /// sent nothing), so the next target can be tried.
    case noProvisional
    case transportError
    /// We answered but no ACK came within 64*T1 (we then sent BYE).
    case ackTimeout
    /// The session timer ran out with no refresh (RFC 4028 §10); we sent BYE.
    case sessionExpired
}

/// What a `SIPCall` reports, on the SIP loop. Every method has an empty default.
public protocol SIPCallDelegate: AnyObject {
    /// A 1xx other than 100 (with or without SDP; reliable ones are already PRACKed).
    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage)
    /// A 100 Trying to our INVITE: the next hop has it and is working on it.
    func call(_ call: SIPCall, didReceiveTrying response: SIPMessage)
    /// The call is confirmed: the 2xx to our INVITE (ACK sent), or the ACK to our 2xx.
    func call(_ call: SIPCall, didConnect message: SIPMessage)
    /// The peer sent an offer (re-INVITE, UPDATE, PRACK); return the answer. `nil` offer: the
    /// peer wants ours (re-INVITE without SDP); return our current offer. Returning nil
    /// refuses a PRACK's offer with 488; for a re-INVITE or UPDATE we then answer with our
    /// current SDP (`localSDP`), and with 488 only when we have none.
    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription?
    /// The answer to an offer of ours arrived (in a 2xx, a reliable 1xx or an ACK).
    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage)
    /// An in-dialog request other than re-INVITE/UPDATE/BYE (INFO ...), already answered 200.
    func call(_ call: SIPCall, didReceiveRequest request: SIPMessage)
    /// The re-INVITE or UPDATE we sent got a final response (`status`).
    func call(_ call: SIPCall, didCompleteOffer status: Int)
    /// A REFER or NOTIFY arrived in the dialog: return the response to send (RFC 3515 202 or
    /// a refusal; RFC 6665 200, or 481 for a subscription we do not have). Default: REFER
    /// 603 Decline, NOTIFY 481.
    func call(_ call: SIPCall, responseTo request: SIPMessage) -> SIPRequestResponse
    /// A request sent with `request(_:)` (REFER, NOTIFY) got its final `status` (408: no
    /// answer; 503: it could not be sent).
    func call(_ call: SIPCall, didCompleteRequest method: String, cseq: UInt32, status: Int, response: SIPMessage?)
    /// Exactly once, last. `message` is the response or request that ended it, when any.
    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?)
}

extension SIPCallDelegate {
    public func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {}
    public func call(_ call: SIPCall, didReceiveTrying response: SIPMessage) {}
    public func call(_ call: SIPCall, didConnect message: SIPMessage) {}
    public func call(
        _ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage
    ) -> SessionDescription? { call.localSDP }
    public func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {}
    public func call(_ call: SIPCall, didReceiveRequest request: SIPMessage) {}
    public func call(_ call: SIPCall, didCompleteOffer status: Int) {}
    public func call(_ call: SIPCall, responseTo request: SIPMessage) -> SIPRequestResponse {
        SIPRequestResponse.refusal(for: request)
    }
    public func call(
        _ call: SIPCall, didCompleteRequest method: String, cseq: UInt32, status: Int, response: SIPMessage?
    ) {}
    public func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {}
}

/// One INVITE session (an INVITE dialog usage, RFC 3261 §12-15) as UAC or UAS.
///
/// A thin driver of `InviteSessionMachine`, which holds the protocol: the call feeds it
/// what arrives from the agent, the application's commands and its timers, and carries out
/// its actions with the agent's transactions, transports and loop timers, and this
/// delegate. Loop-confined, like its `SIPUserAgent`: its mutable state is in `loopState`,
/// checked on every access in debug builds.
public final class SIPCall: Sendable {
    /// Where the call stands: calling, early, confirmed, terminated with its end.
    public typealias State = InviteSessionMachine.State

    /// What only the agent's loop touches (the properties below reach it).
    struct LoopState {
        weak var delegate: SIPCallDelegate?
        var authenticatedUsername: String?
        var machine: InviteSessionMachine
        var misbehaviour = TestPeerMisbehaviour()
        var sentInvite: SIPMessage?
        var inviteTransaction: ClientTransaction?
        var clientTransactions: [ClientTransaction] = []
        var timers: [InviteSessionMachine.Timer: SIPEventLoop.Timer] = [:]
        var rememberedACK: (bytes: [UInt8], peer: SIPPeer)?
        var queue: [InviteSessionMachine.Event] = []
        var running = false

        /// Feeds `event` to the machine through the misbehaviour wrapper: one in-place access to
        /// the call's box for both (through the call's two properties it would be a copy of the
        /// wrapper out and back per event, or two overlapping accesses to the box).
        mutating func handle(_ event: InviteSessionMachine.Event, now: Double) -> [InviteSessionMachine.Action] {
            misbehaviour.handle(event, on: &machine, now: now)
        }
    }
    let loopState: LoopBoundBox<LoopState>

    /// Hears what happens, on the SIP loop.
    public weak var delegate: SIPCallDelegate? {
        get { loopState.value.delegate }
        set { loopState.value.delegate = newValue }
    }
    /// True when the peer called us.
    public let isIncoming: Bool
    /// The dialog's Call-ID.
    public let callID: String
    /// Where the INVITE went (UAC) or came from (UAS): where responses and retransmissions go.
    public let peer: SIPPeer
    /// Who sent the INVITE (UAS): `peer`, or the carrier a trusted proxy named in
    /// `X-Irisgw-Source` (`SIPUserAgent.isTrustedProxy`). UAC: `peer`.
    public let source: SIPPeer
    /// Incoming: the digest username the INVITE authenticated as (RFC 3261 §22.2); nil when
    /// its source did not have to authenticate.
    public internal(set) var authenticatedUsername: String? {
        get { loopState.value.authenticatedUsername }
        set { loopState.value.authenticatedUsername = newValue }
    }

    /// Where the call stands.
    public var state: State { machine.state }
    /// The INVITE as sent (UAC, latest attempt) or as received (UAS).
    public var invite: SIPMessage { sentInvite ?? machine.invite }
    /// The SDP we last sent.
    public var localSDP: SessionDescription? { machine.localSDP }
    /// The SDP the peer last sent.
    public var remoteSDP: SessionDescription? { machine.remoteSDP }
    /// The final response to the INVITE (either direction), once there is one.
    public var finalResponse: SIPMessage? { machine.finalResponse }
    /// True once the call ended.
    public var isTerminated: Bool { machine.isTerminated }
    /// True while our re-INVITE or UPDATE awaits its final response.
    public var hasPendingOffer: Bool { machine.hasPendingOffer }
    /// The call's SIP identity for logs: Call-ID and direction.
    public var summary: String { "\(isIncoming ? "in" : "out") \(callID)" }

    unowned let ua: SIPUserAgent
    var machine: InviteSessionMachine {
        get { loopState.value.machine }
        _modify { yield &loopState.value.machine }
    }
    /// Test peers only: what the call keeps from its machine (empty: nothing).
    var misbehaviour: TestPeerMisbehaviour {
        get { loopState.value.misbehaviour }
        _modify { yield &loopState.value.misbehaviour }
    }
    /// UAC: the INVITE as last sent, with its Via (a CANCEL copies it, §9.1).
    var sentInvite: SIPMessage? {
        get { loopState.value.sentInvite }
        set { loopState.value.sentInvite = newValue }
    }
    var inviteTransaction: ClientTransaction? {
        get { loopState.value.inviteTransaction }
        set { loopState.value.inviteTransaction = newValue }
    }
    /// Every client transaction the call started. At removal any still alive is ended: an
    /// INVITE or re-INVITE that never saw a final response (a BYE in the early dialog, a
    /// re-INVITE answered with 100 alone, a 2xx that reached the call around its
    /// transaction) would otherwise stay in Proceeding for ever, since osip runs no timer
    /// there (RFC 3261 §17.1.1.2 leaves it to the TU). Found by fuzz-sip-session.
    var clientTransactions: [ClientTransaction] {
        get { loopState.value.clientTransactions }
        _modify { yield &loopState.value.clientTransactions }
    }
    var timers: [InviteSessionMachine.Timer: SIPEventLoop.Timer] {
        get { loopState.value.timers }
        _modify { yield &loopState.value.timers }
    }
    /// The ACK for our 2xx as sent, for a retransmitted 2xx.
    var rememberedACK: (bytes: [UInt8], peer: SIPPeer)? {
        get { loopState.value.rememberedACK }
        set { loopState.value.rememberedACK = newValue }
    }
    /// Events that arrived while actions were being carried out (a delegate calling back).
    var queue: [InviteSessionMachine.Event] {
        get { loopState.value.queue }
        _modify { yield &loopState.value.queue }
    }
    var running: Bool {
        get { loopState.value.running }
        set { loopState.value.running = newValue }
    }

    /// The dialog, once there is one.
    var dialog: Dialog? { machine.dialog }
    /// The 2xx we retransmit until its ACK, if any.
    var retransmitting: SIPMessage? { machine.unacknowledgedResponse }

    init(
        outgoing invite: SIPMessage, sdp: SessionDescription?, parts: [MultipartBody.Part] = [],
        contactParameters: [SIPParameter] = [], credentials: DigestCredentials?, peer: SIPPeer,
        policy: SIPCallPolicy, ua: SIPUserAgent
    ) {
        self.isIncoming = false
        self.callID = invite.callID ?? ""
        self.peer = peer
        self.source = peer
        self.ua = ua
        var configuration = Self.configuration(ua, policy, peer, secure: invite.requestURI?.scheme == "sips")
        configuration.contactParameters = contactParameters
        let machine = InviteSessionMachine(
            outgoing: invite, sdp: sdp, parts: parts, credentials: credentials, configuration: configuration)
        loopState = LoopBoundBox(LoopState(machine: machine), loop: ua.loop)
    }

    init(incoming invite: SIPMessage, transaction: ServerTransaction, ua: SIPUserAgent) {
        self.isIncoming = true
        self.callID = invite.callID ?? ""
        self.peer = transaction.peer
        self.source = ua.source(of: invite, from: transaction.peer)
        self.ua = ua
        let machine = InviteSessionMachine(
            incoming: invite, transaction: transaction, localTag: SIPIdentifiers.tag(),
            firstRSeq: UInt32.random(in: 1...1000), localSequence: UInt32.random(in: 1...10_000),
            configuration: Self.configuration(
                ua, ua.inboundCallPolicy, transaction.peer,
                secure: invite.requestURI?.scheme == "sips"))
        loopState = LoopBoundBox(LoopState(machine: machine), loop: ua.loop)
    }

    private static func configuration(
        _ ua: SIPUserAgent, _ policy: SIPCallPolicy, _ peer: SIPPeer,
        secure: Bool
    ) -> InviteSessionMachine.Configuration {
        InviteSessionMachine.Configuration(
            policy: policy, contact: ua.contactURI(toward: peer, secure: secure),
            serverHeader: ua.configuration.userAgent, t1: ua.configuration.t1)
    }

    // MARK: Commands

    /// Hangs up in whatever way the state needs: CANCEL before a final response (UAC),
    /// 480 (or `status`) for an unanswered incoming call, BYE once confirmed. `headers` go
    /// into the BYE or the rejection (a `Reason` with a Q.850 cause, say).
    public func hangup(status: Int = 480, headers: [SIPHeader] = []) {
        run(.hangup(status: status, headers: headers))
    }

    /// Cancels our INVITE (§9.1). Before any provisional response the CANCEL waits for one.
    public func cancel() { run(.cancelInvite) }

    /// Sends 180 Ringing, or 183 Session Progress when `sdp` is given (early media); status
    /// 100 sends a 100 Trying the agent's delegate withheld (`sendsTryingFor`). Returns
    /// false when it cannot be sent now (a reliable provisional is still unacknowledged).
    /// `reliable: true` asks for RFC 3262 reliability whatever the agent's policy, when the
    /// peer supports 100rel (a test carrier that always PRACKs); nil follows the policy.
    @discardableResult
    public func ring(sdp: SessionDescription? = nil, status: Int? = nil, reliable: Bool? = nil) -> Bool {
        guard machine.canRing(reliable: reliable) else { return false }
        run(.ring(sdp: sdp, status: status, reliable: reliable))
        return true
    }

    /// Answers the call with 200 OK and `sdp` (an answer, or our offer when the INVITE had
    /// none); the 200 is retransmitted until the ACK (§13.3.1.4). While a reliable
    /// provisional with SDP awaits its PRACK, the 200 waits for it (RFC 3262 §3).
    public func answer(sdp: SessionDescription?, headers: [SIPHeader] = []) {
        run(.answer(sdp: sdp, headers: headers))
    }

    /// Test peers only (the carrier simulator): from now on the ACK for our 2xx to the INVITE
    /// is dropped as if lost, so the 2xx is retransmitted on `ignored`'s timer until the
    /// session gives up with a BYE (`TestPeerMisbehaviour.IgnoredACK`). Call before `answer`.
    public func ignoreACK(_ ignored: TestPeerMisbehaviour.IgnoredACK) {
        misbehaviour.ignoredACK = ignored
    }

    /// Rejects the call with a final response (486, 603, 480 ...).
    public func reject(status: Int, reason: String? = nil, headers: [SIPHeader] = []) {
        run(.reject(status: status, reason: reason, headers: headers))
    }

    /// Sends a re-INVITE with `sdp` (hold: `a=sendonly`; unhold: `a=sendrecv`). The answer
    /// arrives through `didReceiveAnswer`, the outcome through `didCompleteOffer`. Returns
    /// false when an offer is already pending or the call is not confirmed. `parts` go
    /// beside the SDP in a `multipart/mixed` body (RFC 5621: SIPREC's new metadata).
    @discardableResult
    public func reinvite(sdp: SessionDescription, headers: [SIPHeader] = [], parts: [MultipartBody.Part] = []) -> Bool {
        offer(.reInvite, sdp: sdp, headers: headers, parts: parts)
    }

    /// Sends an UPDATE with `sdp` (RFC 3311) in the confirmed dialog; reported as `reinvite`.
    @discardableResult
    public func update(sdp: SessionDescription, headers: [SIPHeader] = []) -> Bool {
        offer(.update, sdp: sdp, headers: headers)
    }

    /// Sends an INFO (RFC 6086) with this body in the dialog; its response is not reported.
    /// Returns false when there is no dialog to send it in.
    @discardableResult
    public func info(contentType: String, body: [UInt8], headers: [SIPHeader] = []) -> Bool {
        guard machine.canSendInfo else { return false }
        run(.sendInfo(contentType: contentType, body: body, headers: headers))
        return true
    }

    /// Sends another request in the dialog (REFER, NOTIFY) with `headers` and a body; its
    /// outcome comes to `didCompleteRequest` with its CSeq number. Returns that number, or nil
    /// when there is no dialog to send in. Called from one of this call's delegate callbacks
    /// the request is queued and nil returned (its outcome still reported with its number).
    @discardableResult
    public func request(
        _ method: String, headers: [SIPHeader] = [], contentType: String? = nil, body: [UInt8] = []
    ) -> UInt32? {
        guard machine.canSendInfo else { return nil }
        let wasRunning = running
        run(.sendRequest(method: method, headers: headers, contentType: contentType, body: body))
        return wasRunning ? nil : machine.lastRequestSequence
    }

    /// The dialog as it stands (tags, targets, route set), once there is one.
    public var currentDialog: Dialog? { machine.dialog }

    private func offer(
        _ method: InviteSessionMachine.OfferMethod, sdp: SessionDescription, headers: [SIPHeader],
        parts: [MultipartBody.Part] = []
    ) -> Bool {
        guard machine.canSendOffer else { return false }
        run(.sendOffer(method, sdp: sdp, headers: headers, parts: parts))
        // Called back from a delegate, the offer is queued; otherwise it went (or failed).
        return running || machine.hasPendingOffer
    }
}
