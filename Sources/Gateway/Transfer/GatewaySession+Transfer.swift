import Foundation
import IrisAPI
import Media
import SIP

/// The app's transfer of the call (we are the transferor): what it needs beyond its machine.
struct OutgoingTransfer {
    var machine: TransferMachine
    /// The REFER's Refer-To (the target in the trunk's number format, or the other call's
    /// remote target with `?Replaces=`) and Referred-By (our identity in this call).
    var referTo: SIPURI
    var referredBy: NameAddress?
    /// The REFER's CSeq: the `id` its NOTIFYs carry; nil until it went.
    var referID: UInt32?
    var timer: SIPEventLoop.Timer?
    /// Blind: the normalised target. Both: the number a bridge's own call presents.
    var targetTN: String?
    var caller: String
    /// Attended: the session whose dialog the REFER's Replaces names.
    weak var other: GatewaySession?
    /// Bridge fallback (blind): the gateway's own call to the target, once placed.
    weak var bridgeLeg: GatewaySession?
    /// The SIP details of the last state reported (the session's end carries them).
    var lastDetails: SIPDetails?
}

/// Carrying out `TransferMachine`: the REFER, its NOTIFYs, the events, the fallback bridge.
extension GatewaySession {
    func startTransfer(_ t: OutgoingTransfer) {
        outgoingTransfer = t
        t.other?.attendedTransferHost = self
        runTransfer(.start)
    }

    /// Feeds the machine and carries out its actions; returns the answer for a NOTIFY input.
    @discardableResult
    func runTransfer(_ input: TransferMachine.Input) -> Int? {
        guard var t = outgoingTransfer else { return nil }
        let actions = t.machine.handle(input, now: SIPEventLoop.now())
        // Stored before the actions run: one of them may feed the machine again.
        outgoingTransfer = t
        var answer: Int?
        for action in actions {
            if case .answerNotify(let status) = action { answer = status } else { performTransfer(action) }
        }
        return answer
    }

    private func performTransfer(_ action: TransferMachine.Action) {
        guard let t = outgoingTransfer else { return }
        switch action {
        case .sendRefer:
            guard let call, let id = call.refer(to: t.referTo, referredBy: t.referredBy) else {
                _ = loop.schedule(after: 0) { [weak self] in
                    self?.runTransfer(.referResponse(SIPDetails(code: 503, reason: "the REFER could not be sent")))
                }
                return
            }
            outgoingTransfer?.referID = id
        case let .report(state, details, message):
            outgoingTransfer?.lastDetails = details
            reportTransfer(state, details, message: message, method: t.machine.method)
        case .answerNotify:
            break
        case .armTimer(let seconds):
            loop.cancel(t.timer)
            outgoingTransfer?.timer = loop.schedule(after: seconds) { [weak self] in self?.runTransfer(.notifyTimeout) }
        case .cancelTimer:
            loop.cancel(t.timer)
            outgoingTransfer?.timer = nil
        case .scheduleRetry(let seconds):
            loop.cancel(t.timer)
            outgoingTransfer?.timer = loop.schedule(after: seconds) { [weak self] in self?.runTransfer(.retryDue) }
        case .complete:
            if let other = t.other, !other.machine.isEnded {
                other.reportTransfer(.succeeded, t.lastDetails, message: nil, method: "refer", of: self)
                other.handle(.transferred(nil))
            }
            handle(.transferred(t.lastDetails))
        case .startBridge:
            startBridge(t)
        case .joinBridge:
            for s in [self, t.other ?? t.bridgeLeg].compactMap({ $0 }) { s.media?.setMuted(.platform, true) }
            handle(.appLeft)
            if let other = t.other {
                other.reportTransfer(.succeeded, nil, message: nil, method: "bridge", of: self)
                other.handle(.appLeft)
            }
        case .abandonBridge:
            if let leg = t.bridgeLeg, !leg.machine.isEnded { leg.handle(.close) }
        }
    }

    /// `onSessionTransfer` of the app's transfer, and the record's transfer fields. `of`: the
    /// transferring session, when this one is the other call of an attended transfer.
    func reportTransfer(
        _ state: TransferState, _ details: SIPDetails?, message: String?, method: String,
        of transferring: GatewaySession? = nil
    ) {
        let t = (transferring ?? self).outgoingTransfer
        var info = TransferInfo(state: state, by: "app", method: method, targetTN: t?.targetTN)
        if let transferring {
            info.replacesRoomId = transferring.roomId
        } else {
            info.replacesRoomId = t?.other?.roomId
        }
        var e = SessionEvent(event: .onSessionTransfer, roomId: roomId, traceId: traceId)
        e.transfer = info
        e.sip = details
        e.message = message
        publishTransferEvent(e)
        recordTransfer(info, partner: transferring?.roomId ?? t?.other?.roomId ?? t?.bridgeLeg?.roomId)
    }

    /// The record's transfer fields (the outcome once there is one).
    func recordTransfer(_ info: TransferInfo, partner: String?) {
        if info.state == .succeeded, let target = info.targetTN {
            services.carrierParty = target
            siprecPartiesChanged()
        }
        let outcome: String? =
            switch info.state {
            case .succeeded: "succeeded"
            case .failed: "failed"
            default: nil
            }
        gateway.records.update(roomId: roomId) { r in
            r.transferTarget = info.targetTN ?? r.transferTarget
            r.transferredBy = info.by
            r.transferMethod = info.method
            r.transferOutcome = outcome
            r.transferRoomId = partner ?? r.transferRoomId
        }
    }

    /// A NOTIFY in our dialog: the progress of our REFER (RFC 3515 §2.4.4), or 481.
    func notifyReceived(_ request: SIPMessage) -> SIPRequestResponse {
        guard let event = request.event, event.package.lowercased() == "refer", let t = outgoingTransfer else {
            return SIPRequestResponse(status: 481, reason: "Subscription Does Not Exist")
        }
        // A NOTIFY may overtake the 202 (and so our knowing the id): any id then.
        if let id = t.referID, let theirs = event.id, theirs != String(id) {
            return SIPRequestResponse(status: 481, reason: "Subscription Does Not Exist")
        }
        guard let frag = try? SIPFrag.parse(request.body) else {
            return SIPRequestResponse(status: 400, reason: "Bad sipfrag")
        }
        let terminated = request.subscriptionState?.value == .terminated
        return SIPRequestResponse(status: runTransfer(.notify(frag, terminated: terminated)) ?? 481)
    }

    /// The carrier's answer to our REFER.
    func referCompleted(cseq: UInt32, status: Int, response: SIPMessage?) {
        guard let t = outgoingTransfer, t.referID == nil || t.referID == cseq else { return }
        runTransfer(.referResponse(Self.details(of: response) ?? SIPDetails(code: status, reason: "")))
    }

    // MARK: Bridge fallback

    /// The carrier would not: join the other call's leg (attended), or dial the target on the
    /// trunk (blind), and join the two trunk legs once it answers.
    private func startBridge(_ t: OutgoingTransfer) {
        if let other = t.other {
            join(other) { [weak self] ok in self?.runTransfer(ok ? .bridgeAnswered : .bridgeFailed(nil)) }
            return
        }
        guard let target = t.targetTN else {
            runTransfer(.bridgeFailed(nil))
            return
        }
        gateway.dialBridge(for: self, target: target, caller: t.caller)
    }

    /// Joins `other`'s trunk leg to ours (no platform leg in the mix); `done` on the SIP loop.
    func join(_ other: GatewaySession, done: @escaping (Bool) -> Void) {
        guard let media, let otherMedia = other.media, let platformLeg, let trunkLeg,
            let otherPlatform = other.platformLeg, let otherTrunk = other.trunkLeg
        else { return done(false) }
        let mine = gateway.mediaConfiguration(trunk: trunkLeg, platform: platformLeg, profile: profile)
        let theirs = gateway.mediaConfiguration(trunk: otherTrunk, platform: otherPlatform, profile: other.profile)
        let both = LoopBound((me: self, other: other, done: done), loop: loop)
        media.merge(with: otherMedia, configuration: mine, heldConfiguration: theirs, includesPlatform: false) {
            [loop = self.loop] error in
            loop.execute {
                let (me, other, done) = both.value
                guard error == nil, !me.machine.isEnded, !other.machine.isEnded else { return done(false) }
                me.bridgedWith = other
                other.bridgedWith = me
                for s in [me, other] where s.profile.media.rtpTimeoutSec > 0 {
                    s.media?.armRTPTimeout(Double(s.profile.media.rtpTimeoutSec))
                }
                done(true)
            }
        }
    }

    /// The bridge's own call to the target (this session is it) rang, answered or ended.
    func bridgeLegProgress(_ event: BridgeLegEvent) {
        guard let host = bridgeHost, !host.machine.isEnded, host.outgoingTransfer?.machine.phase == .bridging else {
            // The transfer this call was placed for is over (the app's call ended, the bridge
            // failed or was joined already): a call still ringing or just answered has no one
            // to serve, and goes.
            if case .ended = event {} else if !machine.isEnded, bridgedWith == nil { handle(.close) }
            return
        }
        switch event {
        case .ringing:
            host.runTransfer(.bridgeRinging)
        case .answered:
            host.join(self) { [weak host] ok in host?.runTransfer(ok ? .bridgeAnswered : .bridgeFailed(nil)) }
        case .ended(let details):
            host.runTransfer(.bridgeFailed(details))
        }
    }

    enum BridgeLegEvent {
        case ringing, answered
        case ended(SIPDetails?)
    }
}

extension Gateway {
    /// Places the bridge's own call to `target` for `host`'s transfer, as any outbound call:
    /// admitted under the trunk's limits (off the SIP loop: the cluster's admission asks Redis),
    /// presenting `caller`. Its platform leg is never used (the app has left by the time the
    /// legs are joined).
    func dialBridge(for host: GatewaySession, target: String, caller: String) {
        let profile = host.profile
        guard let trunk = Self.openingLeg(profile.media.codecs.first?.rawValue, profile: profile, configuration),
            let platform = Self.openingLeg("PCMU")
        else {
            host.runTransfer(.bridgeFailed(nil))
            return
        }
        let placement = OutboundPlacement(
            profile: profile, target: target, source: caller, caller: OutboundCallerRequest(), platform: platform,
            provisionalTrunk: trunk,
            // No routing id: the app has left by the time this call matters, and its events
            // would only be noise on the app's stream (the records name both sessions).
            routingId: nil, routingIdQuota: nil, traceId: host.traceId, notificationData: nil, capture: false
        )
        let hostRef = LoopBound(host, loop: ua.loop)
        let loop = ua.loop
        DispatchQueue.global().async { [self] in
            do {
                _ = try place(placement) { leg in
                    let host = hostRef.value
                    leg.bridgeHost = host
                    host.outgoingTransfer?.bridgeLeg = leg
                    let hostRoom = host.roomId
                    leg.gateway.records.update(roomId: leg.roomId) { r in
                        r.transferRoomId = hostRoom
                        r.transferredBy = "app"
                        r.transferMethod = "bridge"
                    }
                }
            } catch {
                let why = (error as? GatewayError)?.message ?? "\(error)"
                loop.execute { hostRef.value.runTransfer(.bridgeFailed(SIPDetails(code: 503, reason: why))) }
            }
        }
    }
}
