/// Requests inside an established (or early) dialog, both directions: BYE, re-INVITE,
/// UPDATE, PRACK, INFO; glare (491) and session-timer refreshes.
extension SIPCall {
    func handleInDialogRequest(_ m: SIPMessage, _ tx: ServerTransaction) {
        if m.method == "PRACK" {
            handlePRACK(m, tx)
            return
        }
        guard !isTerminated else {
            ua.respond(m, tx, 481)
            return
        }
        if dialog == nil, !isIncoming {
            // A request in an early dialog we know only from a provisional response.
            ua.respond(m, tx, 481)
            return
        }
        ensureDialog()
        guard var d = dialog else { return }
        guard d.acceptRemoteSequence(m) else {
            ua.respond(m, tx, 500, reason: "CSeq Out Of Order")
            return
        }
        if d.remoteTag == nil { d.remoteTag = m.from?.tag }
        dialog = d
        switch m.method {
        case "BYE":
            ua.respond(m, tx, 200)
            if isIncoming && finalResponse == nil {
                // A BYE before our final response (§15.1.2): the INVITE gets 487.
                if let itx = serverTransaction { ua.respond(invite, itx, 487, toTag: localTag) }
            }
            end(.remoteHangup, m)
        case "INVITE", "UPDATE":
            handleOffer(m, tx)
        default:
            ua.respond(m, tx, 200)
            delegate?.call(self, didReceiveRequest: m)
        }
    }

    /// A re-INVITE or UPDATE: offer/answer (RFC 3264, RFC 3311) and a session refresh.
    private func handleOffer(_ m: SIPMessage, _ tx: ServerTransaction) {
        let isInvite = m.method == "INVITE"
        // §14.2: an offer while ours is pending is glare.
        if pendingOffer != nil || (isInvite && retransmitting != nil && state == .confirmed) {
            ua.respond(m, tx, 491)
            return
        }
        if isInvite && state != .confirmed {
            ua.respond(m, tx, 491)
            return
        }
        dialog?.refreshTarget(from: m)
        let offer = m.sdp
        if m.hasSDP && offer == nil {
            ua.respond(m, tx, 400, reason: "Malformed SDP")
            return
        }
        var body: SessionDescription? = nil
        if offer != nil || isInvite {
            guard let answer = delegate?.call(self, answerFor: offer, in: m) ?? localSDP else {
                ua.respond(m, tx, 488)
                return
            }
            body = answer
            localSDP = answer
            if let offer { remoteSDP = offer }
        }
        var headers = [SIPHeader(.contact, NameAddress(uri: ua.contactURI(for: peer.transport)).serialize())]
        headers.append(contentsOf: refreshHeaders(for: m))
        var r = SIPMessage.response(to: m, status: 200)
        r.headers.append(contentsOf: headers)
        r.addHeader(.server, ua.configuration.userAgent)
        if let body { r.setSDP(body) }
        ua.transactions.respond(r, in: tx)
        if isInvite {
            awaitingAnswerInACK = offer == nil
            retransmitUntilACK(r, cseq: m.cseq?.sequence ?? 0)
        }
    }

    /// Session-Expires for the 2xx to a refresh, and restart of our timer (RFC 4028 §9).
    private func refreshHeaders(for m: SIPMessage) -> [SIPHeader] {
        guard let policy = policy.sessionTimer,
              case .accept(let se, let requireTimer, let negotiated) = policy.answer(
                  sessionExpires: m.sessionExpires,
                  minSE: m.minSE, supportsTimer: m.supports("timer")) else { return [] }
        // We answer as UAS of this transaction: `uas` in the answer means us.
        applyTimerActions(sessionTimer?.handle(.refreshReceived(now: SIPEventLoop.now(), negotiated: negotiated)) ?? [])
        var headers: [SIPHeader] = []
        if let se { headers.append(SIPHeader(.sessionExpires, se.serialize())) }
        if requireTimer { headers.append(SIPHeader(.require, "timer")) }
        return headers
    }

    private func handlePRACK(_ m: SIPMessage, _ tx: ServerTransaction) {
        // The PRACK of a provisional our final response overtook (RFC 3262 §3).
        if let rseq = outstandingRSeq, let rack = m.rack, rack.rseq == rseq, rack.cseq == invite.cseq?.sequence {
            outstandingRSeq = nil
            ua.respond(m, tx, 200)
            return
        }
        guard let pending = unackedReliable, let rack = m.rack, rack.rseq == pending.rseq,
              rack.cseq == invite.cseq?.sequence else {
            ua.respond(m, tx, 481)
            return
        }
        unackedReliable = nil
        ua.loop.cancel(reliableTimer)
        if let offer = m.sdp {
            guard let answer = delegate?.call(self, answerFor: offer, in: m) else {
                ua.respond(m, tx, 488)
                return
            }
            remoteSDP = offer
            localSDP = answer
            ua.respond(m, tx, 200, sdp: answer)
        } else {
            ua.respond(m, tx, 200)
        }
        if let held = deferredAnswer {
            deferredAnswer = nil
            answer(sdp: held.sdp, headers: held.headers)
        }
    }

    // MARK: Offers we send

    /// Sends a re-INVITE with `sdp` (hold: `a=sendonly`; unhold: `a=sendrecv`). The answer
    /// arrives through `didReceiveAnswer`, the outcome through `didCompleteOffer`. Returns
    /// false when an offer is already pending or the call is not confirmed.
    @discardableResult
    public func reinvite(sdp: SessionDescription, headers: [SIPHeader] = []) -> Bool {
        guard state == .confirmed, pendingOffer == nil else { return false }
        pendingOffer = sendInDialog("INVITE", sdp: sdp, headers: headers) { [weak self] event in
            self?.reinviteEvent(event, sdp: sdp, headers: headers)
        }
        return pendingOffer != nil
    }

    private func reinviteEvent(_ event: ClientTransactionEvent, sdp: SessionDescription, headers: [SIPHeader]) {
        guard !isTerminated else { return }
        switch event {
        case .timeout, .transportError:
            pendingOffer = nil
            sendBye()
        case .response(let r):
            guard let code = r.statusCode, code >= 200 else { return }
            pendingOffer = nil
            if (200...299).contains(code) {
                if var d = dialog {
                    d.refreshTarget(from: r)
                    sendACK(in: &d, cseq: r.cseq?.sequence ?? 0, remember: true)
                    dialog = d
                }
                if let answer = r.sdp {
                    remoteSDP = answer
                    delegate?.call(self, didReceiveAnswer: answer, in: r)
                }
                applyTimerActions(sessionTimer?.handle(.refreshResponse(
                    now: SIPEventLoop.now(), status: code,
                    sessionExpires: r.sessionExpires,
                    requireTimer: r.require.contains("timer"))) ?? [])
            } else if code == 491 {
                // §14.1: retry after a random delay that depends on who owns the Call-ID.
                glareTimer = ua.loop.schedule(after: GlareRetry.delay(ownsCallID: !isIncoming)) { [weak self] in
                    self?.reinvite(sdp: sdp, headers: headers)
                }
                return
            } else if code == 408 || code == 481 {
                sendBye()
                return
            }
            delegate?.call(self, didCompleteOffer: code)
        }
    }

    // MARK: Session timer (RFC 4028)

    func startSessionTimer(negotiated: SessionTimer.Negotiated?) {
        guard let policy = policy.sessionTimer, let negotiated else { return }
        let peerAllowsUpdate = (isIncoming ? invite : (finalResponse ?? invite)).values(.allow)
            .contains(where: { $0.caseInsensitiveCompare("UPDATE") })
        var timer = SessionTimer(policy: policy, peerAllowsUpdate: peerAllowsUpdate, ownsCallID: !isIncoming)
        let actions = timer.handle(.start(now: SIPEventLoop.now(), negotiated: negotiated))
        sessionTimer = timer
        applyTimerActions(actions)
    }

    func applyTimerActions(_ actions: [SessionTimer.Action]) {
        for action in actions {
            switch action {
            case .schedule(let at):
                ua.loop.cancel(sessionTimerHandle)
                sessionTimerHandle = ua.loop.schedule(after: at - SIPEventLoop.now()) { [weak self] in
                    guard let self, !self.isTerminated, var t = self.sessionTimer else { return }
                    let next = t.handle(.timerFired(now: SIPEventLoop.now()))
                    self.sessionTimer = t
                    self.applyTimerActions(next)
                }
            case .cancelTimer:
                ua.loop.cancel(sessionTimerHandle)
            case .sendBye:
                sendBye(reason: .sessionExpired)
            case .sendRefresh(let refresh):
                sendRefresh(refresh)
            }
        }
    }

    private func sendRefresh(_ refresh: SessionTimer.Refresh) {
        guard state == .confirmed else { return }
        let headers = [SIPHeader(.sessionExpires, refresh.sessionExpires.serialize()), SIPHeader(.minSE, refresh.minSE.serialize())]
        let sdp = refresh.withSDP ? (localSDP.map { s -> SessionDescription in
            var copy = s
            copy.origin = s.origin.incrementingVersion()
            return copy
        }) : nil
        if refresh.method == .reInvite, let sdp {
            if !reinvite(sdp: sdp, headers: headers) { return }
            return
        }
        _ = sendInDialog(refresh.method.rawValue, sdp: sdp, headers: headers) { [weak self] event in
            guard let self, !self.isTerminated, var t = self.sessionTimer else { return }
            let now = SIPEventLoop.now()
            let next: [SessionTimer.Action]
            switch event {
            case .response(let r):
                guard let code = r.statusCode, code >= 200 else { return }
                if (200...299).contains(code), let d = self.dialog {
                    var copy = d
                    copy.refreshTarget(from: r)
                    self.dialog = copy
                }
                next = t.handle(.refreshResponse(now: now, status: code,
                                                 sessionExpires: r.sessionExpires,
                                                 requireTimer: r.require.contains("timer"),
                                                 minSE: r.minSE?.deltaSeconds))
            case .timeout:
                next = t.handle(.refreshTimeout(now: now))
            case .transportError:
                next = t.handle(.refreshTransportError(now: now))
            }
            self.sessionTimer = t
            self.applyTimerActions(next)
        }
    }
}
