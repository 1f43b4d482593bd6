import Foundation
import IOCore
import IrisAPI
import Media
import SDP
import SIP

/// One session: the machine, its SIP call, its media, its record. Confined to the SIP
/// loop: the gateway hops there for every API verb, media events hop there too. Not
/// Sendable: what crosses to another thread carries it in a `LoopBound`.
final class GatewaySession {
    let roomId: String
    let traceId: String
    let routingId: String?
    let profile: TrunkProfile
    let sourceTN: String
    let targetTN: String
    let notificationData: String?
    unowned let gateway: Gateway
    var machine: SessionMachine
    /// The trunk leg's SIP trace, and its RTP when a capture was asked for.
    let capture: SessionCapture

    var call: SIPCall?
    var media: MediaCall?
    var platformLeg: NegotiatedLeg?
    var trunkLeg: NegotiatedLeg?
    /// SDES keys on the trunk leg (`media.encryption`): set per INVITE sent or received.
    var sdes = SDESExchange(policy: .init(encryption: .none, suites: [], keysAllowed: false))
    /// Our SDP identities toward each side (o= versions go up per new description).
    var trunkSession = SDPSessionIdentity()
    var platformSession = SDPSessionIdentity()
    var muted = false
    /// The app put the call on hold (asked, not yet refused): no audio either way, as Iris
    /// says of hold ("neither of the users will be able to send or receive audio").
    var heldLocally = false
    var ringTimer: SIPEventLoop.Timer?
    var startedAt: Double
    // Outbound
    var proxyIndex = 0
    /// The current proxy's targets (RFC 3263), nil until located (GatewaySession+Targets).
    var targets: [SIPPeer]?
    var targetIndex = 0
    /// True while the current proxy's name is being looked up (no INVITE out).
    var locating = false
    var requestURI: SIPURI?
    var credentials: DigestCredentials?
    /// The app's caller name, privacy and headers for the INVITE.
    var callerRequest = OutboundCallerRequest()
    var sawRinging = false
    /// Inbound: the room token the notification carried and its expiry.
    var roomToken: String?
    /// Inbound: the INVITE had no SDP, so our 200 offers and the ACK answers.
    var lateOffer = false
    /// Inbound: what the carrier's INVITE said beyond the numbers (for the snapshot).
    var carrier: CarrierCallInfo?
    /// How fast SIP INFO digits may be reported (the media legs hold their own for RFC 4733).
    var infoDTMFLimit = DTMFRateLimit()
    /// Sessions merged into this one (it hosts the three-way call).
    var merged: [GatewaySession] = []
    /// The session this one was merged into.
    weak var mergedInto: GatewaySession?
    /// Held: the session waiting for our unhold before it merges us.
    weak var mergePending: GatewaySession?
    /// The app's transfer of this call, under way or just over (GatewaySession+Transfer.swift).
    var outgoingTransfer: OutgoingTransfer?
    /// A carrier's REFER being carried out (GatewaySession+Referred.swift).
    var referred: ReferredTransfer?
    /// The gateway's own call to a transfer target (a bridge fallback): the session it serves.
    weak var bridgeHost: GatewaySession?
    /// The session transferring its call to this one's party (attended: its REFER's Replaces
    /// names this dialog), so this call's BYE needs no search through every session.
    weak var attendedTransferHost: GatewaySession?
    /// The trunk leg an INVITE with Replaces is taking over, until the new leg's ACK.
    var replacedCall: SIPCall?
    /// While the session's ending is being put together: transfer events wait here to go
    /// before it (`endingTransfers(before:)`), since the machine takes no events once ended.
    var transferEventsHeld: [SessionEvent]?
    /// The session whose trunk leg this one's is bridged to (both ends point at each other);
    /// the two end together.
    weak var bridgedWith: GatewaySession?
    /// Recording, media streams and answering-machine detection (MediaServices/).
    var services = SessionServices()
    /// The log has the call's start line (GatewaySession+Log.swift), so its end comes after it.
    var loggedStart = false

    init(
        direction: SessionMachine.Direction, roomId: String, traceId: String, routingId: String?, profile: TrunkProfile,
        sourceTN: String, targetTN: String, notificationData: String?, capture: SessionCapture, gateway: Gateway
    ) {
        self.roomId = roomId
        self.traceId = traceId
        self.routingId = routingId
        self.profile = profile
        self.sourceTN = sourceTN
        self.targetTN = targetTN
        self.notificationData = notificationData
        self.capture = capture
        self.gateway = gateway
        machine = SessionMachine(direction: direction, roomId: roomId, traceId: traceId)
        startedAt = Date().timeIntervalSince1970
    }

    var loop: SIPEventLoop { gateway.ua.loop }
    var now: Double { Date().timeIntervalSince1970 }

    /// Feeds the machine and carries out what it says. An ending with media open waits for
    /// the media thread to close the call and hand back its final statistics (the SIP loop
    /// never waits on a media thread): the SIP actions go out now, the events and the record
    /// follow with the statistics, in the order the machine gave them, so whoever sees
    /// `onSessionEnded` finds the session ended and its record written with its statistics.
    func handle(_ input: SessionMachine.Input) {
        loop.assertInLoop()
        var actions = machine.handle(input, now: now)
        let finishes = actions.contains { if case .finish = $0 { true } else { false } }
        if finishes { actions = endingTransfers(before: actions) }
        guard let media, finishes else {
            for action in actions { perform(action) }
            return
        }
        func waitsForMedia(_ action: SessionMachine.Action) -> Bool {
            switch action {
            case .emit, .finish: true
            default: false
            }
        }
        for action in actions where !waitsForMedia(action) { perform(action) }
        let later = actions.filter(waitsForMedia)
        loop.cancel(ringTimer)
        ringTimer = nil
        let me = LoopBound(self, loop: loop)
        media.close { [loop = self.loop] stats in
            loop.execute {
                me.value.finalStatistics = stats
                for action in later { me.value.perform(action) }
            }
        }
    }

    private func perform(_ action: SessionMachine.Action) {
        switch action {
        case .emit(let event):
            gateway.events.publish(event)
            if event.event == .onSessionSIPStatus, let status = event.status { servicesStatusChanged(status) }
        case .cancelInvite:
            // While DNS is being asked no INVITE is out: nothing to cancel, the session ends.
            if locating { handle(.noResponse(proxiesLeft: false)) } else { call?.cancel() }
        case .hangup:
            call?.hangup()
        case .tryNextProxy:
            advanceTarget()
            sendInvite()
        case .startRingTimer:
            startRingTimer(seconds: Double(profile.outbound?.ringTimeoutSec ?? 60))
        case .ring:
            call?.ring()
            startRingTimer(seconds: Double(profile.inbound?.ringTimeoutSec ?? 45))
        case .answerInvite:
            answerInvite()
        case .rejectInvite(let status):
            call?.reject(status: status)
        case .sendHold(let hold):
            sendHold(hold)
        case .finish(let reason, let sip):
            finish(reason, sip)
        }
    }

    func startRingTimer(seconds: Double) {
        loop.cancel(ringTimer)
        ringTimer = loop.schedule(after: seconds) { [weak self] in self?.handle(.ringTimeout) }
    }

    // MARK: Outbound

    var proxies: [ProxyAddress] { profile.outbound?.proxies ?? [] }
    /// Another target of this proxy, or another proxy, to fail over to.
    var proxiesLeft: Bool { targetIndex + 1 < (targets?.count ?? 0) || proxyIndex + 1 < proxies.count }

    /// Sends the INVITE to the current proxy's current target. A proxy named by DNS is
    /// located first (asynchronously; this runs again with its targets).
    func sendInvite() {
        guard let outbound = profile.outbound, proxyIndex < proxies.count, let media else {
            handle(.noResponse(proxiesLeft: false))
            return
        }
        let proxy = proxies[proxyIndex]
        guard let peer = currentTarget() else { return }
        // Addressing and caller identity (tech prefix, user=phone, From, PAI/PPI, Privacy,
        // the profile's and the app's headers): OutboundInvitePlan.
        let plan = OutboundInvitePlan(
            outbound: outbound, target: targetTN, caller: sourceTN, request: callerRequest,
            host: proxy.hostReference, port: proxy.uriPort, secure: proxy.secure)
        requestURI = plan.requestURI
        // SDES keys go only where the policy lets them: over TLS unless the profile allows clear.
        sdes = SDESExchange(media: profile.media, overTLS: peer.transport == .tls)
        if let refusal = sdes.refusal {
            handle(.sipFailure(SIPDetails(code: 488, reason: "SRTP: " + refusal)))
            return
        }
        let offer = trunkOffer(&sdes, session: trunkSession, media: media)
        // A target silent for the failover time is left for the next one; the last one left
        // gets Timer B (32 s), as there is nothing to move on to.
        var policy = Gateway.callPolicy(profile)
        if outbound.failoverTimeoutMs > 0 && proxiesLeft {
            policy.failoverTimeout = Double(outbound.failoverTimeoutMs) / 1000
        }
        // Each target's ring time starts at its first provisional response (SessionMachine).
        loop.cancel(ringTimer)
        ringTimer = nil
        call = gateway.ua.invite(
            requestURI: plan.requestURI, from: plan.from, to: plan.to, peer: peer, sdp: offer,
            headers: [SIPHeader(.userAgent, gateway.ua.configuration.userAgent)] + plan.headers,
            credentials: credentials, policy: policy, delegate: self)
        if let call { gateway.captures.bind(callID: call.callID, to: capture, peer: call.peer.address.host) }
    }

    /// Our offer toward the trunk: the profile's codecs and DTMF on this call's trunk port,
    /// with the SDES keys `exchange` offers (a new INVITE, a late-offer 200, a transfer's dial).
    func trunkOffer(_ exchange: inout SDESExchange, session: SDPSessionIdentity, media: MediaCall) -> SessionDescription
    {
        let (proto, cryptos) = exchange.offer()
        return MediaNegotiation.trunkOffer(
            address: trunkSDPAddress(media), codecs: profile.media.trunkCodecs(opus: gateway.configuration.opus),
            telephoneEvent: profile.media.dtmf == .rfc4733, session: session, proto: proto, cryptos: cryptos)
    }

    /// Where the carrier is told to send RTP: this leg's port at the trunk's advertised
    /// address (Gateway+Addresses.swift).
    func trunkSDPAddress(_ media: MediaCall) -> SocketAddress {
        gateway.trunkSDPAddress(media.trunkAddress, profile: profile)
    }

    /// The carrier's SDP (an answer in an 18x or 2xx, or an offer in a re-INVITE): the codec
    /// it chose, where it listens, its SRTP keys. An answer the SRTP policy refuses ends the
    /// call (a required SRTP call never goes on in clear); a refused offer leaves the call
    /// as it was (the caller answers 488).
    @discardableResult
    func applyTrunkSDP(_ sdp: SessionDescription, isOffer: Bool = false) -> Bool {
        let codecs = profile.media.trunkCodecs(opus: gateway.configuration.opus)
        guard var leg = try? MediaNegotiation.trunkLeg(sdp, codecs: codecs) else {
            return false
        }
        var exchange = sdes
        do {
            try MediaNegotiation.applySDES(sdp, isOffer: isOffer, to: &exchange, leg: &leg)
        } catch {
            if !isOffer { refuseTrunkAnswer(error) }
            return false
        }
        sdes = exchange
        let previous = trunkLeg
        trunkLeg = leg
        guard let media, let platformLeg else { return true }
        if previous?.codec != leg.codec || previous?.rtpMap.payloadType != leg.rtpMap.payloadType
            || previous?.telephoneEvent != leg.telephoneEvent || previous?.srtp != leg.srtp
        {
            let configuration = gateway.mediaConfiguration(trunk: leg, platform: platformLeg, profile: profile)
            // Runs on the media thread before the commands below (the same queue, in order).
            media.reconfigure(configuration)
            applySilence()
            if machine.isConnected, profile.media.rtpTimeoutSec > 0 {
                media.armRTPTimeout(Double(profile.media.rtpTimeoutSec))
            }
        }
        // Every offer/answer opens a new window for the carrier's media to come from where it
        // really is (after a rebuild too: the rebuilt leg keeps what it had latched).
        if let remote = leg.remote { media.setRemote(.trunk, remote) }
        return true
    }

    /// An answer without the keys the policy needs: the call ends (BYE or CANCEL) with a
    /// local 488 that says why.
    private func refuseTrunkAnswer(_ error: NegotiationError) {
        guard !machine.isEnded else { return }
        gateway.metrics.srtpRefused()
        handle(.sipFailure(SIPDetails(code: 488, reason: "SRTP: " + error.message)))
        call?.hangup()
    }

    // MARK: Inbound

    private func answerInvite() {
        guard let call, let media, let trunkLeg else {
            call?.reject(status: 500)
            return
        }
        let sdp: SessionDescription
        if lateOffer {
            sdp = trunkOffer(&sdes, session: trunkSession, media: media)
        } else {
            sdp = MediaNegotiation.answer(for: trunkLeg, address: trunkSDPAddress(media), session: trunkSession)
        }
        call.answer(sdp: sdp)
        loop.cancel(ringTimer)
    }

    // MARK: Hold

    /// Silence toward the carrier while muted or held, and toward the app while held.
    func applySilence() {
        media?.setMuted(.platform, muted || heldLocally)
        media?.setMuted(.trunk, heldLocally)
    }

    private func sendHold(_ hold: Bool) {
        // Every session has a trunk leg once it is connected (offered or answered).
        guard let call, let media, let trunkLeg else { return handle(.localHoldFailed(status: nil)) }
        heldLocally = hold
        applySilence()
        _ = sdes.offer()  // the line in force, which the answer must match
        let offer = MediaNegotiation.answer(
            for: trunkLeg, address: trunkSDPAddress(media), session: trunkSession.next(),
            direction: hold ? .sendonly : .sendrecv)
        if !call.reinvite(sdp: offer) {
            // An offer is already in progress (a glare with the carrier): report it as not done.
            heldLocally = !hold
            applySilence()
            handle(.localHoldFailed(status: nil))
        }
    }

    // MARK: Merge

    /// Takes `held` off hold if the app held it, then bridges its media into ours.
    func startMerge(with held: GatewaySession) {
        held.mergePending = self
        if held.machine.heldLocally {
            held.handle(.localHold(false))
        } else {
            completeMerge(with: held)
        }
    }

    /// Called on `held` when its unhold finished (or failed).
    func mergeUnholdFinished(ok: Bool) {
        guard let host = mergePending else { return }
        if ok {
            host.completeMerge(with: self)
        } else {
            mergePending = nil
            host.mergeFailed("the held call could not be taken off hold")
        }
    }

    private func completeMerge(with held: GatewaySession) {
        guard let media, let heldMedia = held.media, let platformLeg, let trunkLeg, let heldPlatform = held.platformLeg,
            let heldTrunk = held.trunkLeg
        else {
            held.mergePending = nil
            return mergeFailed("a session has no media")
        }
        let mine = gateway.mediaConfiguration(trunk: trunkLeg, platform: platformLeg, profile: profile)
        let theirs = gateway.mediaConfiguration(trunk: heldTrunk, platform: heldPlatform, profile: held.profile)
        // The media thread answers; the sessions are touched back on the SIP loop only.
        let both = LoopBound((host: self, held: held), loop: loop)
        media.merge(with: heldMedia, configuration: mine, heldConfiguration: theirs) { [loop = self.loop] error in
            loop.execute {
                let (host, held) = both.value
                held.mergePending = nil
                guard !host.machine.isEnded, !held.machine.isEnded else { return }
                if let error {
                    host.mergeFailed("\(error)")
                    return
                }
                // The pipelines were rebuilt: mute and supervision apply again.
                for s in [host, held] {
                    s.applySilence()
                    if s.profile.media.rtpTimeoutSec > 0 {
                        s.media?.armRTPTimeout(Double(s.profile.media.rtpTimeoutSec))
                    }
                }
                host.merged.append(held)
                held.mergedInto = host
                host.handle(.merged(heldRoomId: held.roomId))
            }
        }
    }

    private func mergeFailed(_ why: String) {
        handle(.forward(Gateway.mergeError(self, why)))
    }

    // MARK: End

    /// The media's last statistics, taken by the media thread as it closed the call
    /// (`handle`); nil without media.
    private var finalStatistics: [MediaLeg: MediaLegStatistics]?

    private func finish(_ reason: EndReason, _ sip: SIPDetails?) {
        loop.cancel(ringTimer)
        ringTimer = nil
        stopServices()
        gateway.sessionEnded(self, reason: reason, sip: sip, stats: finalStatistics)
    }

    /// The snapshot `GET /v1/sessions/{roomId}` returns.
    func snapshot(stats: [MediaLeg: MediaLegStatistics]?) -> SessionSnapshot {
        func leg(_ s: MediaLegStatistics?, _ negotiated: NegotiatedLeg?) -> SessionSnapshot.LegStats? {
            let srtp = negotiated?.srtp
            return s.map {
                .init(
                    packetsReceived: $0.packetsReceived, packetsSent: $0.packetsSent, packetsLost: $0.packetsLost,
                    jitterMs: $0.jitterMs, roundTripMs: $0.roundTripMs, srtp: srtp?.suite.rawValue,
                    srtpAuthFailures: srtp == nil ? nil : $0.srtpAuthFailures,
                    srtpReplays: srtp == nil ? nil : $0.srtpReplays,
                    playout: $0.playout.rawValue, payloadType: negotiated.map { $0.rtpMap.payloadType },
                    otherPayloadTypes: $0.otherPayloadTypes, otherPayloadType: $0.lastOtherPayloadType.map { Int($0) },
                    sourceDropped: $0.sourceDropped, dtmfDropped: $0.dtmfDropped)
            }
        }
        return SessionSnapshot(
            roomId: roomId, traceId: traceId, direction: machine.direction.rawValue, status: machine.status,
            sourceTN: sourceTN, targetTN: targetTN, profile: profile.name, routingId: routingId,
            earlyMedia: machine.earlyMedia, muted: muted, sip: machine.sip, codec: trunkLeg?.codec.description,
            ended: machine.ended, trunk: leg(stats?[.trunk], trunkLeg), platform: leg(stats?[.platform], nil),
            lastSeq: gateway.events.lastSeq(roomId: roomId), carrier: carrier, opus: opusInEffect)
    }

    /// The platform leg's Opus settings as the snapshot shows them; nil when it is not Opus.
    /// The call's PCM rate is the media engine's (`MediaCallConfiguration.callSampleRate`).
    private var opusInEffect: OpusOptions? {
        guard case .opus(let settings)? = platformLeg?.codec else { return nil }
        let rate = MediaCallConfiguration.callSampleRate(trunk: trunkLeg?.codec ?? .pcmu, platform: .opus(settings))
        return OpusOptions(effective: settings, sampleRate: rate)
    }
}
