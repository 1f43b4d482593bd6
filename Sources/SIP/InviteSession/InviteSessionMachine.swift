import SDP

/// One INVITE dialog usage (RFC 3261 §12-15, RFC 3262, RFC 3311, RFC 4028, RFC 6026) as a
/// plain state machine, as UAC or UAS.
///
/// The driver (`SIPCall`) feeds it what happened — messages received (tagged with the client
/// transaction they belong to), the application's commands and its named timers firing —
/// each with `now`, and carries out the actions it returns, in order. The machine owns no
/// socket, transaction, timer, clock or random source: the driver owns the osip transactions
/// and the loop timers; tags, the first RSeq and a UAS dialog's first CSeq come in at
/// creation; the 491 back-off and digest cnonces come from the injected `Randomness`.
///
/// What the driver can rely on:
/// - Requests come out without Via and User-Agent: the driver adds them toward the resolved
///   hop (a CANCEL takes the INVITE's Via). Responses come out complete.
/// - In each batch the reports come last, so a delegate that calls back into the call acts
///   on a finished step; `.askForAnswer` ends its batch and wants `.offerAnswer` next.
/// - A timer that fires after it was cancelled or replaced is ignored.
public struct InviteSessionMachine: Sendable {
    /// UAC (we sent the INVITE) or UAS.
    public let role: Role
    /// The dialog's Call-ID.
    public let callID: String
    /// Our tag: From of our INVITE (UAC) or To of our responses (UAS).
    public let localTag: String
    /// What the session knows of its agent.
    public let configuration: Configuration
    /// Where the session stands.
    public internal(set) var state: State = .calling
    /// Our INVITE as built, without Via (UAC, latest attempt), or the INVITE received (UAS).
    public internal(set) var invite: SIPMessage
    /// The SDP we last sent.
    public internal(set) var localSDP: SessionDescription?
    /// Body parts our INVITE carries beside its SDP (a SIPREC INVITE's metadata).
    let inviteParts: [MultipartBody.Part]
    /// The SDP the peer last sent.
    public internal(set) var remoteSDP: SessionDescription?
    /// The final response to the INVITE (either direction), once there is one.
    public internal(set) var finalResponse: SIPMessage?
    /// The dialog: the early one of the first provisional, then the confirmed one.
    public internal(set) var dialog: Dialog?
    /// The timers armed now.
    public internal(set) var armedTimers: Set<Timer> = []

    var randomness: Randomness
    var sessionTimer: SessionTimer?
    /// Session-timer terms agreed in our 2xx, started when the ACK arrives.
    var pendingNegotiated: SessionTimer.Negotiated?
    /// CSeq of the ACK the driver remembers, for re-sending it to a retransmitted 2xx.
    var rememberedACK: UInt32?
    /// Our BYE, and whether a challenge to it may still be answered.
    var bye: (request: SIPMessage, mayAuthenticate: Bool)?

    // UAC
    var credentials: DigestCredentials?
    var digest = DigestClient()
    var authRetried = false
    var sessionOffer: SessionTimerOffer?
    var provisionalSeen = false
    var cancelRequested = false
    var cancelSent = false
    /// Early dialogs by To tag: PRACKs on each fork take that fork's next CSeq.
    var earlyDialogs: [String: Dialog] = [:]
    /// Last in-order RSeq by To tag (RFC 3262 §4, per fork).
    var earlyRSeq: [String: UInt32] = [:]
    /// To tags whose 2xx we acknowledged: ours, and forks we ended.
    var ackedTags: Set<String> = []

    // UAS
    let serverTransaction: ServerTransaction?
    let firstLocalSequence: UInt32
    var retransmitting: Retransmission?
    var nextRSeq: UInt32
    var unackedReliable: Retransmission?
    var peerSupports100rel = false
    /// RSeq of a reliable provisional our final response overtook: its PRACK still gets 200
    /// (RFC 3262 §3).
    var outstandingRSeq: UInt32?
    /// A 2xx held back until the PRACK of a reliable provisional that carried SDP (RFC 3262 §3).
    var deferredAnswer: (sdp: SessionDescription?, headers: [SIPHeader])?
    /// The request whose offer the application is answering now.
    var awaitingAnswer: AwaitedAnswer?

    /// CSeq number of the last request `.sendRequest` sent.
    public internal(set) var lastRequestSequence: UInt32?

    // Offers we send
    var pendingOffer: Offer?
    var glareRetry: Offer?

    /// A response we retransmit until it is acknowledged (2xx/ACK, reliable 1xx/PRACK).
    struct Retransmission: Sendable {
        var response: SIPMessage
        /// CSeq of the request (2xx) or the RSeq (1xx) that acknowledges it.
        var sequence: UInt32
        var interval: Double
        var deadline: Double
    }

    /// A re-INVITE or UPDATE offer of ours.
    struct Offer: Sendable {
        var method: OfferMethod
        var sdp: SessionDescription
        var headers: [SIPHeader]
        /// Parts sent beside the SDP in a multipart body (none: a plain SDP body).
        var parts: [MultipartBody.Part] = []
    }

    /// A received request waiting for `.offerAnswer`.
    struct AwaitedAnswer: Sendable {
        var request: SIPMessage
        var transaction: ServerTransaction
        var offer: SessionDescription?
    }

    /// The UAC side. `invite` is our INVITE as built: From with our tag, To, Call-ID,
    /// CSeq, Contact, Allow, Supported and extra headers; `.start` adds the session-timer
    /// headers and `sdp`, and sends it. `credentials` answer one challenge (and one to BYE).
    /// `parts` go beside the SDP in a `multipart/mixed` body (RFC 5621); none: SDP alone.
    public init(
        outgoing invite: SIPMessage, sdp: SessionDescription?, parts: [MultipartBody.Part] = [],
        credentials: DigestCredentials?, configuration: Configuration, randomness: Randomness = .system
    ) {
        self.role = .uac
        self.callID = invite.callID ?? ""
        self.localTag = invite.from?.tag ?? ""
        self.configuration = configuration
        self.invite = invite
        self.localSDP = sdp
        self.inviteParts = parts
        self.credentials = credentials
        self.randomness = randomness
        self.serverTransaction = nil
        self.firstLocalSequence = 0
        self.nextRSeq = 1
    }

    /// The UAS side, for an INVITE received in `transaction`. `localTag` goes in our To;
    /// `firstRSeq` numbers our reliable provisionals; `localSequence` is the CSeq base of our
    /// requests in the dialog (RFC 3261 §12.1.1 lets it be random).
    public init(
        incoming invite: SIPMessage, transaction: ServerTransaction, localTag: String, firstRSeq: UInt32,
        localSequence: UInt32, configuration: Configuration, randomness: Randomness = .system
    ) {
        self.role = .uas
        self.callID = invite.callID ?? ""
        self.localTag = localTag
        self.configuration = configuration
        self.invite = invite
        self.randomness = randomness
        self.serverTransaction = transaction
        self.inviteParts = []
        self.firstLocalSequence = localSequence
        self.nextRSeq = firstRSeq
        self.remoteSDP = invite.sdp
        self.peerSupports100rel = invite.supports("100rel")
    }

    var policy: SIPCallPolicy { configuration.policy }
    var t1: Double { configuration.t1 }

    /// True once the session ended (it still answers retransmissions until `.remove`).
    public var isTerminated: Bool { if case .terminated = state { true } else { false } }

    /// The branch of the INVITE received (UAS): a CANCEL with it is for this call.
    public var inviteBranch: String? { role == .uas ? invite.topVia?.branch : nil }

    /// The 2xx retransmitted until its ACK, if any.
    public var unacknowledgedResponse: SIPMessage? { retransmitting?.response }

    /// True when `.ring` would send a provisional now (`reliable` as in `.ring`).
    public func canRing(reliable: Bool?) -> Bool {
        guard role == .uas, finalResponse == nil, !isTerminated else { return false }
        return !(ringsReliably(reliable) && unackedReliable != nil)
    }

    /// True when `.sendOffer` would send one now: confirmed, with no offer of ours pending.
    public var canSendOffer: Bool { state == .confirmed && pendingOffer == nil }

    /// True when `.sendInfo` would send one now: a dialog with the peer's tag, not ended.
    public var canSendInfo: Bool { !isTerminated && dialog?.remoteTag != nil }

    /// True while our re-INVITE or UPDATE awaits its final response.
    public var hasPendingOffer: Bool { pendingOffer != nil }

    /// True when `m` belongs to this call's dialog (or, before there is one, carries our tag).
    public func dialogMatches(_ m: SIPMessage) -> Bool {
        if let dialog { return dialog.matches(m) }
        return m.callID == callID && (m.isRequest ? m.to?.tag : m.from?.tag) == localTag
    }

    /// UAS: true when `m` is our INVITE again (same branch, CSeq and From tag; §17.2.3), even
    /// if the copy picked up our To tag.
    public func isRetransmission(of m: SIPMessage) -> Bool {
        role == .uas && m.topVia?.branch == inviteBranch && m.cseq == invite.cseq && m.from?.tag == invite.from?.tag
    }

    /// True when a response no transaction matched is ours to handle: a 2xx to an INVITE
    /// (ours or a re-INVITE) sent with our tag.
    public func claims(strayResponse r: SIPMessage) -> Bool {
        guard let code = r.statusCode, (200...299).contains(code) else { return false }
        return r.method == "INVITE" && r.callID == callID && r.from?.tag == localTag
    }

    /// Feeds one event; returns the actions to carry out, in order.
    public mutating func handle(_ event: Event, now: Double) -> [Action] {
        switch event {
        case .start:
            return role == .uac ? startOutgoing(now: now) : startIncoming(now: now)
        case let .response(r, request):
            return response(r, to: request, now: now)
        case .requestTimeout(let request):
            return requestFailed(request, status: 408, now: now)
        case .transportError(let request):
            return requestFailed(request, status: 503, now: now)
        case .notSent(let request):
            return notSent(request, now: now)
        case .strayResponse(let r):
            return strayResponse(r, now: now)
        case let .request(m, tx):
            return inDialogRequest(m, tx, now: now)
        case let .cancel(m, tx):
            return cancelReceived(m, tx, now: now)
        case .ack(let m):
            return ackReceived(m, now: now)
        case .inviteRetransmission:
            // The IST is gone (osip ends it at our 2xx): answer the copy with the same response.
            return finalResponse.map { [.retransmit($0)] } ?? []
        case .timerFired(let timer):
            guard armedTimers.remove(timer) != nil else { return [] }
            return timerFired(timer, now: now)
        case let .ring(sdp, status, reliable):
            return ring(sdp: sdp, status: status, reliable: reliable, now: now)
        case let .answer(sdp, headers):
            return answer(sdp: sdp, headers: headers, now: now)
        case let .reject(status, reason, headers):
            return finish(status: status, reason: reason, headers: headers, end: .rejected(status: status), now: now)
        case let .hangup(status, headers):
            return hangup(status: status, headers: headers, now: now)
        case .cancelInvite:
            return cancel(now: now)
        case let .sendOffer(method, sdp, headers, parts):
            return sendOffer(Offer(method: method, sdp: sdp, headers: headers, parts: parts), now: now)
        case let .sendInfo(contentType, body, headers):
            return sendInfo(contentType: contentType, body: body, headers: headers)
        case let .sendRequest(method, headers, contentType, body):
            return sendRequest(method: method, headers: headers, contentType: contentType, body: body)
        case .offerAnswer(let sdp):
            return offerAnswered(sdp, now: now)
        }
    }

    // MARK: - Shared steps

    private mutating func timerFired(_ timer: Timer, now: Double) -> [Action] {
        switch timer {
        case .responseRetransmit: return responseRetransmitDue(now: now)
        case .provisionalRetransmit: return provisionalRetransmitDue(now: now)
        case .cancelGuard: return cancelGuardDue(now: now)
        case .failover: return failoverDue(now: now)
        case .glareRetry: return glareRetryDue(now: now)
        case .sessionTimer: return sessionTimerDue(now: now)
        case .removal: return [.remove]
        }
    }

    private mutating func hangup(status: Int, headers: [SIPHeader], now: Double) -> [Action] {
        switch state {
        case .terminated:
            return []
        case .confirmed:
            return sendBye(headers: headers, now: now)
        case .calling, .early:
            if role == .uac { return cancel(now: now) }
            if finalResponse == nil {
                return finish(status: status, reason: nil, headers: headers, end: .rejected(status: status), now: now)
            }
            return sendBye(headers: headers, now: now)
        }
    }

    /// Ends the call once: stops every timer, arms the removal, reports.
    mutating func end(_ reason: SIPCallEnd, _ message: SIPMessage?, now: Double) -> [Action] {
        guard !isTerminated else { return [] }
        state = .terminated(reason)
        retransmitting = nil
        unackedReliable = nil
        var actions = Timer.allCases.filter { $0 != .removal }.flatMap { stop($0) }
        // Keep answering retransmissions of the INVITE and the 2xx for a while (64*T1). An
        // incoming call refused with a non-2xx has nothing to answer: osip's INVITE server
        // transaction resends the refusal and absorbs the ACK; a short grace still gives a
        // crossing CANCEL its 200. (A flood of refused INVITEs then holds no calls for 32 s.)
        let refusedIncoming = role == .uas && (finalResponse?.statusCode ?? 0) >= 300
        actions.append(start(.removal, at: now + (refusedIncoming ? 4 : 64) * t1))
        actions.append(.report(.ended(reason, message)))
        return actions
    }

    mutating func start(_ timer: Timer, at time: Double) -> Action {
        armedTimers.insert(timer)
        return .startTimer(timer, at: time)
    }

    mutating func stop(_ timer: Timer) -> [Action] {
        armedTimers.remove(timer) == nil ? [] : [.cancelTimer(timer)]
    }

    /// BYE in the dialog, then the end (§15.1.1). A challenge to it is answered only on calls
    /// we placed with credentials: a callee that challenges our BYE on an inbound call gets
    /// nothing (the digest-leak attack).
    mutating func sendBye(reason: SIPCallEnd = .localHangup, headers: [SIPHeader] = [], now: Double) -> [Action] {
        guard var d = dialog else { return [] }
        var request = d.makeRequest("BYE")
        request.headers.append(contentsOf: headers)
        dialog = d
        bye = (request, role == .uac && credentials != nil)
        return [.send(request, for: .bye, to: .uri(d.nextHop))] + end(reason, nil, now: now)
    }

    /// A 401/407 to our BYE: once, with credentials, on calls we placed.
    mutating func byeChallenged(_ r: SIPMessage) -> [Action] {
        guard let sent = bye, sent.mayAuthenticate, let code = r.statusCode, code == 401 || code == 407,
            let creds = credentials, let challenge = r.digestChallenges.first, let uri = sent.request.requestURI,
            let auth = try? digest.authorization(
                for: [challenge], method: "BYE", uri: uri.serialize(),
                credentials: creds, cnonce: randomness.cnonce()),
            var d = dialog
        else { return [] }
        var again = sent.request
        d.localSequence &+= 1
        dialog = d
        again.setHeader(.cseq, CSeq(d.localSequence, "BYE").serialize())
        again.addHeader(code == 401 ? .authorization : .proxyAuthorization, auth.serialize())
        bye = (again, false)
        return [.send(again, for: .bye, to: .uri(d.nextHop))]
    }

    /// ACK for a 2xx: no transaction, built in the dialog with the INVITE's CSeq and its
    /// credentials (§13.2.2.4, §22.1).
    mutating func ack(in d: Dialog, cseq: UInt32, remember: Bool) -> Action {
        var copy = d
        var ack = copy.makeRequest("ACK", cseq: cseq)
        for name: SIPHeaderName in [.authorization, .proxyAuthorization] {
            for h in invite.headers where h.name == name { ack.addHeader(name, h.value) }
        }
        if remember { rememberedACK = cseq }
        return .sendACK(ack, to: .uri(d.nextHop), remember: remember)
    }

    /// A response built as `SIPMessage.response(to:)` does, with our Server header.
    func response(
        to request: SIPMessage, _ status: Int, reason: String? = nil, toTag: String? = nil,
        headers: [SIPHeader] = [], sdp: SessionDescription? = nil
    ) -> SIPMessage {
        var r = SIPMessage.response(to: request, status: status, reason: reason, toTag: toTag)
        r.headers.append(contentsOf: headers)
        r.addHeader(.server, configuration.serverHeader)
        if let sdp { r.setSDP(sdp) }
        return r
    }

    var contactHeader: SIPHeader { contactHeader(configuration.contact) }

    /// Contact for `uri` with the configuration's feature tags (RFC 3840).
    func contactHeader(_ uri: SIPURI) -> SIPHeader {
        SIPHeader(.contact, NameAddress(uri: uri, parameters: configuration.contactParameters).serialize())
    }
}
