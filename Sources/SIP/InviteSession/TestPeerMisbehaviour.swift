/// Test peers only (the carrier simulator's misbehaving numbers): what a `SIPCall` keeps from
/// its `InviteSessionMachine` on the way in (events) and on the way out (actions), so the
/// machine itself has no knob for a misbehaviour. The empty value passes everything through;
/// the gateway never sets anything.
public struct TestPeerMisbehaviour: Sendable {
    /// The ACK for our 2xx to the INVITE is not fed to the machine, as if it never arrived
    /// (the simulator's `ignores-ack` number). nil: ACKs are honoured.
    public var ignoredACK: IgnoredACK?
    /// The 100 Trying of `.start` is not sent (a carrier slow to say anything, the simulator's
    /// `slow-trying`); a `.ring` with status 100 sends one later. Default false.
    public var withholdsTrying = false
    /// The next REFER's first NOTIFY, this sipfrag, goes out before the REFER's response (RFC
    /// 3515 §2.4.4 lets a NOTIFY overtake the 202; the simulator's `transfer-odd-notify`).
    /// Used once. nil: NOTIFYs follow the response, as the application sends them.
    public var referNotifiedFirst: SIPFrag?

    /// While the 2xx to the INVITE goes unacknowledged on `ignoredACK`'s timer: the next
    /// interval and when to give up.
    private var ignoring: (interval: Double, giveUpAt: Double)?

    /// Nothing withheld, nothing ignored.
    public init() {}

    /// How the 2xx goes on when its ACK is ignored: retransmitted at `t1` doubling up to `t2`
    /// and, `giveUpAfter` seconds after the 2xx, the session ends with a BYE carrying
    /// `byeHeaders` (RFC 3261 §13.3.1.4 on a shorter clock), our hangup (`.localHangup`).
    /// `giveUpAfter` must not pass the machine's own 64*T1, which would end the call first.
    public struct IgnoredACK: Sendable, Equatable {
        public var t1: Double
        public var t2: Double
        public var giveUpAfter: Double
        public var byeHeaders: [SIPHeader]

        public init(t1: Double, t2: Double, giveUpAfter: Double, byeHeaders: [SIPHeader] = []) {
            self.t1 = t1
            self.t2 = t2
            self.giveUpAfter = giveUpAfter
            self.byeHeaders = byeHeaders
        }
    }

    /// Feeds `event` to `machine` unless a misbehaviour keeps it back, and returns the actions
    /// to carry out, less those a misbehaviour withholds.
    mutating func handle(
        _ event: InviteSessionMachine.Event, on machine: inout InviteSessionMachine, now: Double
    ) -> [InviteSessionMachine.Action] {
        switch event {
        case .ack(let ack) where ignoring != nil && ack.cseq?.sequence == machine.invite.cseq?.sequence:
            return []
        case .timerFired(.responseRetransmit):
            guard let ignored = ignoredACK, let giveUpAt = ignoring?.giveUpAt, now >= giveUpAt else { break }
            ignoring = nil
            return machine.handle(.hangup(status: 480, headers: ignored.byeHeaders), now: now)
        case .request(let m, _) where m.method == "REFER" && referNotifiedFirst != nil && machine.canSendInfo:
            guard let frag = referNotifiedFirst, let id = m.cseq?.sequence else { break }
            referNotifiedFirst = nil
            let notify = ReferNotification(id: id, progress: frag)
            let early = machine.handle(
                .sendRequest(
                    method: "NOTIFY", headers: notify.headers, contentType: SIPFrag.contentType, body: notify.body),
                now: now)
            return early + machine.handle(event, now: now)
        default:
            break
        }
        var actions = machine.handle(event, now: now)
        if case .start = event, withholdsTrying {
            actions.removeAll { if case .respond(let r, _) = $0 { r.statusCode == 100 } else { false } }
        }
        if let ignored = ignoredACK { actions = actions.map { onIgnoredClock(ignored, $0, machine, now: now) } }
        return actions
    }

    /// Starts ignoring at our 2xx to the INVITE and puts its retransmissions on `ignored`'s clock.
    private mutating func onIgnoredClock(
        _ ignored: IgnoredACK, _ action: InviteSessionMachine.Action, _ machine: InviteSessionMachine, now: Double
    ) -> InviteSessionMachine.Action {
        switch action {
        case .respond(let r, _):
            if let code = r.statusCode, (200...299).contains(code), r.cseq == machine.invite.cseq {
                ignoring = (ignored.t1, now + ignored.giveUpAfter)
            }
        case .startTimer(.responseRetransmit, _):
            guard let current = ignoring else { break }
            ignoring = (min(current.interval * 2, ignored.t2), current.giveUpAt)
            return .startTimer(.responseRetransmit, at: min(now + current.interval, current.giveUpAt))
        default:
            break
        }
        return action
    }
}
