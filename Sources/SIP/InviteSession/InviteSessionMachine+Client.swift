/// The UAC side: our INVITE, its responses (auth and 422 retries, reliable provisionals per
/// fork, forked 2xx), CANCEL and the ACK of the 2xx.
extension InviteSessionMachine {
    mutating func startOutgoing(now: Double) -> [Action] {
        guard role == .uac, invite.cseq != nil, !isTerminated, finalResponse == nil else { return [] }
        var m = invite
        if let timer = policy.sessionTimer {
            let offer = SessionTimerOffer(policy: timer)
            sessionOffer = offer
            m.addHeader(.sessionExpires, offer.sessionExpires.serialize())
            m.addHeader(.minSE, offer.minSE.serialize())
        }
        if let localSDP { m.setSDP(localSDP, with: inviteParts) }
        var actions = transmitInvite(m)
        if let wait = policy.failoverTimeout { actions.append(start(.failover, at: now + wait)) }
        return actions
    }

    private mutating func transmitInvite(_ m: SIPMessage) -> [Action] {
        provisionalSeen = false
        earlyRSeq = [:]
        earlyDialogs = [:]
        invite = m
        return [.send(m, for: .invite, to: .peer)]
    }

    /// The INVITE again (after a challenge or a 422) with the next CSeq; the driver gives it
    /// a new branch.
    private mutating func retryInvite(_ change: (inout SIPMessage) -> Void) -> [Action] {
        var m = invite
        m.removeHeaders(.via)
        let next = (m.cseq?.sequence ?? 1) &+ 1
        m.setHeader(.cseq, CSeq(next, "INVITE").serialize())
        change(&m)
        return transmitInvite(m)
    }

    func uacDialog(for r: SIPMessage) -> Dialog? {
        Dialog.uac(request: invite, response: r, localContact: configuration.contact)
    }

    mutating func inviteResponse(_ r: SIPMessage, now: Double) -> [Action] {
        guard role == .uac, let code = r.statusCode, r.cseq?.sequence == invite.cseq?.sequence else { return [] }
        // Any response shows the target alive: no failover from it any more.
        let alive = stop(.failover)
        switch code {
        case 100...199: return alive + provisional(r, code, now: now)
        case 200...299: return alive + inviteSucceeded(r, now: now)
        default: return alive + inviteFailed(r, code, now: now)
        }
    }

    private mutating func provisional(_ r: SIPMessage, _ code: Int, now: Double) -> [Action] {
        // After the final response a provisional changes nothing (a late or reordered 1xx).
        guard !isTerminated, finalResponse == nil else { return [] }
        provisionalSeen = true
        if cancelRequested { return sendCancel(now: now) }
        if code == 100 { return [.report(.trying(r))] }
        guard let tag = r.to?.tag else { return [] }
        var actions: [Action] = []
        if r.require.contains(where: { $0.caseInsensitiveCompare("100rel") }), let rseq = r.rseq {
            // RFC 3262 §4: PRACK the next RSeq of this fork only; a retransmission (same RSeq)
            // or a gap is not processed at all. Our PRACK's own transaction retransmits it.
            if let last = earlyRSeq[tag], rseq != last &+ 1 { return [] }
            earlyRSeq[tag] = rseq
            actions += sendPRACK(for: r, tag: tag, rseq: rseq)
        }
        if dialog == nil { dialog = earlyDialogs[tag] ?? uacDialog(for: r) }
        if state == .calling { state = .early }
        if let sdp = r.sdp { remoteSDP = sdp }
        actions.append(.report(.provisional(r)))
        return actions
    }

    private mutating func sendPRACK(for r: SIPMessage, tag: String, rseq: UInt32) -> [Action] {
        guard var d = earlyDialogs[tag] ?? (dialog?.remoteTag == tag ? dialog : nil) ?? uacDialog(for: r),
            let cseq = invite.cseq
        else { return [] }
        var prack = d.makeRequest("PRACK")
        prack.addHeader(.rack, RAck(rseq: rseq, cseq: cseq.sequence, method: "INVITE").serialize())
        earlyDialogs[tag] = d
        if dialog == nil || dialog?.remoteTag == tag { dialog = d }
        return [.send(prack, for: .prack, to: .uri(d.nextHop))]
    }

    /// A 2xx to our INVITE, from the transaction or as a stray retransmission.
    mutating func inviteSucceeded(_ r: SIPMessage, now: Double) -> [Action] {
        let tag = r.to?.tag ?? ""
        if ackedTags.contains(tag) {
            // A retransmission: acknowledge it again (§13.2.2.4), with the same ACK if we can.
            if tag == dialog?.remoteTag, rememberedACK == invite.cseq?.sequence { return [.resendACK] }
            return uacDialog(for: r).map { [ack(in: $0, cseq: invite.cseq?.sequence ?? 1, remember: false)] } ?? []
        }
        if isTerminated || finalResponse != nil { return endFork(r, tag: tag) }
        return accepted(r, tag: tag, now: now)
    }

    /// A 2xx from another fork, or after we gave up: acknowledge it, then end that dialog
    /// with BYE (§13.2.2.4). The call itself is untouched.
    private mutating func endFork(_ r: SIPMessage, tag: String) -> [Action] {
        guard var other = uacDialog(for: r) else { return [] }
        if let early = earlyDialogs[tag] { other.localSequence = max(other.localSequence, early.localSequence) }
        ackedTags.insert(tag)
        let bye = other.makeRequest("BYE")
        return [
            ack(in: other, cseq: invite.cseq?.sequence ?? 1, remember: false),
            .send(bye, for: .forkBye, to: .uri(other.nextHop))
        ]
    }

    private mutating func accepted(_ r: SIPMessage, tag: String, now: Double) -> [Action] {
        guard var d = uacDialog(for: r) else {
            return end(.rejected(status: r.statusCode ?? 500), r, now: now)
        }
        // PRACKs on this fork used CSeq numbers: continue after them.
        if let early = earlyDialogs[tag] ?? (dialog?.remoteTag == tag ? dialog : nil) {
            d.localSequence = max(d.localSequence, early.localSequence)
        }
        dialog = d
        finalResponse = r
        ackedTags.insert(tag)
        if let sdp = r.sdp { remoteSDP = sdp }
        var actions = stop(.cancelGuard)
        actions.append(ack(in: d, cseq: invite.cseq?.sequence ?? 1, remember: true))
        state = .confirmed
        if cancelRequested {
            // CANCEL lost the race with the 2xx (§9.1): the call exists, so end it with BYE.
            return actions + sendBye(reason: .canceled, now: now)
        }
        actions += startSessionTimer(
            negotiated: sessionOffer?.resolve(
                sessionExpires: r.sessionExpires,
                requireTimer: r.require.contains("timer")),
            now: now)
        actions.append(.report(.connected(r)))
        return actions
    }

    private mutating func inviteFailed(_ r: SIPMessage, _ code: Int, now: Double) -> [Action] {
        guard !isTerminated, finalResponse == nil else { return [] }
        // After our CANCEL, any final response ends the attempt: no retry with credentials.
        if (code == 401 || code == 407), !authRetried, !cancelRequested, let creds = credentials,
            let uri = invite.requestURI,
            let auth = try? digest.authorization(
                for: r.digestChallenges, method: "INVITE", uri: uri.serialize(),
                body: invite.body, credentials: creds, cnonce: randomness.cnonce())
        {
            authRetried = true
            return retryInvite { $0.addHeader(code == 401 ? .authorization : .proxyAuthorization, auth.serialize()) }
        }
        if code == 422, !cancelRequested, var offer = sessionOffer,
            case .retry(let se, let minSE) = offer.handle422(minSE: r.minSE?.deltaSeconds)
        {
            sessionOffer = offer
            return retryInvite {
                $0.setHeader(.sessionExpires, se.serialize())
                $0.setHeader(.minSE, minSE.serialize())
            }
        }
        finalResponse = r
        return end(cancelRequested ? .canceled : .rejected(status: code), r, now: now)
    }

    /// Timer B, or the transport failed, before a final response.
    mutating func inviteGaveUp(status: Int, now: Double) -> [Action] {
        guard role == .uac, finalResponse == nil else { return [] }
        if status == 408 { return end(cancelRequested ? .canceled : .timeout, nil, now: now) }
        return end(.transportError, nil, now: now)
    }

    /// Cancels our INVITE (§9.1). Before any provisional response the CANCEL waits for one;
    /// if none comes, Timer B (or the failover time, when the policy has one) ends the INVITE
    /// (reported `.canceled`).
    mutating func cancel(now: Double) -> [Action] {
        guard role == .uac, finalResponse == nil, !cancelRequested, !isTerminated else { return [] }
        cancelRequested = true
        return provisionalSeen ? sendCancel(now: now) : []
    }

    private mutating func sendCancel(now: Double) -> [Action] {
        guard !cancelSent, let c = invite.cancelRequest else { return [] }
        cancelSent = true
        // No final response 64*T1 after the CANCEL: consider the INVITE cancelled (§9.1).
        return [.send(c, for: .cancel, to: .peer), start(.cancelGuard, at: now + 64 * t1)]
    }

    /// The failover time passed with no response at all: the INVITE is abandoned. No CANCEL:
    /// one may not be sent before a provisional response (§9.1), and a target that sent
    /// nothing has nothing to cancel. A 2xx that still comes gets ACK and BYE (`endFork`).
    mutating func failoverDue(now: Double) -> [Action] {
        guard role == .uac, !provisionalSeen, finalResponse == nil, !isTerminated else { return [] }
        return [.terminateInviteTransaction] + end(cancelRequested ? .canceled : .noProvisional, nil, now: now)
    }

    mutating func cancelGuardDue(now: Double) -> [Action] {
        guard !isTerminated else { return [] }
        return [.terminateInviteTransaction] + end(.canceled, nil, now: now)
    }
}
