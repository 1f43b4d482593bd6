/// The UAC side of an INVITE session: our INVITE, its responses, PRACK, CANCEL, ACK.
extension SIPUserAgent {
    /// Places a call: sends an INVITE for `requestURI` to `peer` and returns the call, whose
    /// delegate hears the responses. `credentials` answer one 401/407 challenge (and one on BYE).
    /// `policy` overrides the agent's PRACK and session-timer policy for this call.
    public func invite(requestURI: SIPURI, from: NameAddress, to: NameAddress, peer: SIPPeer,
                       sdp: SessionDescription?, headers: [SIPHeader] = [], credentials: DigestCredentials? = nil,
                       policy: SIPCallPolicy? = nil, delegate: SIPCallDelegate?) -> SIPCall {
        let policy = policy ?? configuration.callPolicy
        let localTag = SIPIdentifiers.tag()
        var m = SIPMessage.request("INVITE", requestURI)
        var f = from
        f.tag = localTag
        var t = to
        t.tag = nil
        m.addHeader(.from, f.serialize())
        m.addHeader(.to, t.serialize())
        m.addHeader(.callID, SIPIdentifiers.callID(host: localAddress(for: peer.transport).host))
        m.addHeader(.cseq, CSeq(1, "INVITE").serialize())
        m.addHeader(.contact, NameAddress(uri: contactURI(for: peer.transport)).serialize())
        m.addHeader(.allow, SIPUserAgentConfiguration.allowedMethods.joined(separator: ", "))
        m.addHeader(.supported, policy.supportedOptionTags.joined(separator: ", "))
        m.headers.append(contentsOf: headers)
        let call = SIPCall(outgoing: m, peer: peer, ua: self, localTag: localTag)
        call.policy = policy
        call.delegate = delegate
        call.credentials = credentials
        call.localSDP = sdp
        if let timer = policy.sessionTimer {
            let offer = SessionTimerOffer(policy: timer)
            call.sessionOffer = offer
            m.addHeader(.sessionExpires, offer.sessionExpires.serialize())
            m.addHeader(.minSE, offer.minSE.serialize())
        }
        if let sdp { m.setSDP(sdp) }
        calls[call.callID, default: []].append(call)
        call.transmitInvite(m)
        return call
    }
}

extension SIPCall {
    func transmitInvite(_ m: SIPMessage) {
        provisionalSeen = false
        earlyRSeq = [:]
        let (tx, sent) = ua.send(m, to: peer) { [self] event in inviteEvent(event) }
        invite = sent
        inviteBranch = sent.topVia?.branch
        inviteTransaction = tx
        if tx == nil { end(.transportError, nil) }
    }

    /// Re-sends the INVITE (after a challenge or a 422) with the next CSeq and a new branch.
    private func retryInvite(_ change: (inout SIPMessage) -> Void) {
        var m = invite
        m.removeHeaders(.via)
        let next = (m.cseq?.sequence ?? 1) &+ 1
        m.setHeader(.cseq, CSeq(next, "INVITE").serialize())
        change(&m)
        transmitInvite(m)
    }

    private func inviteEvent(_ event: ClientTransactionEvent) {
        guard !isTerminated else { return }
        switch event {
        case .timeout:
            end(cancelRequested ? .canceled : .timeout, nil)
        case .transportError:
            end(.transportError, nil)
        case .response(let r):
            guard let code = r.statusCode else { return }
            switch code {
            case 100...199: provisional(r, code)
            case 200...299: accepted(r)
            default: failed(r, code)
            }
        }
    }

    private func provisional(_ r: SIPMessage, _ code: Int) {
        provisionalSeen = true
        if cancelRequested {
            sendCancel()
            return
        }
        guard code > 100, let tag = r.to?.tag else { return }
        if r.require.contains(where: { $0.caseInsensitiveCompare("100rel") }), let rseq = r.rseq {
            // RFC 3262 §4: PRACK the next RSeq in order; duplicates and gaps are not processed.
            if let last = earlyRSeq[tag], rseq != last &+ 1 { return }
            earlyRSeq[tag] = rseq
            sendPRACK(for: r, rseq: rseq)
        }
        if dialog == nil { dialog = Dialog.uac(request: invite, response: r, localContact: ua.contactURI(for: peer.transport)) }
        if state == .calling { state = .early }
        if let sdp = r.sdp { remoteSDP = sdp }
        delegate?.call(self, didReceiveProvisional: r)
    }

    private func sendPRACK(for r: SIPMessage, rseq: UInt32) {
        guard var d = Dialog.uac(request: invite, response: r, localContact: ua.contactURI(for: peer.transport)),
              let cseq = invite.cseq else { return }
        if let current = dialog, current.remoteTag == d.remoteTag { d = current }
        var prack = d.makeRequest("PRACK")
        prack.addHeader(.rack, RAck(rseq: rseq, cseq: cseq.sequence, method: "INVITE").serialize())
        if dialog?.remoteTag == d.remoteTag || dialog == nil { dialog = d }
        let target = SIPUserAgent.resolve(d.nextHop, defaultTransport: peer.transport) ?? peer
        ua.send(prack, to: target) { _ in }
    }

    private func accepted(_ r: SIPMessage) {
        let tag = r.to?.tag
        if state == .confirmed {
            // A 2xx from another fork: acknowledge it, then end that dialog (§13.2.2.4).
            if tag != dialog?.remoteTag, var other = Dialog.uac(request: invite, response: r, localContact: ua.contactURI(for: peer.transport)) {
                sendACK(in: &other, cseq: invite.cseq?.sequence ?? 1, remember: false)
                let bye = other.makeRequest("BYE")
                ua.send(bye, to: SIPUserAgent.resolve(other.nextHop, defaultTransport: peer.transport) ?? peer) { _ in }
            }
            return
        }
        guard var d = Dialog.uac(request: invite, response: r, localContact: ua.contactURI(for: peer.transport)) else {
            end(.rejected(status: r.statusCode ?? 500), r)
            return
        }
        if let early = dialog, early.remoteTag == d.remoteTag { d.localSequence = max(d.localSequence, early.localSequence) }
        dialog = d
        finalResponse = r
        ua.loop.cancel(cancelTimer)
        if let sdp = r.sdp { remoteSDP = sdp }
        sendACK(in: &d, cseq: invite.cseq?.sequence ?? 1, remember: true)
        dialog = d
        if cancelRequested {
            // CANCEL lost the race with the 2xx (§9.1): the call exists, so end it with BYE.
            state = .confirmed
            sendBye(reason: .canceled)
            return
        }
        state = .confirmed
        startSessionTimer(negotiated: sessionOffer?.resolve(sessionExpires: r.sessionExpires,
                                                            requireTimer: r.require.contains("timer")))
        delegate?.call(self, didConnect: r)
    }

    private func failed(_ r: SIPMessage, _ code: Int) {
        if (code == 401 || code == 407), !authRetried, let creds = credentials {
            let found = challenges(in: r)
            if let uri = invite.requestURI,
               let auth = try? digest.authorization(for: found, method: "INVITE", uri: uri.serialize(), body: invite.body, credentials: creds) {
                authRetried = true
                retryInvite { $0.addHeader(code == 401 ? .authorization : .proxyAuthorization, auth.serialize()) }
                return
            }
        }
        if code == 422, var offer = sessionOffer {
            if case .retry(let se, let minSE) = offer.handle422(minSE: r.minSE?.deltaSeconds) {
                sessionOffer = offer
                retryInvite {
                    $0.setHeader(.sessionExpires, se.serialize())
                    $0.setHeader(.minSE, minSE.serialize())
                }
                return
            }
        }
        finalResponse = r
        end(code == 487 && cancelRequested ? .canceled : .rejected(status: code), r)
    }

    /// Cancels our INVITE (§9.1). Before any provisional response the CANCEL waits for one.
    public func cancel() {
        guard !isIncoming, finalResponse == nil, !cancelRequested, !isTerminated else { return }
        cancelRequested = true
        if provisionalSeen { sendCancel() }
    }

    private func sendCancel() {
        guard cancelTimer == nil, let uri = invite.requestURI, let cseq = invite.cseq else { return }
        var c = SIPMessage.request("CANCEL", uri)
        if let via = invite.values(.via).first { c.addHeader(.via, via) }
        for name: SIPHeaderName in [.from, .to, .callID] { if let v = invite[name] { c.addHeader(name, v) } }
        c.addHeader(.cseq, CSeq(cseq.sequence, "CANCEL").serialize())
        for route in invite.values(.route) { c.addHeader(.route, route) }
        ua.send(c, to: peer) { _ in }
        // No final response 64*T1 after the CANCEL: consider the INVITE cancelled (§9.1).
        cancelTimer = ua.loop.schedule(after: 64 * ua.configuration.t1) { [weak self] in
            guard let self, !self.isTerminated else { return }
            if let tx = self.inviteTransaction { self.ua.transactions.terminate(tx) }
            self.end(.canceled, nil)
        }
    }

    /// ACK for a 2xx: no transaction, built in the dialog with the INVITE's CSeq (§13.2.2.4).
    func sendACK(in d: inout Dialog, cseq: UInt32, remember: Bool) {
        var ack = d.makeRequest("ACK", cseq: cseq)
        for name: SIPHeaderName in [.authorization, .proxyAuthorization] {
            for h in invite.headers where h.name == name { ack.addHeader(name, h.value) }
        }
        let target = SIPUserAgent.resolve(d.nextHop, defaultTransport: peer.transport) ?? peer
        var p = target
        if p.address == peer.address { p.connection = peer.connection }
        ack.prependHeader(.via, ua.makeVia(toward: p).serialize())
        ack.addHeader(.userAgent, ua.configuration.userAgent)
        let bytes = ack.serialize()
        ua.transports.send(bytes, to: p)
        if remember { sentACK = (bytes, p, cseq) }
    }

    /// A response no transaction matched: a retransmitted 2xx gets the same ACK again.
    func handleStrayResponse(_ r: SIPMessage) -> Bool {
        guard !isIncoming, let code = r.statusCode, (200...299).contains(code), r.method == "INVITE",
              r.from?.tag == localTag else { return false }
        if let ack = sentACK, r.cseq?.sequence == ack.cseq, r.to?.tag == dialog?.remoteTag {
            ua.transports.send(ack.bytes, to: ack.peer)
        } else if !isTerminated, r.cseq?.sequence == invite.cseq?.sequence {
            // A first 2xx that reached us here, not through the transaction (osip's parser
            // refused it): end the transaction as osip would have.
            if let tx = inviteTransaction { ua.transactions.terminate(tx) }
            accepted(r)
        }
        return true
    }
}
