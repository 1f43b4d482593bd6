import SDP

/// Requests the peer sends inside the dialog (or early dialog): BYE, re-INVITE, UPDATE,
/// PRACK, INFO; glare (491), overlapping offers (500) and CSeq order (500).
extension InviteSessionMachine {
    mutating func inDialogRequest(_ m: SIPMessage, _ tx: ServerTransaction, now: Double) -> [Action] {
        if m.method == "PRACK" { return prackReceived(m, tx, now: now) }
        guard !isTerminated else { return [.respond(response(to: m, 481), in: tx)] }
        // A request in an early dialog we know only from a provisional response.
        if dialog == nil, role == .uac { return [.respond(response(to: m, 481), in: tx)] }
        ensureDialog()
        guard var d = dialog else { return [] }
        guard d.acceptRemoteSequence(m) else {
            return [.respond(response(to: m, 500, reason: "CSeq Out Of Order"), in: tx)]
        }
        if d.remoteTag == nil { d.remoteTag = m.from?.tag }
        dialog = d
        switch m.method {
        case "BYE":
            return byeReceived(m, tx, now: now)
        case "INVITE", "UPDATE":
            return offerReceived(m, tx, now: now)
        case "REFER", "NOTIFY":
            return [.askForResponse(m, in: tx)]
        default:
            return [.respond(response(to: m, 200), in: tx), .report(.request(m))]
        }
    }

    /// BYE (§15.1.2): 200, and 487 to whatever request of theirs is still unanswered (the
    /// INVITE before our final response, a re-INVITE or UPDATE awaiting the application).
    private mutating func byeReceived(_ m: SIPMessage, _ tx: ServerTransaction, now: Double) -> [Action] {
        var actions: [Action] = [.respond(response(to: m, 200), in: tx)]
        if role == .uas, finalResponse == nil, let itx = serverTransaction {
            actions.append(.respond(response(to: invite, 487, toTag: localTag), in: itx))
        }
        if let pending = awaitingAnswer {
            awaitingAnswer = nil
            actions.append(.respond(response(to: pending.request, 487), in: pending.transaction))
        }
        return actions + end(.remoteHangup, m, now: now)
    }

    /// A re-INVITE or UPDATE: offer/answer (RFC 3264, RFC 3311) and a session refresh.
    private mutating func offerReceived(_ m: SIPMessage, _ tx: ServerTransaction, now: Double) -> [Action] {
        let isInvite = m.method == "INVITE"
        // §14.2 / RFC 3311 §5.2: their offer while ours is pending (or, for a re-INVITE, while
        // our 2xx to an earlier one awaits its ACK) is glare.
        if pendingOffer != nil || (isInvite && retransmitting != nil && state == .confirmed) {
            return [.respond(response(to: m, 491), in: tx)]
        }
        // Their earlier offer still awaits our answer (§14.2, RFC 3311 §5.2).
        if awaitingAnswer != nil {
            let retry = SIPHeader(.retryAfter, String(min(max(randomness.integer(0...10), 0), 10)))
            return [.respond(response(to: m, 500, headers: [retry]), in: tx)]
        }
        // A re-INVITE in an early dialog (or before the ACK to our 200).
        if isInvite && state != .confirmed { return [.respond(response(to: m, 491), in: tx)] }
        dialog?.refreshTarget(from: m)
        let offer = m.sdp
        if m.hasSDP && offer == nil { return [.respond(response(to: m, 400, reason: "Malformed SDP"), in: tx)] }
        guard offer != nil || isInvite else {
            // An UPDATE without SDP: a session refresh only.
            return answerOffer(m, tx, offer: nil, answer: nil, now: now)
        }
        awaitingAnswer = AwaitedAnswer(request: m, transaction: tx, offer: offer)
        return [.askForAnswer(offer: offer, in: m)]
    }

    /// The application's answer to the request in `awaitingAnswer`.
    mutating func offerAnswered(_ sdp: SessionDescription?, now: Double) -> [Action] {
        guard let pending = awaitingAnswer else { return [] }
        awaitingAnswer = nil
        if pending.request.method == "PRACK" { return prackAnswered(pending, sdp, now: now) }
        // No answer from the application: we keep our current SDP; 488 when we have none.
        guard let body = sdp ?? localSDP else {
            return [.respond(response(to: pending.request, 488), in: pending.transaction)]
        }
        return answerOffer(pending.request, pending.transaction, offer: pending.offer, answer: body, now: now)
    }

    private mutating func answerOffer(
        _ m: SIPMessage, _ tx: ServerTransaction, offer: SessionDescription?,
        answer: SessionDescription?, now: Double
    ) -> [Action] {
        if let answer { localSDP = answer }
        if let offer { remoteSDP = offer }
        let (refresh, timerActions) = refreshHeaders(for: m, now: now)
        let r = response(to: m, 200, headers: [contactHeader] + refresh, sdp: answer)
        var actions = timerActions + [.respond(r, in: tx)]
        if m.method == "INVITE" { actions += retransmitUntilACK(r, cseq: m.cseq?.sequence ?? 0, now: now) }
        return actions
    }

    /// Session-Expires for the 2xx to a refresh, and the restart of our timer (RFC 4028 §9).
    private mutating func refreshHeaders(for m: SIPMessage, now: Double) -> ([SIPHeader], [Action]) {
        guard let timerPolicy = policy.sessionTimer,
            case .accept(let se, let requireTimer, let negotiated) = timerPolicy.answer(
                sessionExpires: m.sessionExpires, minSE: m.minSE, supportsTimer: m.supports("timer"))
        else { return ([], []) }
        // We answer as UAS of this transaction: `uas` in the answer means us.
        let actions = feedTimer(.refreshReceived(now: now, negotiated: negotiated), now: now)
        var headers: [SIPHeader] = []
        if let se { headers.append(SIPHeader(.sessionExpires, se.serialize())) }
        if requireTimer { headers.append(SIPHeader(.require, "timer")) }
        return (headers, actions)
    }

    /// PRACK (RFC 3262 §3): 200 for the unacknowledged reliable provisional (or one our final
    /// response overtook), 481 for any other RSeq.
    private mutating func prackReceived(_ m: SIPMessage, _ tx: ServerTransaction, now: Double) -> [Action] {
        let inviteCSeq = invite.cseq?.sequence
        if let rseq = outstandingRSeq, let rack = m.rack, rack.rseq == rseq, rack.cseq == inviteCSeq {
            outstandingRSeq = nil
            return [.respond(response(to: m, 200), in: tx)]
        }
        guard let pending = unackedReliable, let rack = m.rack, rack.rseq == pending.sequence, rack.cseq == inviteCSeq,
            !isTerminated
        else {
            return [.respond(response(to: m, 481), in: tx)]
        }
        unackedReliable = nil
        let actions = stop(.provisionalRetransmit)
        guard let offer = m.sdp else {
            return actions + [.respond(response(to: m, 200), in: tx)] + sendDeferredAnswer(now: now)
        }
        awaitingAnswer = AwaitedAnswer(request: m, transaction: tx, offer: offer)
        return actions + [.askForAnswer(offer: offer, in: m)]
    }

    private mutating func prackAnswered(_ pending: AwaitedAnswer, _ sdp: SessionDescription?, now: Double) -> [Action] {
        var actions: [Action]
        if let sdp {
            remoteSDP = pending.offer
            localSDP = sdp
            actions = [.respond(response(to: pending.request, 200, sdp: sdp), in: pending.transaction)]
        } else {
            actions = [.respond(response(to: pending.request, 488), in: pending.transaction)]
        }
        // The provisional is acknowledged either way, so a held 2xx may go now.
        return actions + sendDeferredAnswer(now: now)
    }

    private mutating func sendDeferredAnswer(now: Double) -> [Action] {
        guard let held = deferredAnswer else { return [] }
        deferredAnswer = nil
        return answer(sdp: held.sdp, headers: held.headers, now: now)
    }
}
