import Foundation
import IrisAPI
import Media
import SDP
import SIP

/// A carrier's REFER being carried out: what it needs beyond its machine.
struct ReferredTransfer {
    var machine: ReferredTransferMachine
    /// The call the REFER came in (our NOTIFYs go there) and the REFER's CSeq (their `id`).
    let referrer: SIPCall
    let referID: UInt32
    /// The carrier's Referred-By, as sent.
    let referredBy: String?
    /// The number our call to the target presents.
    let caller: String
    var timer: SIPEventLoop.Timer?
    /// Our INVITE to the target, and what its offer set up (SRTP keys, SDP identity).
    var dial: SIPCall?
    var dialDelegate: TransferDialDelegate?
    var sdes: SDESExchange?
    var session = SDPSessionIdentity()
    /// An outbound admission the dial holds until the session ends.
    var admitted = false
}

/// The INVITE to a REFER's target until it answers: then the session's call, and the session
/// its delegate.
final class TransferDialDelegate: SIPCallDelegate {
    weak var session: GatewaySession?
    init(session: GatewaySession) { self.session = session }

    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) { session?.runReferred(.dialRinging) }
    func call(_ call: SIPCall, didConnect message: SIPMessage) { session?.dialAnswered(call) }
    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        let details = GatewaySession.details(of: message) ?? SIPDetails(code: 408, reason: "\(end)")
        session?.runReferred(.dialFailed(details))
    }
}

/// Carrying out `ReferredTransferMachine`: the trunk's policy, the app's answer, our call to
/// the target and the NOTIFYs that report it, and moving the app onto the new call.
extension GatewaySession {
    /// A REFER in our dialog (RFC 3515 §2.4.2): refused, or 202 and the work starts.
    func referReceived(_ request: SIPMessage) -> SIPRequestResponse {
        let policy = profile.transfer.refer
        func refuse(_ status: Int, _ reason: String) -> SIPRequestResponse {
            gateway.metrics.refused("refer_\(status)")
            return SIPRequestResponse(status: status, reason: reason)
        }
        guard policy != .reject else { return refuse(603, "Decline") }
        guard machine.isConnected, !machine.appLeft else { return refuse(603, "Decline") }
        let busy =
            (referred.map { !$0.machine.isOver } ?? false) || (outgoingTransfer.map { !$0.machine.isOver } ?? false)
            || !merged.isEmpty || mergedInto != nil || bridgedWith != nil
        guard !busy else { return refuse(491, "Request Pending") }
        guard let referTo = request.referTo, referTo.uri.isSIP || referTo.uri.scheme == "tel" else {
            return refuse(400, "Bad Refer-To")
        }
        // A Refer-To with Replaces asks us to replace a dialog of another party: not ours to do.
        guard referTo.uri.headers.map({ !$0.lowercased().contains("replaces=") }) ?? true else {
            return refuse(603, "Decline")
        }
        guard let outbound = profile.outbound, let call, let cseq = request.cseq?.sequence else {
            return refuse(603, "Decline")
        }
        let raw = Self.number(in: referTo.uri, techPrefix: outbound.techPrefix)
        // The number rules and allowed prefixes of any dial: outside them, never dialled.
        guard let target = try? profile.normalize(raw),
            let caller = try? outbound.callerId.present(sourceTN: ownNumber, target: target)
        else { return refuse(403, "Forbidden") }
        referred = ReferredTransfer(
            machine: ReferredTransferMachine(targetTN: target, asksApp: policy == .app), referrer: call,
            referID: cseq, referredBy: request[.referredBy], caller: caller)
        recordTransfer(TransferInfo(state: .requested, by: "carrier", method: "dial", targetTN: target), partner: nil)
        // After the 202 has gone (RFC 3515: the first NOTIFY follows it).
        let answerTimeout = Double(profile.transfer.answerTimeoutSec)
        _ = loop.schedule(after: 0) { [weak self] in
            guard let self, var r = referred else { return }
            let actions = r.machine.start(answerTimeout: answerTimeout)
            referred = r
            for action in actions { performReferred(action) }
        }
        return SIPRequestResponse(status: 202, reason: "Accepted")
    }

    /// The number a Refer-To names: a `tel:` URI's, or a SIP URI's user part (without the
    /// trunk's tech prefix and any `;phone-context`).
    static func number(in uri: SIPURI, techPrefix: String) -> String {
        var user = uri.opaque ?? uri.user ?? ""
        if let semicolon = user.firstIndex(of: ";") { user = String(user[..<semicolon]) }
        if !techPrefix.isEmpty, user.hasPrefix(techPrefix) { user.removeFirst(techPrefix.count) }
        return user
    }

    /// Our own number in this call: the caller's for an outbound call, the DID for an inbound one.
    var ownNumber: String { machine.direction == .outbound ? sourceTN : targetTN }

    /// The app's answer to `onSessionTransferRequest`.
    func answerReferred(accept: Bool) throws(GatewayError) {
        guard let r = referred, r.machine.phase == .askingApp else {
            throw .wrongState("session \(roomId) has no transfer request waiting for an answer")
        }
        runReferred(.appAnswered(accept: accept))
    }

    func runReferred(_ input: ReferredTransferMachine.Input) {
        guard var r = referred else { return }
        let actions = r.machine.handle(input)
        referred = r
        for action in actions { performReferred(action) }
        // A dial that failed gives its outbound admission back at once.
        if let r = referred, r.machine.phase == .failed, r.admitted {
            gateway.admissions[profile.name]?.release()
            referred?.admitted = false
        }
    }

    private func performReferred(_ action: ReferredTransferMachine.Action) {
        guard let r = referred else { return }
        switch action {
        case .notify(let frag):
            r.referrer.notifyRefer(id: r.referID, progress: frag)
        case let .report(state, details, message):
            publishReferred(.onSessionTransfer, state, details, message: message)
        case .askApp:
            publishReferred(.onSessionTransferRequest, .requested, nil, message: nil)
        case .armTimer(let seconds):
            loop.cancel(r.timer)
            referred?.timer = loop.schedule(after: seconds) { [weak self] in self?.runReferred(.answerTimeout) }
        case .cancelTimer:
            loop.cancel(r.timer)
            referred?.timer = nil
        case .dial:
            placeReferredDial()
        case .moveToNewCall:
            break  // done by `dialAnswered` before the machine heard of it
        case .cancelDial:
            r.dial?.hangup()
        case .endSession:
            handle(.remoteHangup(cause: nil))
        }
    }

    private func publishReferred(
        _ name: SessionEvent.Name, _ state: TransferState, _ details: SIPDetails?, message: String?
    ) {
        guard let r = referred else { return }
        var e = SessionEvent(event: name, roomId: roomId, traceId: traceId)
        e.transfer = TransferInfo(
            state: state, by: "carrier", method: "dial", targetTN: r.machine.targetTN, referredBy: r.referredBy)
        e.sip = details
        e.message = message
        publishTransferEvent(e)
        if let info = e.transfer { recordTransfer(info, partner: nil) }
    }

    /// The INVITE to the REFER's target, on this session's media (the same trunk port): the
    /// trunk's first proxy, its number rules, an outbound admission.
    private func placeReferredDial() {
        guard referred != nil, let outbound = profile.outbound, let media, !proxies.isEmpty else {
            return runReferred(.dialFailed(SIPDetails(code: 503, reason: "no outbound proxy")))
        }
        guard gateway.admissions[profile.name]?.admit(now: EventLoop.now()) == nil else {
            return runReferred(
                .dialFailed(SIPDetails(code: 503, reason: "trunk \(profile.name) is at its outbound limit")))
        }
        referred?.admitted = true
        let proxy = proxies[0]
        let transport = Gateway.transport(profile, proxy)
        let found = gateway.ua.locate(proxy.destination, preferred: transport) { [weak self] result in
            self?.sendReferredDial(result, proxy: proxy, outbound: outbound, media: media)
        }
        if let found { sendReferredDial(found, proxy: proxy, outbound: outbound, media: media) }
    }

    private func sendReferredDial(
        _ located: SIPUserAgent.LocateResult, proxy: ProxyAddress, outbound: TrunkProfile.Outbound, media: MediaCall
    ) {
        guard let r = referred, r.machine.phase == .dialing, r.dial == nil else { return }
        guard case .success(let found) = located,
            let peer = found.lazy.compactMap({ self.gateway.peer(for: $0, profile: self.profile, proxy: proxy) }).first
        else {
            return runReferred(.dialFailed(SIPDetails(code: 503, reason: "the trunk's proxy could not be located")))
        }
        let plan = OutboundInvitePlan(
            outbound: outbound, target: r.machine.targetTN, caller: r.caller, request: OutboundCallerRequest(),
            host: proxy.hostReference, port: proxy.uriPort, secure: proxy.secure)
        var exchange = SDESExchange(media: profile.media, overTLS: peer.transport == .tls)
        if let refusal = exchange.refusal {
            return runReferred(.dialFailed(SIPDetails(code: 488, reason: "SRTP: " + refusal)))
        }
        let offer = trunkOffer(&exchange, session: r.session, media: media)
        let delegate = TransferDialDelegate(session: self)
        let credentials = gateway.credentials(outbound)
        var headers = [SIPHeader(.userAgent, gateway.ua.configuration.userAgent)] + plan.headers
        if let by = r.referredBy { headers.append(SIPHeader(.referredBy, by)) }
        let dial = gateway.ua.invite(
            requestURI: plan.requestURI, from: plan.from, to: plan.to, peer: peer, sdp: offer, headers: headers,
            credentials: credentials, policy: Gateway.callPolicy(profile), delegate: delegate)
        gateway.captures.bind(callID: dial.callID, to: capture, peer: dial.peer.address.host)
        referred?.dial = dial
        referred?.dialDelegate = delegate
        referred?.sdes = exchange
    }

    /// The target answered: its call becomes the session's, on the same media, and the
    /// referrer's call is left to end (its BYE, or ours once the final NOTIFY is through).
    func dialAnswered(_ dial: SIPCall) {
        guard let r = referred, r.dial === dial, r.machine.phase == .dialing else { return }
        let old = call
        call = dial
        dial.delegate = self
        if let exchange = r.sdes { sdes = exchange }
        trunkSession = r.session
        if let answer = dial.remoteSDP, !applyTrunkSDP(answer) {
            // Refused answer (SRTP policy): the session has ended with 488 and hung up the dial.
            old?.hangup()
            return
        }
        if let snapshot = dial.dialogSnapshot { gateway.keepDialog(self, snapshot) }
        if profile.media.rtpTimeoutSec > 0 { media?.armRTPTimeout(Double(profile.media.rtpTimeoutSec)) }
        runReferred(.dialAnswered)
        // The referrer left already, or leaves once our final NOTIFY is through
        // (`referrerNotified`): a transferor hangs up after success (RFC 5589 §6).
        if referred?.machine.referrerGone == true { old?.hangup() }
    }

    /// Our NOTIFY to the referrer got its answer: after the final one, its call is done.
    func referrerNotified(_ call: SIPCall) {
        guard let r = referred, r.referrer === call, r.machine.phase == .succeeded, !call.isTerminated else { return }
        call.hangup()
    }
}
