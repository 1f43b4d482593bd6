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
    /// The call is confirmed: the 2xx to our INVITE (ACK sent), or the ACK to our 2xx.
    func call(_ call: SIPCall, didConnect message: SIPMessage)
    /// The peer sent an offer (re-INVITE, UPDATE, PRACK, or an INVITE with a body); return
    /// the answer, or nil to refuse it with 488. `nil` offer: the peer wants ours (re-INVITE
    /// without SDP); return our current offer.
    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription?
    /// The answer to an offer of ours arrived (in a 2xx, a reliable 1xx or an ACK).
    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage)
    /// An in-dialog request other than re-INVITE/UPDATE/BYE (INFO ...), already answered 200.
    func call(_ call: SIPCall, didReceiveRequest request: SIPMessage)
    /// The re-INVITE or UPDATE we sent got a final response (`status`).
    func call(_ call: SIPCall, didCompleteOffer status: Int)
    /// Exactly once, last. `message` is the response or request that ended it, when any.
    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?)
}

extension SIPCallDelegate {
    public func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {}
    public func call(_ call: SIPCall, didConnect message: SIPMessage) {}
    public func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? { call.localSDP }
    public func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {}
    public func call(_ call: SIPCall, didReceiveRequest request: SIPMessage) {}
    public func call(_ call: SIPCall, didCompleteOffer status: Int) {}
    public func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {}
}

/// One INVITE session (an INVITE dialog usage, RFC 3261 §12-15) as UAC or UAS.
/// Loop-confined, like its `SIPUserAgent`.
public final class SIPCall: @unchecked Sendable {
    public enum State: Sendable, Equatable {
        /// INVITE sent or received, nothing else yet.
        case calling
        /// A provisional response with a To tag was sent or received.
        case early
        case confirmed
        case terminated(SIPCallEnd)
    }

    public weak var delegate: SIPCallDelegate?
    public let isIncoming: Bool
    public let callID: String
    public internal(set) var state: State = .calling
    /// The INVITE as sent (UAC, latest attempt) or as received (UAS).
    public internal(set) var invite: SIPMessage
    /// Where the INVITE went (UAC) or came from (UAS).
    public let peer: SIPPeer
    /// The SDP we last sent.
    public internal(set) var localSDP: SessionDescription?
    /// The SDP the peer last sent.
    public internal(set) var remoteSDP: SessionDescription?
    /// The final response to the INVITE (either direction), once there is one.
    public internal(set) var finalResponse: SIPMessage?

    unowned let ua: SIPUserAgent
    let localTag: String
    /// PRACK and session timers for this call: the agent's, or an outgoing call's own.
    var policy: SIPCallPolicy
    var dialog: Dialog?
    var inviteBranch: String?
    var sessionTimer: SessionTimer?
    var sessionTimerHandle: SIPEventLoop.Timer?
    /// Session-timer terms agreed in our 2xx, started when the ACK arrives.
    var pendingNegotiated: SessionTimer.Negotiated?

    // UAC
    var inviteTransaction: ClientTransaction?
    var credentials: DigestCredentials?
    var digest = DigestClient()
    var authRetried = false
    var sessionOffer: SessionTimerOffer?
    var provisionalSeen = false
    var cancelRequested = false
    var cancelTimer: SIPEventLoop.Timer?
    var sentACK: (bytes: [UInt8], peer: SIPPeer, cseq: UInt32)?
    var earlyRSeq: [String: UInt32] = [:]

    // UAS
    var serverTransaction: ServerTransaction?
    var retransmitTimer: SIPEventLoop.Timer?
    var retransmitting: (response: SIPMessage, cseq: UInt32, interval: Double, deadline: Double)?
    var nextRSeq: UInt32 = UInt32.random(in: 1...1000)
    var unackedReliable: (response: SIPMessage, rseq: UInt32, interval: Double, deadline: Double)?
    var reliableTimer: SIPEventLoop.Timer?
    var peerSupports100rel = false
    /// RSeq of a reliable provisional still unacknowledged when the final response went out:
    /// its PRACK still gets 200 (RFC 3262 §3).
    var outstandingRSeq: UInt32?
    /// A 2xx held back until the PRACK of a reliable provisional that carried SDP (RFC 3262 §3).
    var deferredAnswer: (sdp: SessionDescription?, headers: [SIPHeader])?

    // re-INVITE / UPDATE
    var pendingOffer: ClientTransaction?
    var glareTimer: SIPEventLoop.Timer?
    /// A re-INVITE we answered with an offer (it had no SDP): the ACK carries the answer.
    var awaitingAnswerInACK = false

    init(outgoing invite: SIPMessage, peer: SIPPeer, ua: SIPUserAgent, localTag: String) {
        self.isIncoming = false
        self.invite = invite
        self.callID = invite.callID ?? ""
        self.peer = peer
        self.ua = ua
        self.localTag = localTag
        self.policy = ua.configuration.callPolicy
    }

    init(incoming invite: SIPMessage, transaction: ServerTransaction, ua: SIPUserAgent) {
        self.isIncoming = true
        self.invite = invite
        self.callID = invite.callID ?? ""
        self.peer = transaction.peer
        self.ua = ua
        self.policy = ua.configuration.callPolicy
        self.localTag = SIPIdentifiers.tag()
        self.serverTransaction = transaction
        self.inviteBranch = invite.topVia?.branch
        self.remoteSDP = invite.sdp
        self.peerSupports100rel = invite.supports("100rel")
    }

    public var isTerminated: Bool { if case .terminated = state { true } else { false } }

    /// The call's SIP identity for logs: Call-ID and direction.
    public var summary: String { "\(isIncoming ? "in" : "out") \(callID)" }

    func dialogMatches(_ m: SIPMessage) -> Bool {
        if let dialog { return dialog.matches(m) }
        // Early: requests from the far end carry our tag in To.
        return m.callID == callID && (m.isRequest ? m.to?.tag : m.from?.tag) == localTag
    }

    /// Ends the call once: stops every timer, reports, and leaves the agent's table.
    func end(_ reason: SIPCallEnd, _ message: SIPMessage?) {
        guard !isTerminated else { return }
        state = .terminated(reason)
        for t in [cancelTimer, retransmitTimer, reliableTimer, glareTimer, sessionTimerHandle] { ua.loop.cancel(t) }
        retransmitting = nil
        unackedReliable = nil
        // Keep answering retransmissions of the INVITE / 2xx for a while (64*T1).
        ua.loop.schedule(after: 64 * ua.configuration.t1) { [weak self] in
            guard let self else { return }
            // An INVITE or re-INVITE of ours whose transaction never saw a final response
            // (the callee sent BYE in the early dialog, answered our re-INVITE with 100
            // alone, or sent a 2xx osip's parser refuses) would stay in Proceeding for ever:
            // osip runs no timer there (RFC 3261 §17.1.1.2 leaves it to the TU). By now any
            // other has ended (Timer D is 64*T1 too). Found by fuzz-sip-session.
            if !self.isIncoming, let tx = self.inviteTransaction { self.ua.transactions.terminate(tx) }
            if let tx = self.pendingOffer { self.ua.transactions.terminate(tx) }
            self.ua.remove(self)
        }
        delegate?.call(self, didEnd: reason, message: message)
    }

    /// Hangs up in whatever way the state needs: CANCEL before a final response (UAC),
    /// 480 (or `status`) for an unanswered incoming call, BYE once confirmed. `headers` go
    /// into the BYE or the rejection (a `Reason` with a Q.850 cause, say).
    public func hangup(status: Int = 480, headers: [SIPHeader] = []) {
        switch state {
        case .terminated:
            return
        case .confirmed:
            sendBye(headers: headers)
        case .calling, .early:
            if isIncoming {
                if finalResponse == nil { reject(status: status, headers: headers) } else { sendBye(headers: headers) }
            } else {
                cancel()
            }
        }
    }

    // MARK: In-dialog requests we send

    func sendInDialog(_ method: String, sdp: SessionDescription? = nil, headers: [SIPHeader] = [],
                      handler: @escaping (ClientTransactionEvent) -> Void) -> ClientTransaction? {
        guard var d = dialog else { return nil }
        var m = d.makeRequest(method)
        dialog = d
        if method == "INVITE" || method == "UPDATE" {
            m.addHeader(.contact, NameAddress(uri: d.localContact).serialize())
            m.addHeader(.supported, policy.supportedOptionTags.joined(separator: ", "))
        }
        m.headers.append(contentsOf: headers)
        if let sdp {
            m.setSDP(sdp)
            localSDP = sdp
        }
        return ua.send(m, to: inDialogPeer, handler: handler).0
    }

    /// Where in-dialog requests go: the next hop of the dialog, over the call's transport.
    var inDialogPeer: SIPPeer {
        guard let d = dialog, let resolved = SIPUserAgent.resolve(d.nextHop, defaultTransport: peer.transport) else { return peer }
        var p = resolved
        if p.address == peer.address { p.connection = peer.connection }
        return p
    }

    func sendBye(reason: SIPCallEnd = .localHangup, headers: [SIPHeader] = []) {
        guard var d = dialog else { return }
        var bye = d.makeRequest("BYE")
        bye.headers.append(contentsOf: headers)
        dialog = d
        transmitBye(bye, mayAuthenticate: !isIncoming && credentials != nil)
        end(reason, nil)
    }

    /// Sends BYE; a 401/407 is answered once, and only on calls we placed through a trunk
    /// with credentials: a callee that challenges our BYE on an inbound call gets nothing
    /// (the digest-leak attack).
    private func transmitBye(_ bye: SIPMessage, mayAuthenticate: Bool) {
        ua.send(bye, to: inDialogPeer) { [self] event in
            guard mayAuthenticate, case .response(let r) = event, let code = r.statusCode, code == 401 || code == 407,
                  let creds = credentials, let challenge = challenges(in: r).first, let uri = bye.requestURI,
                  let auth = try? digest.authorization(for: [challenge], method: "BYE", uri: uri.serialize(), credentials: creds),
                  var d = dialog else { return }
            var again = bye
            d.localSequence &+= 1
            dialog = d
            again.setHeader(.cseq, CSeq(d.localSequence, "BYE").serialize())
            again.addHeader(code == 401 ? .authorization : .proxyAuthorization, auth.serialize())
            transmitBye(again, mayAuthenticate: false)
        }
    }

    func challenges(in response: SIPMessage) -> [DigestChallenge] { response.digestChallenges }
}
