import SIP

/// One step of a transfer the simulator took part in (RFC 3515 REFER and its NOTIFYs, RFC
/// 3891 Replaces), both ways: what tests check and what a call's report line sums up.
public struct TransferRecord: Sendable, Equatable, CustomStringConvertible {
    public enum Step: Sendable, Equatable, CustomStringConvertible {
        /// The gateway's REFER: its Refer-To and Referred-By as received (nil when absent),
        /// and the status we answered.
        case referReceived(referTo: String?, referredBy: String?, status: Int)
        /// Our NOTIFY about the gateway's REFER, with this sipfrag status; the gateway
        /// answered `response` (408 none, 503 not sent).
        case notifySent(sipfrag: Int, response: Int)
        /// Our REFER (refers-caller) naming `referTo`; the gateway answered `status`.
        case referSent(referTo: String, status: Int)
        /// The gateway's NOTIFY about our REFER: its sipfrag status (nil: unreadable) and
        /// the status we answered (481 for no subscription of ours).
        case notifyReceived(sipfrag: Int?, status: Int)
        /// replaces-call: our INVITE with this `Replaces` got `status` (200 or a refusal).
        case replacingInvite(replaces: String, status: Int)

        public var description: String {
            switch self {
            case let .referReceived(referTo, _, status): "REFER \(referTo ?? "-") \(status)"
            case let .notifySent(sipfrag, response): "NOTIFY \(sipfrag) \(response)"
            case let .referSent(referTo, status): "sent REFER \(referTo) \(status)"
            case let .notifyReceived(sipfrag, status): "got NOTIFY \(sipfrag.map(String.init) ?? "?") \(status)"
            case let .replacingInvite(replaces, status): "INVITE Replaces \(replaces) \(status)"
            }
        }
    }

    /// The number the call was for (the Request-URI's user part of the gateway's INVITE).
    public var number: String
    /// The Call-ID of the call the step happened in.
    public var callID: String
    public var step: Step

    public var description: String { "\(number) \(step)" }
}

/// Where a call's transfer stands: the NOTIFYs still to send about a REFER we took, and the
/// subscription of a REFER we sent.
struct SimTransferState {
    /// The REFER we answered 202: its CSeq, the `id` of our NOTIFYs' `Event: refer`.
    var referID: UInt32?
    /// NOTIFYs still to send, each `after` seconds (unscaled) once the previous one got its
    /// response (RFC 6665 §4.2.2: one at a time).
    var pendingNotifies: [(after: Double, frag: SIPFrag)] = []
    /// The sipfrag of the NOTIFY awaiting its response.
    var inFlight: [SIPFrag] = []
    /// refers-caller: our REFER's CSeq and target while its subscription lasts.
    var sentRefer: (id: UInt32, target: String)?
    /// transfer-odd-notify: the next REFER gets its NOTIFY 100 ahead of the response (armed at
    /// the INVITE with `SIPCall.notifyBeforeAnsweringNextRefer`; any REFER uses it up).
    var earlyNotifyArmed = false
}

extension SimCall {
    // MARK: The gateway's REFER (transfer-* numbers)

    func call(_ call: SIPCall, responseTo request: SIPMessage) -> SIPRequestResponse {
        let response =
            switch request.method {
            case "REFER": referReceived(request)
            case "NOTIFY": notifyReceived(request)
            default: SIPRequestResponse.refusal(for: request)
            }
        return response
    }

    private func referReceived(_ request: SIPMessage) -> SIPRequestResponse {
        let response = referResponse(request)
        simulator.record(
            self,
            .referReceived(referTo: request[.referTo], referredBy: request[.referredBy], status: response.status))
        return response
    }

    private func referResponse(_ request: SIPMessage) -> SIPRequestResponse {
        let notifiedAlready = transfer.earlyNotifyArmed
        transfer.earlyNotifyArmed = false
        switch behaviour {
        case .transferRefuse405:
            let allow = SIPUserAgentConfiguration.allowedMethods.filter { $0 != "REFER" }
            return SIPRequestResponse(
                status: 405, reason: "Method Not Allowed", headers: [SIPHeader(.allow, allow.joined(separator: ", "))])
        case .transferRefuse603:
            return SIPRequestResponse(status: 603, reason: "Decline")
        case .transferAccept, .transferFailBusy, .transferOddNotify, .transferNoNotify:
            break
        default:
            return SIPRequestResponse.refusal(for: request)
        }
        // RFC 3515 §2.4.1: exactly one Refer-To.
        guard request.values(.referTo).count == 1, let target = request.referTo, let id = request.cseq?.sequence else {
            return SIPRequestResponse(status: 400, reason: "Bad Refer-To")
        }
        transfer.referID = id
        let interval = config.referNotifyInterval
        let trying = SIPFrag(status: 100, reason: "Trying")
        let ringing = SIPFrag(status: 180, reason: "Ringing")
        switch behaviour {
        case .transferAccept:
            var notifies: [(after: Double, frag: SIPFrag)] = [(0, trying), (interval, ringing)]
            if let final = Self.finalStatus(calling: target.uri.user ?? "") {
                notifies.append((config.answerDelay, final))
            }
            notify(notifies)
        case .transferFailBusy:
            notify([(0, trying), (interval, SIPFrag(status: 486, reason: "Busy Here"))])
        case .transferOddNotify:
            // Its 100 went out ahead of this 202 (`notifyBeforeAnsweringNextRefer`); the last
            // 200 comes after the subscription ended.
            let ok = SIPFrag(status: 200, reason: "OK")
            let rest: [(after: Double, frag: SIPFrag)] = [
                (interval, ringing), (interval, ringing), (interval, ok), (interval, ok)
            ]
            if notifiedAlready {
                transfer.inFlight.append(trying)
                transfer.pendingNotifies = rest
            } else {
                notify([(0, trying)] + rest)
            }
        default:
            break
        }
        return SIPRequestResponse(status: 202, reason: "Accepted")
    }

    /// How a call to `number` ends, as its behaviour in the table says: 200 when it answers,
    /// its rejection, nil when it never ends by itself (rings or plays early media for ever).
    static func finalStatus(calling number: String) -> SIPFrag? {
        switch TestNumbers.behaviour(for: number) {
        case .reject(let status, let reason, _, _): SIPFrag(status: status, reason: reason)
        case .wrongCause: SIPFrag(status: 486, reason: "Busy Here")
        case let b where b.answers: SIPFrag(status: 200, reason: "OK")
        default: nil
        }
    }

    /// Queues `notifies` and sends the first when none is in flight.
    private func notify(_ notifies: [(after: Double, frag: SIPFrag)]) {
        transfer.pendingNotifies = notifies
        if transfer.inFlight.isEmpty { notifyNext() }
    }

    /// The next queued NOTIFY, after its delay.
    private func notifyNext() {
        guard !transfer.pendingNotifies.isEmpty else { return }
        let (delay, frag) = transfer.pendingNotifies.removeFirst()
        let send = { (call: SimCall) in
            guard let id = call.transfer.referID else { return }
            call.transfer.inFlight.append(frag)
            call.sip.notifyRefer(id: id, progress: frag)
        }
        if delay == 0 { send(self) } else { after(delay, send) }
    }

    func call(_ call: SIPCall, didCompleteRequest method: String, cseq: UInt32, status: Int, response: SIPMessage?) {
        switch method {
        case "NOTIFY":
            guard !transfer.inFlight.isEmpty else { return }
            let frag = transfer.inFlight.removeFirst()
            simulator.record(self, .notifySent(sipfrag: frag.status, response: status))
            if transfer.inFlight.isEmpty { notifyNext() }
        case "REFER":
            guard let sent = transfer.sentRefer, sent.id == cseq else { return }
            simulator.record(self, .referSent(referTo: sent.target, status: status))
            // Refused: no subscription, the call goes on.
            if status >= 300 { transfer.sentRefer = nil }
        default:
            break
        }
    }

    // MARK: Our REFER (refers-caller)

    /// The number refers-caller transfers the gateway to: the INVITE's `X-Sim-Refer-To`, else
    /// +15550100001.
    static let referToHeader: SIPHeaderName = "X-Sim-Refer-To"

    func sendRefer() {
        guard let d = sip.currentDialog else { return }
        let number = sip.invite[Self.referToHeader].map { String($0.filter { !$0.isWhitespace }) } ?? "+15550100001"
        let target = SIPURI(user: number, host: d.remoteTarget.host, port: d.remoteTarget.port)
        let by = NameAddress(uri: SIPURI(user: self.number, host: "sim"))
        guard let id = sip.refer(to: target, referredBy: by) else { return }
        transfer.sentRefer = (id, NameAddress(uri: target).serialize())
    }

    /// The gateway's NOTIFY about our REFER: 200 while the subscription lasts (481 after or
    /// for another), and BYE once it reports a 2xx: the transferor leaves (RFC 5589 §6.1).
    private func notifyReceived(_ request: SIPMessage) -> SIPRequestResponse {
        let frag = try? SIPFrag.parse(request.body)
        guard let sent = transfer.sentRefer, let event = request.event, event.package.lowercased() == "refer",
            event.id == nil || event.id == String(sent.id)
        else {
            simulator.record(self, .notifyReceived(sipfrag: frag?.status, status: 481))
            return SIPRequestResponse.refusal(for: request)
        }
        simulator.record(self, .notifyReceived(sipfrag: frag?.status, status: 200))
        if request.subscriptionState?.value == .terminated { transfer.sentRefer = nil }
        if let code = frag?.status, (200...299).contains(code) {
            // Queued behind our 200 to this NOTIFY.
            sip.hangup()
        }
        return SIPRequestResponse(status: 200)
    }

    // MARK: Our INVITE with Replaces (replaces-call)

    /// A new call to the gateway, from a new media leg, taking this one's place (RFC 3891 §3:
    /// to-tag the gateway's tag, from-tag ours). The old call stays until the gateway ends it.
    func sendReplacingInvite() {
        guard let d = sip.currentDialog else { return }
        let replaces = Replaces(naming: d)
        let sessionID = String(UInt32.random(in: 1...UInt32.max))
        guard let (leg, choice, offer) = try? Self.offeringLeg(simulator, sessionID: sessionID) else {
            simulator.record(self, .replacingInvite(replaces: replaces.serialize(), status: 500))
            return
        }
        let outgoing = simulator.ua.invite(
            requestURI: d.remoteTarget, from: d.localAddress, to: d.remoteAddress, peer: sip.peer, sdp: offer,
            headers: [SIPHeader(.replaces, replaces.serialize())], delegate: nil)
        let call = SimCall(
            sip: outgoing, number: number, behaviour: behaviour, simulator: simulator, replacing: replaces)
        call.offered(offer, on: leg, choice: choice)
        outgoing.delegate = call
        simulator.adopt(call)
    }

    /// The gateway took our replacing INVITE: echo on the new leg.
    func replacingCallConnected() {
        leg?.setEcho(.packets)
        if let replacing { simulator.record(self, .replacingInvite(replaces: replacing.serialize(), status: 200)) }
    }

    /// The gateway refused it (481 ...): the old call goes on.
    func replacingCallRefused(_ status: Int) {
        if let replacing { simulator.record(self, .replacingInvite(replaces: replacing.serialize(), status: status)) }
    }

    /// The call's transfer steps for its report line; empty when none.
    var transferSummary: String {
        let steps = simulator.transfers.filter { $0.callID == sip.callID }.map(\.step.description)
        return steps.isEmpty ? "" : "; " + steps.joined(separator: ", ")
    }
}
