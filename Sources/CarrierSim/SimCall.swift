import IOCore
import Media
import SDP
import SIP

/// One incoming call's script: the responses, timers and media its number's `Behaviour`
/// calls for. Confined to the SIP loop, like the `SIPCall` it drives; every step is a loop
/// timer, so a thousand ringing calls cost no thread. Not Sendable: the simulator's call
/// table (a `LoopBoundBox`) holds it.
final class SimCall: SIPCallDelegate {
    let sip: SIPCall
    let number: String
    let behaviour: Behaviour
    /// replaces-call's second call: the dialog this call (placed by us) takes the place of.
    /// nil for a call the gateway placed.
    let replacing: Replaces?
    unowned let simulator: CarrierSimulator
    var leg: SimMediaLeg?
    private var choice: CodecChoice?
    /// Our SDP for the INVITE: an answer, or an offer when the INVITE had none.
    private var localSDP: SessionDescription?
    private var offeredFirst = false
    private var timers: [EventLoop.Timer] = []
    /// Where a transfer this call takes part in stands (`SimCall+Transfer.swift`).
    var transfer = SimTransferState()
    private var connectedAt: Double?
    private var answeredAt: Double?
    private var challenged = false
    let sessionID = String(UInt32.random(in: 1...UInt32.max))

    var config: CarrierSimulator.Configuration { simulator.configuration }
    private var loop: EventLoop { simulator.ua.loop }

    init(
        sip: SIPCall, number: String, behaviour: Behaviour, simulator: CarrierSimulator, replacing: Replaces? = nil
    ) {
        self.sip = sip
        self.number = number
        self.behaviour = behaviour
        self.simulator = simulator
        self.replacing = replacing
    }

    /// A call we place with our offer (`SimSDP.offer`) on `leg`: the answer in the 200
    /// picks the codec, as for a delayed-offer INVITE.
    func offered(_ sdp: SessionDescription, on leg: SimMediaLeg, choice: CodecChoice) {
        self.leg = leg
        self.choice = choice
        localSDP = sdp
        offeredFirst = true
    }

    /// A `Reason` header with a Q.850 cause (RFC 3326), as carriers send on failures and BYE.
    static func reasonHeader(cause: Int, text: String?) -> SIPHeader {
        SIPHeader(.reason, "Q.850;cause=\(cause)" + (text.map { ";text=\"\($0)\"" } ?? ""))
    }

    func start() {
        sip.delegate = self
        switch behaviour {
        case .reject(let status, let reason, let cause, let text):
            sip.reject(
                status: status, reason: reason, headers: cause.map { [Self.reasonHeader(cause: $0, text: text)] } ?? [])
            return
        case .wrongCause:
            // Busy, with the cause of an unallocated number: contradicts the SIP code.
            sip.reject(
                status: 486, reason: "Busy Here", headers: [Self.reasonHeader(cause: 1, text: "Unallocated number")])
            return
        case .challenge:
            if let stale = authenticationFailure() {
                challenged = true
                let headers = simulator.digest.challenges(now: EventLoop.now(), stale: stale)
                    .map { SIPHeader(.proxyAuthenticate, $0.serialize()) }
                sip.reject(status: 407, reason: "Proxy Authentication Required", headers: headers)
                return
            }
        case .transferOddNotify:
            sip.notifyBeforeAnsweringNextRefer(SIPFrag(status: 100, reason: "Trying"))
            transfer.earlyNotifyArmed = true
        default:
            break
        }
        do {
            guard try prepareMedia() else {
                sip.reject(
                    status: 488, reason: "Not Acceptable Here",
                    headers: [Self.reasonHeader(cause: 65, text: "No common codec")])
                return
            }
        } catch {
            sip.reject(status: 500, reason: "Media Unavailable")
            return
        }
        switch behaviour {
        case .ringForever:
            sip.ring()
        case .earlyMediaThenAnswer:
            sip.ring(sdp: localSDP)
            leg?.play(SineTone(hz: config.announcementHz))
            after(config.earlyMediaDuration) { $0.answer() }
        case .progressThenAnswer:
            sip.ring(status: 183)
            after(config.answerDelay) { $0.answer() }
        case .reliableRinging:
            sip.ring(reliable: true)
            after(config.answerDelay) { $0.answer() }
        case .endlessEarlyMedia:
            sip.ring(sdp: localSDP)
            leg?.play(SineTone(hz: config.announcementHz))
        case .slowTrying:
            // Nothing at all until now (the agent withheld the 100 Trying).
            after(config.tryingDelay) { call in
                call.sip.ring(status: 100)
                call.sip.ring()
                call.after(call.config.answerDelay) { $0.answer() }
            }
        default:
            sip.ring()
            after(config.answerDelay) { $0.answer() }
        }
    }

    /// nil when the INVITE carries valid credentials for our user; else whether the only
    /// fault is a stale nonce (answered `stale=true`, RFC 7616 §3.3).
    private func authenticationFailure() -> Bool? {
        var stale = false
        for auth in sip.invite.digestAuthorizations where auth.username == config.authUser {
            switch simulator.digest.verify(
                auth, method: "INVITE", password: config.authPassword, now: EventLoop.now(), body: sip.invite.body)
            {
            case .valid: return nil
            case .stale: stale = true
            case .invalid: break
            }
        }
        return stale
    }

    /// Opens the media leg and builds our SDP; false when the offer has no codec we take.
    private func prepareMedia() throws -> Bool {
        let preferring = preferredCodecs
        let host = config.mediaHost
        if let offer = sip.remoteSDP {
            guard let chosen = CodecChoice.choose(from: offer, preferring: preferring),
                let index = offer.media.firstIndex(where: { $0.media == "audio" && !$0.isRejected })
            else { return false }
            let leg = try SimMediaLeg(
                host: host, choice: chosen, remote: SimSDP.remoteAddress(offer), threads: simulator.media)
            self.leg = leg
            choice = chosen
            localSDP = SimSDP.answer(
                chosen, host: host, port: leg.localPort, direction: offer.direction(ofMedia: index).answer,
                sessionID: sessionID)
        } else {
            // Delayed offer (RFC 3261 §13.2.1): we offer in the 200 and the ACK answers.
            let (leg, choice, sdp) = try Self.offeringLeg(simulator, sessionID: sessionID)
            offered(sdp, on: leg, choice: choice)
        }
        return true
    }

    /// A new media leg (PCMU until the answer says otherwise) and our offer for it.
    static func offeringLeg(
        _ simulator: CarrierSimulator, sessionID: String
    ) throws -> (SimMediaLeg, CodecChoice, SessionDescription) {
        let host = simulator.configuration.mediaHost
        let pcmu = CodecChoice(rtpMap: .pcmu, codec: .pcmu, telephoneEvent: .telephoneEvent())
        let leg = try SimMediaLeg(host: host, choice: pcmu, remote: nil, threads: simulator.media)
        return (leg, pcmu, SimSDP.offer(host: host, port: leg.localPort, sessionID: sessionID))
    }

    /// 014 prefers G.722; 019 answers PCMU (to send PCMA under it).
    private var preferredCodecs: [String] {
        switch behaviour {
        case .preferG722: ["G722"]
        case .codecMismatch: ["PCMU"]
        default: []
        }
    }

    /// The -15 dBFS 400 Hz + 1020 Hz signal of the one-way number.
    static let oneWaySignal = [SineTone(hz: 400, dBFS: -15), SineTone(hz: 1020, dBFS: -15)]

    private func answer() {
        if let clip = answeringMachineClip() {
            guard let clip else { return }
            leg?.setEcho(.off)
            leg?.play(clip: clip)
        }
        answeredAt = EventLoop.now()
        leg?.play(nil)
        switch behaviour {
        case .answersAsPerson, .answersAsVoicemail, .answersAsFax:
            break
        case .silentAnswer:
            // Answers but sends nothing back (one-way audio).
            leg?.setEcho(.off)
        case .oneWay:
            // Its own signal, never what it hears.
            leg?.setEcho(.off)
            leg?.play(tones: Self.oneWaySignal)
        case .lateMedia:
            leg?.setEcho(.off)
            after(config.lateMediaDelay) { $0.leg?.setEcho(.packets) }
        case .codecMismatch:
            leg?.setMisencodedEcho(true)
            leg?.setEcho(.packets)
        case .lossy:
            leg?.setImpairment(Impairment(loss: config.lossPercent / 100, jitter: config.jitterMs / 1000))
            leg?.setEcho(.packets)
        case .ignoresACK:
            // RFC 3261's timer, scaled: T1 doubling to T2, give up at 64*T1 capped.
            let t1 = config.t1
            sip.ignoreACK(
                .init(
                    t1: config.scaled(t1), t2: config.scaled(4),
                    giveUpAfter: config.scaled(min(64 * t1, config.ignoredACKGiveUp)),
                    byeHeaders: [Self.reasonHeader(cause: 16, text: "Normal call clearing")]))
            leg?.setEcho(.packets)
        default:
            leg?.setEcho(.packets)
        }
        sip.answer(sdp: localSDP)
    }

    /// For the answering-machine numbers: `.some(clip)` to play, or `.some(nil)` when the
    /// answer must wait (the clips are still being made: retried in 50 ms) or cannot be given
    /// (no espeak-ng: rejected 500 with a `Warning` naming it). nil for the other numbers.
    private func answeringMachineClip() -> SimClip?? {
        switch behaviour {
        case .answersAsFax:
            return SimAMDClips.fax
        case .answersAsPerson, .answersAsVoicemail:
            switch simulator.amdClips {
            case .ready(let clips):
                return clips.clip(for: behaviour)
            case .preparing:
                timers.append(
                    loop.schedule(after: 0.05) { [weak self] in
                        guard let self, !self.sip.isTerminated else { return }
                        self.answer()
                    })
                return .some(nil)
            case .failed(let error):
                sip.reject(
                    status: 500, reason: "Server Internal Error",
                    headers: [SIPHeader(SIPHeaderName("Warning"), "399 carrier-sim \"\(error)\"")])
                return .some(nil)
            }
        default:
            return nil
        }
    }

    /// Runs `step` after `seconds` (scaled) on the SIP loop, unless the call ended.
    func after(_ seconds: Double, _ step: @escaping (SimCall) -> Void) {
        timers.append(
            loop.schedule(after: config.scaled(seconds)) { [weak self] in
                guard let self, !self.sip.isTerminated else { return }
                step(self)
            })
    }

    // MARK: SIPCallDelegate

    func call(_ call: SIPCall, didConnect message: SIPMessage) {
        connectedAt = EventLoop.now()
        switch behaviour {
        case .holdAndResume:
            after(config.holdAfter) { $0.offer(direction: .sendonly) }
            after(config.resumeAfter) { $0.offer(direction: .sendrecv) }
        case .dtmf(let digits):
            leg?.setDigitEcho(true)
            after(config.dtmfAfter) { $0.leg?.send(digits: digits) }
        case .remoteHangup:
            after(config.hangupAfter) {
                $0.sip.hangup(headers: [Self.reasonHeader(cause: 16, text: "Normal call clearing")])
            }
        case .refersCaller:
            after(config.referAfter) { $0.sendRefer() }
        case .replacesCall where replacing == nil:
            after(config.referAfter) { $0.sendReplacingInvite() }
        case .replacesCall:
            replacingCallConnected()
        default:
            break
        }
    }

    /// A re-INVITE with our SDP in `direction` (hold: sendonly; resume: sendrecv). Retried
    /// shortly when an offer is already in flight (the gateway's own re-INVITE, say).
    private func offer(direction: MediaDirection, attempt: Int = 0) {
        guard let current = sip.localSDP else { return }
        if !sip.reinvite(sdp: current.redirected(direction)), attempt < 10 {
            timers.append(
                loop.schedule(after: 0.2) { [weak self] in self?.offer(direction: direction, attempt: attempt + 1) })
        }
    }

    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        guard let offer else { return call.localSDP }
        let preferring = preferredCodecs
        guard let chosen = CodecChoice.choose(from: offer, preferring: preferring),
            let index = offer.media.firstIndex(where: { $0.media == "audio" && !$0.isRejected }),
            let leg
        else { return nil }
        if chosen != choice { leg.reconfigure(chosen) }
        choice = chosen
        leg.setRemote(SimSDP.remoteAddress(offer))
        let version = (call.localSDP?.origin.sessionVersion ?? 1) &+ 1
        return SimSDP.answer(
            chosen, host: config.mediaHost, port: leg.localPort, direction: offer.direction(ofMedia: index).answer,
            version: version, sessionID: sessionID)
    }

    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {
        // The answer to our delayed-offer 200 (in the ACK) picks the codec.
        guard offeredFirst, let leg, let chosen = CodecChoice.choose(from: answer) else { return }
        offeredFirst = false
        if chosen != choice { leg.reconfigure(chosen) }
        choice = chosen
        leg.setRemote(SimSDP.remoteAddress(answer))
    }

    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        for t in timers { loop.cancel(t) }
        timers.removeAll()
        leg?.close()
        if replacing != nil, case .rejected(let status) = end { replacingCallRefused(status) }
        simulator.finished(
            self, outcome: (replacing.map { "replacing \($0.callID): " } ?? "") + outcome(end) + transferSummary)
    }

    private func outcome(_ end: SIPCallEnd) -> String {
        let connected = connectedAt.map { String(format: " after %.1f s", EventLoop.now() - $0) } ?? ""
        let media =
            leg.map { l -> String in
                let echoed = l.counters.echoed.load(ordering: .relaxed)
                let digits = l.counters.receivedDigits
                let dropped = l.counters.dropped.load(ordering: .relaxed)
                return ", echoed \(echoed) packets" + (dropped > 0 ? ", dropped \(dropped)" : "")
                    + (digits.isEmpty ? "" : ", digits \(digits)")
            } ?? ""
        switch end {
        case .rejected(let status) where status == 407 && challenged: return "challenged 407"
        case .rejected(let status): return "rejected \(status)"
        case .canceled: return "canceled 487"
        case .remoteHangup:
            return (connectedAt == nil ? "caller hung up before answer" : "completed, caller hung up\(connected)")
                + media
        case .localHangup where behaviour == .ignoresACK:
            // The 2xx never counted as acknowledged: the time is from the 200 (`TestPeerMisbehaviour`).
            let up = answeredAt.map { String(format: " after %.1f s", EventLoop.now() - $0) } ?? ""
            return "completed, we hung up\(up) ignoring the ACK" + media
        case .localHangup: return "completed, we hung up\(connected)" + media
        case .timeout: return "failed: timeout"
        case .noProvisional: return "failed: no response"
        case .transportError: return "failed: transport error"
        case .ackTimeout: return "failed: no ACK"
        case .sessionExpired: return "failed: session expired"
        }
    }
}
