import SDP

/// Requests we send inside the dialog and their outcomes: re-INVITE and UPDATE offers (491
/// and the glare back-off), INFO, and the RFC 4028 session timer with its refreshes.
extension InviteSessionMachine {
    // MARK: Outcomes of our client transactions

    mutating func response(_ r: SIPMessage, to request: ClientRequest, now: Double) -> [Action] {
        switch request {
        case .invite: return inviteResponse(r, now: now)
        case .bye: return byeChallenged(r)
        case .offer: return offerResponse(r, now: now)
        case .refresh: return refreshResponse(r, now: now)
        case let .other(method, cseq):
            guard let code = r.statusCode, code >= 200 else { return [] }
            return [.report(.requestCompleted(method: method, cseq: cseq, status: code, response: r))]
        case .prack, .cancel, .forkBye, .info: return []
        }
    }

    /// Timer B/F (`status` 408) or a transport error (503).
    mutating func requestFailed(_ request: ClientRequest, status: Int, now: Double) -> [Action] {
        switch request {
        case .invite:
            return inviteGaveUp(status: status, now: now)
        case .offer:
            // §12.2.1.2 / §14.1: no answer to our re-INVITE or UPDATE ends the dialog.
            guard pendingOffer != nil, !isTerminated else { return [] }
            pendingOffer = nil
            return sendBye(now: now)
        case .refresh:
            return feedTimer(status == 408 ? .refreshTimeout(now: now) : .refreshTransportError(now: now), now: now)
        case let .other(method, cseq):
            return [.report(.requestCompleted(method: method, cseq: cseq, status: status, response: nil))]
        case .prack, .cancel, .bye, .forkBye, .info:
            return []
        }
    }

    /// The request never reached a transaction.
    mutating func notSent(_ request: ClientRequest, now: Double) -> [Action] {
        switch request {
        case .invite: return inviteGaveUp(status: 503, now: now)
        case .offer:
            // As if it had not been asked for: the application may try again.
            pendingOffer = nil
            return []
        case .refresh: return feedTimer(.refreshTransportError(now: now), now: now)
        case let .other(method, cseq):
            return [.report(.requestCompleted(method: method, cseq: cseq, status: 503, response: nil))]
        case .prack, .cancel, .bye, .forkBye, .info: return []
        }
    }

    /// A 2xx no transaction matched (see `claims(strayResponse:)`): the same ACK again for a
    /// retransmission; a 2xx to our INVITE that is new to us goes on as if the transaction
    /// had delivered it (a fork, or a copy whose original was lost).
    mutating func strayResponse(_ r: SIPMessage, now: Double) -> [Action] {
        guard claims(strayResponse: r) else { return [] }
        if let acked = rememberedACK, r.cseq?.sequence == acked, r.to?.tag == dialog?.remoteTag { return [.resendACK] }
        if role == .uac, r.cseq?.sequence == invite.cseq?.sequence { return inviteSucceeded(r, now: now) }
        return []
    }

    // MARK: Offers

    /// Sends our offer in a re-INVITE or UPDATE; the answer is reported with `.answer`, the
    /// outcome with `.offerCompleted`.
    mutating func sendOffer(_ offer: Offer, now: Double) -> [Action] {
        guard canSendOffer, var d = dialog else { return [] }
        // A new offer replaces one waiting out a 491 back-off (which would now be stale).
        var actions: [Action] = []
        if glareRetry != nil {
            glareRetry = nil
            actions += stop(.glareRetry)
        }
        var m = d.makeRequest(offer.method.rawValue)
        m.headers.append(contactHeader(d.localContact))
        m.addHeader(.supported, policy.supportedOptionTags.joined(separator: ", "))
        m.headers.append(contentsOf: offer.headers)
        m.setSDP(offer.sdp, with: offer.parts)
        dialog = d
        localSDP = offer.sdp
        pendingOffer = offer
        return actions + [.send(m, for: .offer, to: .uri(d.nextHop))]
    }

    private mutating func offerResponse(_ r: SIPMessage, now: Double) -> [Action] {
        guard let code = r.statusCode, code >= 200 else { return [] }
        let success = (200...299).contains(code)
        guard let offer = pendingOffer, !isTerminated else {
            // Too late for the session, but a 2xx to a re-INVITE still wants its ACK (§13.2.2.4).
            pendingOffer = nil
            guard success, r.method == "INVITE", let d = dialog else { return [] }
            return [ack(in: d, cseq: r.cseq?.sequence ?? 0, remember: true)]
        }
        pendingOffer = nil
        switch code {
        case 200...299:
            var actions: [Action] = []
            if var d = dialog {
                d.refreshTarget(from: r)
                dialog = d
                if r.method == "INVITE" { actions.append(ack(in: d, cseq: r.cseq?.sequence ?? 0, remember: true)) }
            }
            actions += feedTimer(
                .refreshResponse(
                    now: now, status: code, sessionExpires: r.sessionExpires,
                    requireTimer: r.require.contains("timer")), now: now)
            if let answer = r.sdp {
                remoteSDP = answer
                actions.append(.report(.answer(answer, in: r)))
            }
            return actions + [.report(.offerCompleted(status: code))]
        case 491:
            // §14.1: retry after a random delay that depends on who owns the Call-ID.
            glareRetry = offer
            let delay = GlareRetry.delay(ownsCallID: role == .uac, random: randomness.integer)
            return [start(.glareRetry, at: now + delay)]
        case 408, 481:
            return sendBye(now: now)
        default:
            return [.report(.offerCompleted(status: code))]
        }
    }

    mutating func glareRetryDue(now: Double) -> [Action] {
        guard let offer = glareRetry, !isTerminated else { return [] }
        glareRetry = nil
        return sendOffer(offer, now: now)
    }

    /// An INFO in the dialog (RFC 6086); its outcome is not reported.
    mutating func sendInfo(contentType: String, body: [UInt8], headers: [SIPHeader]) -> [Action] {
        guard canSendInfo, var d = dialog else { return [] }
        var m = d.makeRequest("INFO")
        m.headers.append(contentsOf: headers)
        if !body.isEmpty {
            m.setHeader(.contentType, contentType)
            m.body = body
        }
        dialog = d
        return [.send(m, for: .info, to: .uri(d.nextHop))]
    }

    /// Another request in the dialog (REFER, NOTIFY); its final status is reported.
    mutating func sendRequest(method: String, headers: [SIPHeader], contentType: String?, body: [UInt8]) -> [Action] {
        guard canSendInfo, var d = dialog else { return [] }
        var m = d.makeRequest(method)
        if method == "REFER" || method == "NOTIFY" {
            // Both may change the remote target or start a subscription usage (RFC 6665 §4.1.2).
            m.headers.append(contactHeader(d.localContact))
        }
        m.headers.append(contentsOf: headers)
        if let contentType, !body.isEmpty {
            m.setHeader(.contentType, contentType)
            m.body = body
        }
        dialog = d
        lastRequestSequence = d.localSequence
        return [.send(m, for: .other(method: method, cseq: d.localSequence), to: .uri(d.nextHop))]
    }

    // MARK: Session timer (RFC 4028)

    mutating func startSessionTimer(negotiated: SessionTimer.Negotiated?, now: Double) -> [Action] {
        guard let timerPolicy = policy.sessionTimer, let negotiated else { return [] }
        let peerAllowsUpdate = (role == .uas ? invite : (finalResponse ?? invite)).values(.allow)
            .contains(where: { $0.caseInsensitiveCompare("UPDATE") })
        sessionTimer = SessionTimer(
            policy: timerPolicy, peerAllowsUpdate: peerAllowsUpdate,
            ownsCallID: role == .uac, random: randomness.integer)
        return feedTimer(.start(now: now, negotiated: negotiated), now: now)
    }

    mutating func sessionTimerDue(now: Double) -> [Action] {
        guard !isTerminated else { return [] }
        return feedTimer(.timerFired(now: now), now: now)
    }

    /// Feeds the running `SessionTimer` and turns its actions into ours.
    mutating func feedTimer(_ event: SessionTimer.Event, now: Double) -> [Action] {
        guard var timer = sessionTimer, !isTerminated else { return [] }
        let timerActions = timer.handle(event)
        sessionTimer = timer
        var actions: [Action] = []
        for action in timerActions {
            switch action {
            case .schedule(let at): actions.append(start(.sessionTimer, at: at))
            case .cancelTimer: actions += stop(.sessionTimer)
            case .sendBye: actions += sendBye(reason: .sessionExpired, now: now)
            case .sendRefresh(let refresh): actions += sendRefresh(refresh, now: now)
            }
        }
        return actions
    }

    /// A refresh: a re-INVITE with our SDP (a new version) goes as an offer; an UPDATE
    /// without SDP (or a re-INVITE when we have no SDP) as a plain refresh.
    private mutating func sendRefresh(_ refresh: SessionTimer.Refresh, now: Double) -> [Action] {
        guard state == .confirmed, var d = dialog else { return [] }
        let headers = [
            SIPHeader(.sessionExpires, refresh.sessionExpires.serialize()),
            SIPHeader(.minSE, refresh.minSE.serialize())
        ]
        let sdp =
            refresh.withSDP
            ? localSDP.map { s -> SessionDescription in
                var copy = s
                copy.origin = s.origin.incrementingVersion()
                return copy
            } : nil
        if refresh.method == .reInvite, let sdp {
            return sendOffer(Offer(method: .reInvite, sdp: sdp, headers: headers), now: now)
        }
        var m = d.makeRequest(refresh.method.rawValue)
        m.headers.append(contactHeader(d.localContact))
        m.addHeader(.supported, policy.supportedOptionTags.joined(separator: ", "))
        m.headers.append(contentsOf: headers)
        if let sdp {
            m.setSDP(sdp)
            localSDP = sdp
        }
        dialog = d
        return [.send(m, for: .refresh, to: .uri(d.nextHop))]
    }

    private mutating func refreshResponse(_ r: SIPMessage, now: Double) -> [Action] {
        guard let code = r.statusCode, code >= 200, !isTerminated else { return [] }
        var actions: [Action] = []
        if (200...299).contains(code), var d = dialog {
            d.refreshTarget(from: r)
            dialog = d
            if r.method == "INVITE" { actions.append(ack(in: d, cseq: r.cseq?.sequence ?? 0, remember: true)) }
        }
        return actions
            + feedTimer(
                .refreshResponse(
                    now: now, status: code, sessionExpires: r.sessionExpires,
                    requireTimer: r.require.contains("timer"),
                    minSE: r.minSE?.deltaSeconds), now: now)
    }
}
