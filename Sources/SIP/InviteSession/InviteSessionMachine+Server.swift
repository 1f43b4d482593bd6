import SDP

/// The UAS side: 100 Trying, provisional responses (reliable ones per RFC 3262), the final
/// response, its retransmission until the ACK (RFC 6026 §8.1), CANCEL.
extension InviteSessionMachine {
    mutating func startIncoming(now: Double) -> [Action] {
        guard role == .uas, let tx = serverTransaction, finalResponse == nil, !isTerminated else { return [] }
        if let timer = policy.sessionTimer,
            case .reject(let minSE) = timer.answer(
                sessionExpires: invite.sessionExpires, minSE: invite.minSE,
                supportsTimer: invite.supports("timer"))
        {
            return finish(
                status: 422, reason: nil, headers: [SIPHeader(.minSE, minSE.serialize())],
                end: .rejected(status: 422), now: now)
        }
        return [.respond(response(to: invite, 100), in: tx), .report(.incomingCall)]
    }

    /// True when the provisional goes reliably: `requested` when given (and the peer supports
    /// 100rel and we allow it), else the policy (the peer requires it, or we do and it
    /// supports it).
    func ringsReliably(_ requested: Bool?) -> Bool {
        guard policy.prack != .disabled else { return false }
        if let requested { return requested && peerSupports100rel }
        return invite.require.contains("100rel") || (policy.prack == .required && peerSupports100rel)
    }

    mutating func ensureDialog() {
        if dialog == nil {
            dialog = Dialog.uas(
                request: invite, localTag: localTag, localContact: configuration.contact,
                localSequence: firstLocalSequence)
        }
    }

    mutating func ring(sdp: SessionDescription?, status: Int?, reliable requested: Bool?, now: Double) -> [Action] {
        guard canRing(reliable: requested), let tx = serverTransaction else { return [] }
        // A 100 Trying on command (a driver that held back the first): no tag, no dialog, the
        // state stays.
        if status == 100 { return [.respond(response(to: invite, 100), in: tx)] }
        let reliable = ringsReliably(requested)
        ensureDialog()
        var headers = [contactHeader]
        var rseq: UInt32 = 0
        if reliable {
            rseq = nextRSeq
            nextRSeq &+= 1
            headers.append(SIPHeader(.require, "100rel"))
            headers.append(SIPHeader(.rseq, String(rseq)))
        }
        let r = response(to: invite, status ?? (sdp == nil ? 180 : 183), toTag: localTag, headers: headers, sdp: sdp)
        if let sdp { localSDP = sdp }
        state = .early
        guard reliable else { return [.respond(r, in: tx)] }
        // RFC 3262 §3: retransmit at T1, doubling, until the PRACK; give up at 64*T1.
        unackedReliable = Retransmission(response: r, sequence: rseq, interval: t1, deadline: now + 64 * t1)
        return [.respond(r, in: tx), start(.provisionalRetransmit, at: now + t1)]
    }

    mutating func provisionalRetransmitDue(now: Double) -> [Action] {
        guard var pending = unackedReliable, !isTerminated else { return [] }
        if now >= pending.deadline {
            unackedReliable = nil
            return finish(status: 504, reason: "No PRACK", headers: [], end: .rejected(status: 504), now: now)
        }
        pending.interval *= 2
        unackedReliable = pending
        return [
            .retransmit(pending.response),
            start(.provisionalRetransmit, at: min(now + pending.interval, pending.deadline))
        ]
    }

    /// 200 with `sdp` (an answer, or our offer when the INVITE had none), retransmitted until
    /// the ACK. While a reliable provisional with SDP awaits its PRACK, the 200 waits for it
    /// (RFC 3262 §3).
    mutating func answer(sdp: SessionDescription?, headers: [SIPHeader], now: Double) -> [Action] {
        guard role == .uas, finalResponse == nil, !isTerminated, let tx = serverTransaction else { return [] }
        if let pending = unackedReliable, !pending.response.body.isEmpty {
            deferredAnswer = (sdp, headers)
            return []
        }
        ensureDialog()
        var actions = stop(.provisionalRetransmit)
        outstandingRSeq = unackedReliable?.sequence
        unackedReliable = nil
        var extra = [contactHeader]
        extra.append(contentsOf: capabilityHeaders.filter { $0.name != .accept })
        if let timer = policy.sessionTimer,
            case .accept(let se, let requireTimer, let negotiated) = timer.answer(
                sessionExpires: invite.sessionExpires, minSE: invite.minSE, supportsTimer: invite.supports("timer"))
        {
            if let se { extra.append(SIPHeader(.sessionExpires, se.serialize())) }
            if requireTimer { extra.append(SIPHeader(.require, "timer")) }
            pendingNegotiated = negotiated
        }
        extra.append(contentsOf: headers)
        let r = response(to: invite, 200, toTag: localTag, headers: extra, sdp: sdp)
        if let sdp { localSDP = sdp }
        finalResponse = r
        actions.append(.respond(r, in: tx))
        actions += retransmitUntilACK(r, cseq: invite.cseq?.sequence ?? 0, now: now)
        return actions
    }

    /// Allow, Accept and Supported, as our OPTIONS and INVITE answers advertise them.
    var capabilityHeaders: [SIPHeader] {
        [
            SIPHeader(.allow, SIPUserAgentConfiguration.allowedMethods.joined(separator: ", ")),
            SIPHeader(.accept, "application/sdp"),
            SIPHeader(.supported, policy.supportedOptionTags.joined(separator: ", "))
        ]
    }

    /// A final non-2xx response to the INVITE (486, 603, 487 to a CANCEL ...), and the end.
    mutating func finish(
        status: Int, reason: String?, headers: [SIPHeader], end outcome: SIPCallEnd,
        now: Double
    ) -> [Action] {
        guard role == .uas, finalResponse == nil, !isTerminated, let tx = serverTransaction else { return [] }
        var actions = stop(.provisionalRetransmit)
        outstandingRSeq = unackedReliable?.sequence
        unackedReliable = nil
        deferredAnswer = nil
        let r = response(to: invite, status, reason: reason, toTag: localTag, headers: headers)
        finalResponse = r
        actions.append(.respond(r, in: tx))
        return actions + end(outcome, r, now: now)
    }

    /// Retransmits a 2xx at T1, doubling to T2, until the ACK; at 64*T1 the session ends
    /// with BYE (§13.3.1.4).
    mutating func retransmitUntilACK(_ r: SIPMessage, cseq: UInt32, now: Double) -> [Action] {
        retransmitting = Retransmission(response: r, sequence: cseq, interval: t1, deadline: now + 64 * t1)
        return [start(.responseRetransmit, at: now + t1)]
    }

    mutating func responseRetransmitDue(now: Double) -> [Action] {
        guard var pending = retransmitting, !isTerminated else { return [] }
        if now >= pending.deadline {
            retransmitting = nil
            guard dialog?.remoteTag != nil else { return end(.ackTimeout, nil, now: now) }
            state = .confirmed
            return sendBye(reason: .ackTimeout, now: now)
        }
        pending.interval = min(pending.interval * 2, configuration.t2)
        retransmitting = pending
        return [
            .retransmit(pending.response), start(.responseRetransmit, at: min(now + pending.interval, pending.deadline))
        ]
    }

    /// A CANCEL for our INVITE (§9.2): 200 to it; 487 to the INVITE unless a final response
    /// already went (then the call goes on).
    mutating func cancelReceived(_ m: SIPMessage, _ tx: ServerTransaction, now: Double) -> [Action] {
        [.respond(response(to: m, 200, toTag: localTag), in: tx)]
            + finish(status: 487, reason: nil, headers: [], end: .canceled, now: now)
    }

    /// An ACK outside any transaction: for our 2xx to the INVITE or to a re-INVITE. Any other
    /// (a late copy, one after BYE) is absorbed.
    mutating func ackReceived(_ ack: SIPMessage, now: Double) -> [Action] {
        guard let pending = retransmitting, ack.cseq?.sequence == pending.sequence, !isTerminated else { return [] }
        retransmitting = nil
        var actions = stop(.responseRetransmit)
        var reports: [Action] = []
        if let sdp = ack.sdp {
            remoteSDP = sdp
            reports.append(.report(.answer(sdp, in: ack)))
        }
        if state != .confirmed {
            state = .confirmed
            actions += startSessionTimer(negotiated: pendingNegotiated, now: now)
            reports.append(.report(.connected(ack)))
        }
        return actions + reports
    }
}
