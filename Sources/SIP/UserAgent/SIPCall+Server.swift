/// The UAS side of an INVITE session: 100 Trying, provisional responses (reliable ones per
/// RFC 3262), the final response and its retransmission until the ACK.
extension SIPCall {
    func start() {
        guard let tx = serverTransaction else { return }
        if let policy = ua.configuration.sessionTimer,
           case .reject(let minSE) = policy.answer(sessionExpires: invite.sessionExpires,
                                                    minSE: invite.minSE,
                                                    supportsTimer: invite.supports("timer")) {
            reject(status: 422, headers: [SIPHeader(.minSE, minSE.serialize())])
            return
        }
        ua.respond(invite, tx, 100)
        if let delegate = ua.delegate {
            delegate.userAgent(ua, didReceiveCall: self)
        } else {
            reject(status: 480)
        }
    }

    /// True when the peer must get reliable provisionals (it requires 100rel, or we require it
    /// and it supports it).
    var provisionalsAreReliable: Bool {
        guard ua.configuration.prack != .disabled else { return false }
        return invite.require.contains("100rel") || (ua.configuration.prack == .required && peerSupports100rel)
    }

    /// Sends 180 Ringing, or 183 Session Progress when `sdp` is given (early media). Returns
    /// false when it cannot be sent now (a reliable provisional is still unacknowledged).
    /// `reliable: true` asks for RFC 3262 reliability whatever the agent's policy, when the
    /// peer supports 100rel (a test carrier that always PRACKs); nil follows the policy.
    @discardableResult
    public func ring(sdp: SessionDescription? = nil, status: Int? = nil, reliable: Bool? = nil) -> Bool {
        guard isIncoming, finalResponse == nil, !isTerminated, let tx = serverTransaction else { return false }
        let reliable = reliable.map { $0 && ua.configuration.prack != .disabled && peerSupports100rel } ?? provisionalsAreReliable
        if reliable && unackedReliable != nil { return false }
        ensureDialog()
        var headers = [SIPHeader(.contact, NameAddress(uri: ua.contactURI(for: peer.transport)).serialize())]
        var rseq: UInt32 = 0
        if reliable {
            rseq = nextRSeq
            nextRSeq &+= 1
            headers.append(SIPHeader(.require, "100rel"))
            headers.append(SIPHeader(.rseq, String(rseq)))
        }
        var r = SIPMessage.response(to: invite, status: status ?? (sdp == nil ? 180 : 183), toTag: localTag)
        r.headers.append(contentsOf: headers)
        r.addHeader(.server, ua.configuration.userAgent)
        if let sdp {
            r.setSDP(sdp)
            localSDP = sdp
        }
        ua.transactions.respond(r, in: tx)
        state = .early
        if reliable {
            // RFC 3262 §3: retransmit at T1, doubling, until the PRACK; give up at 64*T1.
            unackedReliable = (r, rseq, ua.configuration.t1, SIPEventLoop.now() + 64 * ua.configuration.t1)
            scheduleReliableRetransmit()
        }
        return true
    }

    private func scheduleReliableRetransmit() {
        guard let pending = unackedReliable else { return }
        reliableTimer = ua.loop.schedule(after: pending.interval) { [weak self] in
            guard let self, var p = self.unackedReliable, !self.isTerminated else { return }
            if SIPEventLoop.now() >= p.deadline {
                self.unackedReliable = nil
                self.reject(status: 504, reason: "No PRACK")
                return
            }
            self.ua.transports.send(p.response.serialize(), to: self.peer)
            p.interval *= 2
            self.unackedReliable = p
            self.scheduleReliableRetransmit()
        }
    }

    func ensureDialog() {
        if dialog == nil {
            dialog = Dialog.uas(request: invite, localTag: localTag, localContact: ua.contactURI(for: peer.transport))
        }
    }

    /// Answers the call with 200 OK and `sdp` (an answer, or our offer when the INVITE had
    /// none); the 200 is retransmitted until the ACK (§13.3.1.4). While a reliable
    /// provisional with SDP awaits its PRACK, the 200 waits for it (RFC 3262 §3).
    public func answer(sdp: SessionDescription?, headers: [SIPHeader] = []) {
        guard isIncoming, finalResponse == nil, !isTerminated else { return }
        if let pending = unackedReliable, !pending.response.body.isEmpty {
            deferredAnswer = (sdp, headers)
            return
        }
        ensureDialog()
        ua.loop.cancel(reliableTimer)
        outstandingRSeq = unackedReliable?.rseq
        unackedReliable = nil
        var extra = [SIPHeader(.contact, NameAddress(uri: ua.contactURI(for: peer.transport)).serialize())]
        extra.append(contentsOf: ua.capabilityHeaders.filter { $0.name != .accept })
        if let policy = ua.configuration.sessionTimer,
           case .accept(let se, let requireTimer, let negotiated) = policy.answer(
               sessionExpires: invite.sessionExpires,
               minSE: invite.minSE, supportsTimer: invite.supports("timer")) {
            if let se { extra.append(SIPHeader(.sessionExpires, se.serialize())) }
            if requireTimer { extra.append(SIPHeader(.require, "timer")) }
            pendingNegotiated = negotiated
        }
        extra.append(contentsOf: headers)
        var r = SIPMessage.response(to: invite, status: 200, toTag: localTag)
        r.headers.append(contentsOf: extra)
        r.addHeader(.server, ua.configuration.userAgent)
        if let sdp {
            r.setSDP(sdp)
            localSDP = sdp
        }
        finalResponse = r
        if let tx = serverTransaction { ua.transactions.respond(r, in: tx) }
        retransmitUntilACK(r, cseq: invite.cseq?.sequence ?? 0)
    }

    /// Rejects the call with a final response (486, 603, 480 ...).
    public func reject(status: Int, reason: String? = nil, headers: [SIPHeader] = []) {
        finish(status: status, reason: reason, headers: headers, end: .rejected(status: status))
    }

    private func finish(status: Int, reason: String?, headers: [SIPHeader], end outcome: SIPCallEnd) {
        guard isIncoming, finalResponse == nil, !isTerminated, let tx = serverTransaction else { return }
        ua.loop.cancel(reliableTimer)
        outstandingRSeq = unackedReliable?.rseq
        unackedReliable = nil
        deferredAnswer = nil
        var r = SIPMessage.response(to: invite, status: status, reason: reason, toTag: localTag)
        r.headers.append(contentsOf: headers)
        r.addHeader(.server, ua.configuration.userAgent)
        finalResponse = r
        ua.transactions.respond(r, in: tx)
        end(outcome, r)
    }

    /// Retransmits a 2xx at T1, doubling to T2 (4 s), until the ACK; after 64*T1 the call
    /// is ended with BYE (§13.3.1.4).
    func retransmitUntilACK(_ r: SIPMessage, cseq: UInt32) {
        let t1 = ua.configuration.t1
        retransmitting = (r, cseq, t1, SIPEventLoop.now() + 64 * t1)
        scheduleRetransmit()
    }

    private func scheduleRetransmit() {
        guard let pending = retransmitting else { return }
        retransmitTimer = ua.loop.schedule(after: pending.interval) { [weak self] in
            guard let self, var p = self.retransmitting, !self.isTerminated else { return }
            if SIPEventLoop.now() >= p.deadline {
                self.retransmitting = nil
                if let d = self.dialog, d.remoteTag != nil {
                    self.state = .confirmed
                    self.sendBye(reason: .ackTimeout)
                } else {
                    self.end(.ackTimeout, nil)
                }
                return
            }
            self.ua.transports.send(p.response.serialize(), to: self.peer)
            p.interval = min(p.interval * 2, 4)
            self.retransmitting = p
            self.scheduleRetransmit()
        }
    }

    /// The INVITE was cancelled before a final response: 487 to it (§9.2).
    func handleCancel() {
        finish(status: 487, reason: nil, headers: [], end: .canceled)
    }

    /// An ACK outside any transaction: for our 2xx to the INVITE or to a re-INVITE.
    func handleACK(_ ack: SIPMessage) -> Bool {
        guard dialogMatches(ack) else { return false }
        guard let pending = retransmitting, ack.cseq?.sequence == pending.cseq else { return true }
        retransmitting = nil
        ua.loop.cancel(retransmitTimer)
        if let sdp = ack.sdp {
            remoteSDP = sdp
            delegate?.call(self, didReceiveAnswer: sdp, in: ack)
        }
        awaitingAnswerInACK = false
        if state != .confirmed, !isTerminated {
            state = .confirmed
            startSessionTimer(negotiated: pendingNegotiated)
            delegate?.call(self, didConnect: ack)
        }
        return true
    }

    func isRetransmission(of m: SIPMessage) -> Bool {
        isIncoming && m.topVia?.branch == inviteBranch && m.cseq == invite.cseq && m.from?.tag == invite.from?.tag
    }

    func retransmitFinalResponse() {
        if let r = finalResponse { ua.transports.send(r.serialize(), to: peer) }
    }
}
