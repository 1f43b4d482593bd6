import IrisAPI
import Media
import SDP
import SIP

/// SIP events of the session's call, turned into machine inputs (docs/events.md, SIP-to-event tables).
extension GatewaySession: SIPCallDelegate {
    /// Code, reason phrase and the Q.850 cause of a response's `Reason` header.
    static func details(of message: SIPMessage?) -> SIPDetails? {
        guard let message, let code = message.statusCode else { return nil }
        return SIPDetails(code: code, reason: message.reasonPhrase ?? "", cause: q850Cause(of: message))
    }

    static func q850Cause(of message: SIPMessage?) -> Int? {
        message?.reasons.first { $0.protocolName.uppercased() == "Q.850" }?.cause
    }

    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {
        guard call === self.call, let details = Self.details(of: response) else { return }
        var early = false
        if let sdp = response.sdp, applyTrunkSDP(sdp) { early = true }
        if !sawRinging {
            sawRinging = true
            gateway.records.update(roomId: roomId) { [now] r in r.ringingAt = now }
        }
        gateway.clusterRinging(self, call)
        if bridgeHost != nil { bridgeLegProgress(.ringing) }
        handle(.provisional(details, hasSDP: early))
        handle(.targetResponding)
    }

    /// The target has the INVITE: its ring time starts now, not at the INVITE, so time spent
    /// on silent targets before it is not taken from it.
    func call(_ call: SIPCall, didReceiveTrying response: SIPMessage) {
        guard call === self.call else { return }
        handle(.targetResponding)
    }

    func call(_ call: SIPCall, didConnect message: SIPMessage) {
        guard call === self.call else { return }
        if !call.isIncoming, let sdp = call.remoteSDP { applyTrunkSDP(sdp) }
        if lateOffer && trunkLeg?.remote == nil {
            // Our 200 offered; an ACK without an answer (or with nothing we take) leaves no media.
            handle(.sipFailure(SIPDetails(code: 488, reason: "No SDP answer in the ACK")))
            call.hangup()
            return
        }
        let details = Self.details(of: message) ?? SIPDetails(code: 200, reason: "OK")
        if !call.isIncoming { gateway.metrics.inviteResponse(details.code) }
        let codec = trunkLeg?.codec.description ?? "unknown"
        let at = now
        gateway.records.update(roomId: roomId) { r in
            r.answeredAt = at
            r.codec = codec
        }
        if replacedCall != nil {
            // The ACK of an INVITE with Replaces: the new leg is confirmed (GatewaySession+Replaces).
            return replacementConfirmed(call)
        }
        // Written after the answer, so a crash from now on leaves what the next process
        // needs to send the BYE.
        if let snapshot = call.dialogSnapshot { gateway.keepDialog(self, snapshot) }
        if profile.media.rtpTimeoutSec > 0 { media?.armRTPTimeout(Double(profile.media.rtpTimeoutSec)) }
        handle(.answered(details, codec: codec, hd: trunkLeg?.isWideband ?? false, at: at))
        if bridgeHost != nil { bridgeLegProgress(.answered) }
    }

    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {
        guard call === self.call else { return }
        applyTrunkSDP(answer)
    }

    /// The carrier's re-INVITE or UPDATE: hold (sendonly/inactive) or resume, perhaps a new
    /// address or codec. Answered recvonly/inactive/sendrecv as RFC 3264 §8.4 says.
    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        guard call === self.call, let media else { return nil }
        guard let offer else {
            // No SDP: the carrier wants our offer (RFC 3261 §14.2).
            _ = sdes.offer()
            return trunkLeg.map {
                MediaNegotiation.answer(
                    for: $0, address: trunkSDPAddress(media), session: trunkSession.next(), direction: .sendrecv)
            }
        }
        guard let index = offer.media.firstIndex(where: { $0.media == "audio" && !$0.isRejected }),
            applyTrunkSDP(offer, isOffer: true), let leg = trunkLeg
        else { return nil }
        let hold = offer.isHold(ofMedia: index)
        let answer = MediaNegotiation.answer(
            for: leg, address: trunkSDPAddress(media), session: trunkSession.next(),
            direction: offer.direction(ofMedia: index).answer)
        if machine.isConnected {
            let codec = leg.codec.description
            handle(.codecChanged(codec, hd: leg.isWideband))
            handle(.remoteHold(hold))
        }
        return answer
    }

    func call(_ call: SIPCall, didReceiveRequest request: SIPMessage) {
        guard call === self.call, request.method == "INFO" else { return }
        // SIP INFO DTMF (application/dtmf-relay or application/dtmf) from carriers without RFC 4733.
        if let info = try? SIPInfoDTMF.parse(contentType: request.contentType ?? "", body: request.body) {
            guard infoDTMFLimit.allow(now: now) else { return gateway.metrics.refused("dtmf_rate_limited") }
            handle(
                .dtmf(digit: String(info.digit.character), durationMs: info.durationMs ?? SIPInfoDTMF.defaultDurationMs)
            )
        }
    }

    /// A REFER (a carrier's transfer) or a NOTIFY (the progress of ours) in the dialog.
    func call(_ call: SIPCall, responseTo request: SIPMessage) -> SIPRequestResponse {
        guard call === self.call else { return .refusal(for: request) }
        return request.method == "REFER" ? referReceived(request) : notifyReceived(request)
    }

    func call(_ call: SIPCall, didCompleteRequest method: String, cseq: UInt32, status: Int, response: SIPMessage?) {
        switch method {
        case "REFER" where call === self.call: referCompleted(cseq: cseq, status: status, response: response)
        case "NOTIFY": referrerNotified(call)
        default: break
        }
    }

    func call(_ call: SIPCall, didCompleteOffer status: Int) {
        guard call === self.call, let pending = machine.pendingHold else { return }
        let ok = (200...299).contains(status)
        if ok {
            handle(.localHoldConfirmed(pending))
        } else {
            // The carrier refused: the call stays as it was, audio too.
            heldLocally = !pending
            applySilence()
            handle(.localHoldFailed(status: status))
        }
        if !pending { mergeUnholdFinished(ok: ok) }
    }

    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        guard call === self.call else { return }
        switch end {
        case .rejected(let status):
            guard !call.isIncoming else { return }  // our own reject: the machine has ended already
            let details = Self.details(of: message) ?? SIPDetails(code: status, reason: "")
            gateway.metrics.inviteResponse(details.code)
            handle(.finalResponse(details, proxiesLeft: proxiesLeft))
        case .canceled:
            if call.isIncoming {
                handle(.remoteCancel)
            } else {
                let details = Self.details(of: message) ?? SIPDetails(code: 487, reason: "Request Terminated")
                gateway.metrics.inviteResponse(details.code)
                handle(.finalResponse(details, proxiesLeft: false))
            }
        case .remoteHangup:
            if transferOutlives(call) { return }
            handle(.remoteHangup(cause: Self.q850Cause(of: message)))
        case .localHangup:
            // The machine asked for it (and has ended), or the SIP layer gave up on a re-INVITE.
            handle(.sipFailure(nil))
        case .timeout, .noProvisional, .transportError:
            if machine.isConnected {
                handle(.sipFailure(SIPDetails(code: 408, reason: "Request Timeout")))
            } else if end == .transportError, let failure = gateway.ua.connectionFailure(toward: call.peer) {
                // A locally made 503 (RFC 3261 §8.1.3.1) whose reason says what failed:
                // "TLS: carrier.example: certificate expired".
                handle(.transportFailed(SIPDetails(code: 503, reason: failure.reason), proxiesLeft: proxiesLeft))
            } else {
                handle(.noResponse(proxiesLeft: proxiesLeft))
            }
        case .ackTimeout:
            handle(.sipFailure(SIPDetails(code: 408, reason: "ACK Timeout")))
        case .sessionExpired:
            handle(.sessionExpired)
        }
    }

    /// Media events, already on the SIP loop.
    func mediaEvent(_ event: MediaEvent) {
        switch event {
        case .firstPacket:
            break
        case .dtmf(let leg, let digit, let ms):
            if leg == .trunk {
                forwardDTMF(String(digit))
                handle(.dtmf(digit: String(digit), durationMs: ms))
            }
        case .timeout(let leg):
            if leg == .trunk { handle(.mediaTimeout) }
        case .webrtcConnected:
            break
        case .webrtcFailed(let leg, let why):
            if leg == .platform { handle(.platformMediaFailed(why)) }
        }
    }
}

extension GatewaySession {
    /// The carrier's BYE during a transfer: true when the session goes on without this call
    /// (a REFER's target is being dialled, or our transfer was done and ends the session as such).
    fileprivate func transferOutlives(_ call: SIPCall) -> Bool {
        if let r = referred, r.machine.phase == .dialing || r.machine.phase == .askingApp {
            runReferred(.callEnded)
            if referred?.machine.referrerGone == true { return true }
        }
        if let t = outgoingTransfer, !t.machine.isOver { runTransfer(.callEnded) }
        if let t = outgoingTransfer, t.machine.phase == .succeeded, t.machine.method == "refer", !machine.isEnded {
            handle(.transferred(t.lastDetails))
            return true
        }
        // The other call of an attended transfer the carrier accepted: its party took the
        // transferee's INVITE with Replaces and left us, which is the transfer working.
        if let host = attendedTransferHost, host.outgoingTransfer?.other === self,
            host.outgoingTransfer?.machine.phase == .accepted
        {
            reportTransfer(
                .succeeded, nil, message: "the other party left for the transferee", method: "refer", of: host)
            handle(.transferred(nil))
            return true
        }
        return false
    }

    /// The session is ending: transfers still under way fail and say so (a final NOTIFY to
    /// a referrer goes before our BYE), their events ahead of the ending's in `actions`.
    func endingTransfers(before actions: [SessionMachine.Action]) -> [SessionMachine.Action] {
        let referring = referred.map { !$0.machine.isOver } ?? false
        let transferring = outgoingTransfer.map { !$0.machine.isOver } ?? false
        guard referring || transferring else { return actions }
        transferEventsHeld = []
        if referring { runReferred(.sessionEnding) }
        if transferring { runTransfer(.sessionEnding) }
        let events = transferEventsHeld ?? []
        transferEventsHeld = nil
        var all = actions
        let first = all.firstIndex { if case .emit = $0 { true } else { false } } ?? all.count
        all.insert(contentsOf: events.map { .emit($0) }, at: first)
        return all
    }

    /// A transfer event, through the machine so it takes the session's order (or held for the
    /// ending's actions, see above).
    func publishTransferEvent(_ e: SessionEvent) {
        if transferEventsHeld != nil {
            transferEventsHeld?.append(e)
        } else {
            handle(.forward(e))
        }
    }

    /// The session ended: what its transfers still had open goes with it.
    func endTransfers() {
        if let t = outgoingTransfer {
            loop.cancel(t.timer)
            if let leg = t.bridgeLeg, !leg.machine.isEnded, leg.bridgedWith == nil { leg.handle(.close) }
        }
        if let r = referred {
            loop.cancel(r.timer)
            if r.referrer !== call, !r.referrer.isTerminated { r.referrer.hangup() }
            if let dial = r.dial, dial !== call, !dial.isTerminated { dial.hangup() }
            if r.admitted { gateway.admissions[profile.name]?.release() }
            referred?.admitted = false
        }
        if let old = replacedCall, !old.isTerminated { old.hangup() }
        replacedCall = nil
        if bridgeHost != nil { bridgeLegProgress(.ended(machine.sip)) }
        if let peer = bridgedWith, !peer.machine.isEnded { peer.handle(.close) }
    }
}
