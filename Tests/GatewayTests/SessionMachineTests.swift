import Gateway
import IrisAPI
import Testing

/// The session machine alone: no socket, no clock. Each case feeds inputs and checks the
/// events (names, statuses, SIP details, end reason, Iris error) and SIP actions.
@Suite struct SessionMachineTests {
    /// A compact picture of what the machine emitted, for table comparison.
    static func trace(_ actions: [SessionMachine.Action]) -> [String] {
        actions.map { a in
            switch a {
            case .emit(let e):
                switch e.event {
                case .onSessionSIPStatus:
                    var s = "status:\(e.status!.rawValue)"
                    if e.earlyMedia == true { s += "*" }
                    if let by = e.by { s += "(\(by))" }
                    if let sip = e.sip { s += "/\(sip.code)" }
                    return s
                case .onSessionError: return "error:\(e.code!)"
                case .onSessionEnded: return "ended:\(e.reason!.rawValue)" + (e.sip.map { "/\($0.code)" } ?? "")
                case .onStreamQualityIndicator: return "quality:\(e.quality!):\(e.codec!)"
                case .onNotification: return "notification:\(e.type!)"
                default: return e.event.rawValue
                }
            case .cancelInvite: return "CANCEL"
            case .hangup: return "BYE"
            case .tryNextProxy: return "next-proxy"
            case .startRingTimer: return "ring-timer"
            case .ring: return "180"
            case .answerInvite: return "200"
            case .rejectInvite(let s): return "reject:\(s)"
            case .sendHold(let h): return h ? "reINVITE:sendonly" : "reINVITE:sendrecv"
            case .finish: return "finish"
            }
        }
    }

    static func run(
        _ direction: SessionMachine.Direction, _ inputs: [SessionMachine.Input]
    ) -> (SessionMachine, [String]) {
        var m = SessionMachine(direction: direction, roomId: "r1", traceId: "t1")
        var out: [String] = []
        for (i, input) in inputs.enumerated() { out += trace(m.handle(input, now: Double(i))) }
        return (m, out)
    }

    static func sip(_ code: Int, _ reason: String = "", cause: Int? = nil) -> SIPDetails {
        SIPDetails(code: code, reason: reason, cause: cause)
    }
    static let answered = SessionMachine.Input.answered(sip(200, "OK"), codec: "PCMU", hd: false, at: 2)

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var inputs: [SessionMachine.Input]
        var expected: [String]
        var description: String { name }
    }

    static let start = ["onSessionCreated", "status:Initializing"]

    /// docs/events.md, "Outbound: SIP to events", one row per line.
    static let outboundRows: [Row] = [
        Row(
            name: "ringing then answer",
            inputs: [.started(notification: nil), .provisional(sip(180, "Ringing"), hasSDP: false), answered],
            expected: start + ["status:Connecting/180", "status:Connected/200", "quality:NonHD:PCMU"]),
        Row(
            name: "183 without SDP is Connecting",
            inputs: [.started(notification: nil), .provisional(sip(183), hasSDP: false)],
            expected: start + ["status:Connecting/183"]),
        Row(
            name: "183 with SDP is early media, reported once",
            inputs: [
                .started(notification: nil), .provisional(sip(183), hasSDP: true), .provisional(sip(183), hasSDP: true),
                .provisional(sip(180), hasSDP: false)
            ],
            expected: start + ["status:Connecting*/183", "onSessionEarlyMedia"]),
        Row(
            name: "repeated 180 reports once",
            inputs: [
                .started(notification: nil), .provisional(sip(180), hasSDP: false),
                .provisional(sip(180), hasSDP: false)
            ],
            expected: start + ["status:Connecting/180"]),
        Row(
            name: "404", inputs: [.started(notification: nil), .finalResponse(sip(404), proxiesLeft: true)],
            expected: start + ["status:Disconnected/404", "error:-407", "ended:failed/404", "finish"]),
        Row(
            name: "484", inputs: [.started(notification: nil), .finalResponse(sip(484), proxiesLeft: false)],
            expected: start + ["status:Disconnected/484", "error:-407", "ended:failed/484", "finish"]),
        Row(
            name: "604", inputs: [.started(notification: nil), .finalResponse(sip(604), proxiesLeft: false)],
            expected: start + ["status:Disconnected/604", "error:-407", "ended:failed/604", "finish"]),
        Row(
            name: "408", inputs: [.started(notification: nil), .finalResponse(sip(408), proxiesLeft: false)],
            expected: start + ["status:Disconnected/408", "error:-402", "ended:no-answer/408", "finish"]),
        Row(
            name: "480", inputs: [.started(notification: nil), .finalResponse(sip(480), proxiesLeft: false)],
            expected: start + ["status:Disconnected/480", "error:-402", "ended:no-answer/480", "finish"]),
        Row(
            name: "ring timeout: CANCEL, then 487 is no-answer",
            inputs: [
                .started(notification: nil), .provisional(sip(180), hasSDP: false), .ringTimeout,
                .finalResponse(sip(487), proxiesLeft: true)
            ],
            expected: start + [
                "status:Connecting/180", "CANCEL", "status:Disconnected/487", "error:-402", "ended:no-answer/487",
                "finish"
            ]),
        Row(
            name: "488: no common media, not unreachable",
            inputs: [.started(notification: nil), .finalResponse(sip(488, "Not Acceptable Here"), proxiesLeft: true)],
            expected: start + ["status:Disconnected/488", "error:-503", "ended:failed/488", "finish"]),
        Row(
            name: "606",
            inputs: [.started(notification: nil), .finalResponse(sip(606, "Not Acceptable"), proxiesLeft: false)],
            expected: start + ["status:Disconnected/606", "error:-503", "ended:failed/606", "finish"]),
        Row(
            name: "486", inputs: [.started(notification: nil), .finalResponse(sip(486, cause: 17), proxiesLeft: false)],
            expected: start + ["status:Disconnected/486", "ended:busy/486", "finish"]),
        Row(
            name: "600", inputs: [.started(notification: nil), .finalResponse(sip(600), proxiesLeft: false)],
            expected: start + ["status:Disconnected/600", "ended:busy/600", "finish"]),
        Row(
            name: "603", inputs: [.started(notification: nil), .finalResponse(sip(603), proxiesLeft: false)],
            expected: start + ["status:Disconnected/603", "ended:declined/603", "finish"]),
        Row(
            name: "403", inputs: [.started(notification: nil), .finalResponse(sip(403), proxiesLeft: true)],
            expected: start + ["status:Disconnected/403", "error:-417", "ended:failed/403", "finish"]),
        Row(
            name: "401 after our credentials",
            inputs: [.started(notification: nil), .finalResponse(sip(401), proxiesLeft: false)],
            expected: start + ["status:Disconnected/401", "error:-503", "ended:failed/401", "finish"]),
        Row(
            name: "503 with a proxy left fails over, then the last 503 ends -503",
            inputs: [
                .started(notification: nil), .finalResponse(sip(503), proxiesLeft: true),
                .finalResponse(sip(503), proxiesLeft: false)
            ],
            expected: start + ["next-proxy", "status:Disconnected/503", "error:-503", "ended:failed/503", "finish"]),
        Row(
            name: "no response fails over, then ends -412",
            inputs: [.started(notification: nil), .noResponse(proxiesLeft: true), .noResponse(proxiesLeft: false)],
            expected: start + ["next-proxy", "status:Disconnected/408", "error:-412", "ended:failed/408", "finish"]),
        Row(
            name: "a failed TLS connection fails over, then ends -412 with what failed",
            inputs: [
                .started(notification: nil),
                .transportFailed(SIPDetails(code: 503, reason: "TLS: a.test: certificate expired"), proxiesLeft: true),
                .transportFailed(SIPDetails(code: 503, reason: "TLS: b.test: certificate expired"), proxiesLeft: false)
            ],
            expected: start + ["next-proxy", "status:Disconnected/503", "error:-412", "ended:failed/503", "finish"]),
        Row(
            name: "close while ringing: CANCEL, 487 is canceled",
            inputs: [
                .started(notification: nil), .provisional(sip(180), hasSDP: false), .close,
                .finalResponse(sip(487), proxiesLeft: true)
            ],
            expected: start + [
                "status:Connecting/180", "CANCEL", "status:Disconnected/487", "ended:canceled/487", "finish"
            ]),
        Row(
            name: "close crossing a 200: BYE, canceled",
            inputs: [.started(notification: nil), .close, answered],
            expected: start + ["CANCEL", "BYE", "status:Disconnected/200", "ended:canceled/200", "finish"]),
        Row(
            name: "BYE from the carrier", inputs: [.started(notification: nil), answered, .remoteHangup(cause: 16)],
            expected: start + [
                "status:Connected/200", "quality:NonHD:PCMU", "status:Disconnected/200", "ended:completed/200", "finish"
            ]),
        Row(
            name: "close after answer: BYE, completed", inputs: [.started(notification: nil), answered, .close],
            expected: start + [
                "status:Connected/200", "quality:NonHD:PCMU", "BYE", "status:Disconnected", "ended:completed", "finish"
            ]),
        Row(
            name: "remote hold and resume",
            inputs: [.started(notification: nil), answered, .remoteHold(true), .remoteHold(true), .remoteHold(false)],
            expected: start + ["status:Connected/200", "quality:NonHD:PCMU", "status:Hold(remote)", "status:Connected"]),
        Row(
            name: "local hold waits for the 200",
            inputs: [
                .started(notification: nil), answered, .localHold(true), .localHoldConfirmed(true), .localHold(false),
                .localHoldConfirmed(false)
            ],
            expected: start + [
                "status:Connected/200", "quality:NonHD:PCMU", "reINVITE:sendonly", "status:Hold(local)",
                "reINVITE:sendrecv", "status:Connected"
            ]),
        Row(
            name: "refused hold is an error, not a status",
            inputs: [.started(notification: nil), answered, .localHold(true), .localHoldFailed(status: 488)],
            expected: start + ["status:Connected/200", "quality:NonHD:PCMU", "reINVITE:sendonly", "error:-104"]),
        Row(
            name: "no RTP: BYE, media-timeout", inputs: [.started(notification: nil), answered, .mediaTimeout],
            expected: start + [
                "status:Connected/200", "quality:NonHD:PCMU", "BYE", "error:-412", "status:Disconnected/408",
                "ended:media-timeout/408", "finish"
            ]),
        Row(
            name: "a 180 after the 200 is ignored",
            inputs: [.started(notification: nil), answered, .provisional(sip(180), hasSDP: false)],
            expected: start + ["status:Connected/200", "quality:NonHD:PCMU"]),
        Row(
            name: "G.722 answer is HD",
            inputs: [.started(notification: nil), .answered(sip(200), codec: "G722", hd: true, at: 1)],
            expected: start + ["status:Connected/200", "quality:HD:G722"]),
        Row(
            name: "nothing after the end",
            inputs: [
                .started(notification: nil), .finalResponse(sip(486), proxiesLeft: false), answered,
                .remoteHangup(cause: nil), .close
            ],
            expected: start + ["status:Disconnected/486", "ended:busy/486", "finish"]),
        // The ring timer counts from the target's first provisional response, not the INVITE.
        Row(
            name: "ring timer from the first provisional, once per target",
            inputs: [
                .started(notification: nil), .targetResponding, .provisional(sip(180), hasSDP: false), .targetResponding
            ],
            expected: start + ["ring-timer", "status:Connecting/180"]),
        Row(
            name: "a silent target left for the next: the next one's ring timer starts at its own response",
            inputs: [
                .started(notification: nil), .noResponse(proxiesLeft: true), .targetResponding,
                .provisional(sip(180), hasSDP: false), answered
            ],
            expected: start + [
                "next-proxy", "ring-timer", "status:Connecting/180", "status:Connected/200", "quality:NonHD:PCMU"
            ]),
        Row(
            name: "a target that responded then 503: the next target gets a ring timer of its own",
            inputs: [
                .started(notification: nil), .targetResponding, .finalResponse(sip(503), proxiesLeft: true),
                .targetResponding
            ],
            expected: start + ["ring-timer", "next-proxy", "ring-timer"]),
        Row(
            name: "no ring timer once the app closed, nor after the end",
            inputs: [
                .started(notification: nil), .close, .targetResponding, .finalResponse(sip(487), proxiesLeft: false),
                .targetResponding
            ],
            expected: start + ["CANCEL", "status:Disconnected/487", "ended:canceled/487", "finish"])
    ]

    @Test(arguments: outboundRows)
    func outbound(_ row: Row) {
        let (m, out) = Self.run(.outbound, row.inputs)
        #expect(out == row.expected)
        #expect(out.filter { $0.hasPrefix("ended:") }.count <= 1)
        if out.contains(where: { $0.hasPrefix("ended:") }) { #expect(m.isEnded) }
    }

    static let notify: SessionEvent = {
        var e = SessionEvent(event: .onNotification, roomId: "r1", traceId: "t1")
        e.type = "notify"
        return e
    }()
    static let inboundStart = ["onSessionCreated", "notification:notify", "status:Initializing", "180"]

    /// docs/events.md, "Inbound: SIP to events".
    static let inboundRows: [Row] = [
        Row(
            name: "join, ACK, BYE from the caller",
            inputs: [.started(notification: notify), .join, answered, .remoteHangup(cause: nil)],
            expected: inboundStart + [
                "200", "status:Connecting", "status:Connected/200", "quality:NonHD:PCMU", "status:Disconnected/200",
                "ended:completed/200", "finish"
            ]),
        Row(
            name: "reject", inputs: [.started(notification: notify), .reject(busy: false)],
            expected: inboundStart + ["reject:603", "status:Disconnected/603", "ended:rejected/603", "finish"]),
        Row(
            name: "reject busy", inputs: [.started(notification: notify), .reject(busy: true)],
            expected: inboundStart + ["reject:486", "status:Disconnected/486", "ended:rejected/486", "finish"]),
        Row(
            name: "no join: 480 and a cancel notification", inputs: [.started(notification: notify), .ringTimeout],
            expected: inboundStart + [
                "reject:480", "notification:cancel", "status:Disconnected/480", "ended:no-answer/480", "finish"
            ]),
        Row(
            name: "caller CANCEL", inputs: [.started(notification: notify), .remoteCancel],
            expected: inboundStart + ["notification:cancel", "status:Disconnected/487", "ended:canceled/487", "finish"]),
        Row(
            name: "join twice is ignored", inputs: [.started(notification: notify), .join, .join],
            expected: inboundStart + ["200", "status:Connecting"]),
        Row(
            name: "reject after join is ignored", inputs: [.started(notification: notify), .join, .reject(busy: false)],
            expected: inboundStart + ["200", "status:Connecting"])
    ]

    @Test(arguments: inboundRows)
    func inbound(_ row: Row) {
        let (_, out) = Self.run(.inbound, row.inputs)
        #expect(out == row.expected)
    }

    @Test func endedCarriesDurationFromAnswer() {
        var m = SessionMachine(direction: .outbound, roomId: "r", traceId: "t")
        _ = m.handle(.started(notification: nil), now: 0)
        _ = m.handle(.answered(Self.sip(200), codec: "PCMU", hd: false, at: 10), now: 10)
        let actions = m.handle(.remoteHangup(cause: 16), now: 15.5)
        let ended = actions.compactMap { a -> SessionEvent? in
            if case .emit(let e) = a, e.event == .onSessionEnded { return e }; return nil
        }
        #expect(ended.count == 1)
        #expect(ended.first?.durationSec == 5.5)
        #expect(ended.first?.sip?.cause == 16)
    }

    @Test(
        arguments: [
            (404, EndReason.failed, -407), (486, .busy, nil), (603, .declined, nil), (480, .noAnswer, -402),
            (500, .failed, -503), (420, .failed, -412)
        ] as [(Int, EndReason, Int?)])
    func classification(_ status: Int, _ reason: EndReason, _ code: Int?) {
        #expect(FinalResponseClass.classify(status: status).next == .end(reason, irisCode: code))
    }

    @Test func aTLSFailureSaysWhatFailed() {
        var m = SessionMachine(direction: .outbound, roomId: "r1", traceId: "t1")
        _ = m.handle(.started(notification: nil), now: 0)
        let events = m.handle(
            .transportFailed(
                SIPDetails(code: 503, reason: "TLS: carrier.test: certificate expired"), proxiesLeft: false), now: 1
        )
        .compactMap { a -> SessionEvent? in if case .emit(let e) = a { return e } else { return nil } }
        let error = events.first { $0.event == .onSessionError }
        #expect(error?.code == -412 && error?.message == "remote unreachable: TLS: carrier.test: certificate expired")
        #expect(events.last?.sip?.reason == "TLS: carrier.test: certificate expired")
    }

    @Test func a488SaysWhatHappened() {
        var m = SessionMachine(direction: .outbound, roomId: "r1", traceId: "t1")
        _ = m.handle(.started(notification: nil), now: 0)
        let error = m.handle(.finalResponse(Self.sip(488, "Not Acceptable Here"), proxiesLeft: false), now: 1)
            .compactMap { a -> String? in
                if case .emit(let e) = a, e.event == .onSessionError { return e.message }
                return nil
            }.first
        #expect(error?.contains("no common codec or media security") == true, "\(String(describing: error))")
    }
}
