import Foundation
import SDP
import Testing

@testable import SIP

/// Messages for the `InviteSessionMachine` tables, written as they look on the wire (a
/// carrier at 198.51.100.7, us at 192.0.2.10) and parsed with `SIPMessage.parse`.
enum Wire {
    static let callID = "3848276298220188511@192.0.2.10"
    static let theirCallID = "a84b4c76e66710@198.51.100.7"
    static let sdpBody = """
        v=0
        o=carrier 2890844526 2890844526 IN IP4 198.51.100.7
        s=-
        c=IN IP4 198.51.100.7
        t=0 0
        m=audio 49170 RTP/AVP 0 101
        a=rtpmap:0 PCMU/8000
        a=rtpmap:101 telephone-event/8000
        a=sendrecv

        """

    static func parse(_ text: String, body: String = "") -> SIPMessage {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        var head = lines.joined(separator: "\r\n")
        let crlfBody = body.replacingOccurrences(of: "\n", with: "\r\n")
        if !body.isEmpty { head += "\r\nContent-Type: application/sdp" }
        head += "\r\nContent-Length: \(crlfBody.utf8.count)\r\n\r\n" + crlfBody
        return try! SIPMessage.parse(Array(head.utf8))
    }

    static var sdp: SessionDescription {
        try! SessionDescription.parse(Array(sdpBody.replacingOccurrences(of: "\n", with: "\r\n").utf8))
    }

    /// Our SDP (an offer or an answer; the machine does not read it).
    static var ourSDP: SessionDescription {
        let text =
            "v=0\r\no=irisgw 1 1 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
        return try! SessionDescription.parse(Array(text.utf8))
    }

    // MARK: We call (UAC)

    /// Our INVITE as `SIPUserAgent.invite` builds it: the driver adds Via and User-Agent
    /// (the parser wants a Via, so it is removed after parsing).
    static let ourInvite = withoutVia(
        parse(
            """
            INVITE sip:+15551230001@198.51.100.7 SIP/2.0
            Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK-removed
            From: <sip:+15557654321@gw.example.com>;tag=ours1
            To: <sip:+15551230001@198.51.100.7>
            Call-ID: \(callID)
            CSeq: 1 INVITE
            Contact: <sip:irisgw@192.0.2.10:5060>
            Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, PRACK, UPDATE, INFO
            Supported: replaces, 100rel, timer
            """))

    static func withoutVia(_ m: SIPMessage) -> SIPMessage {
        var copy = m
        copy.removeHeaders(.via)
        return copy
    }

    /// The carrier's response to our INVITE (or to a request we sent in the dialog).
    static func response(
        _ status: Int, _ reason: String, cseq: UInt32 = 1, method: String = "INVITE", tag: String? = "c1",
        rseq: UInt32? = nil, sdp: Bool = false, extra: [String] = []
    ) -> SIPMessage {
        var lines = [
            "SIP/2.0 \(status) \(reason)",
            "Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK74bf9;rport=5060;received=192.0.2.10",
            "From: <sip:+15557654321@gw.example.com>;tag=ours1",
            "To: <sip:+15551230001@198.51.100.7>" + (tag.map { ";tag=\($0)" } ?? ""),
            "Call-ID: \(callID)",
            "CSeq: \(cseq) \(method)"
        ]
        if status > 100 && status < 300 && method == "INVITE" {
            lines.append("Contact: <sip:+15551230001@198.51.100.7:5060>")
        }
        if let rseq { lines += ["Require: 100rel", "RSeq: \(rseq)"] }
        lines += extra
        return parse(lines.joined(separator: "\n"), body: sdp ? sdpBody : "")
    }

    /// A request the carrier sends in the dialog of our call (To carries our tag).
    static func requestToUs(
        _ method: String, cseq: UInt32, tag: String = "c1", sdp: Bool = false, extra: [String] = []
    ) -> SIPMessage {
        let lines =
            [
                "\(method) sip:irisgw@192.0.2.10:5060 SIP/2.0",
                "Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-\(method.lowercased())-\(cseq)",
                "Max-Forwards: 70",
                "From: <sip:+15551230001@198.51.100.7>;tag=\(tag)",
                "To: <sip:+15557654321@gw.example.com>;tag=ours1",
                "Call-ID: \(callID)",
                "CSeq: \(cseq) \(method)",
                "Contact: <sip:+15551230001@198.51.100.7:5060>"
            ] + extra
        return parse(lines.joined(separator: "\n"), body: sdp ? sdpBody : "")
    }

    // MARK: They call (UAS)

    /// A carrier's INVITE to us, with an offer.
    static func theirInvite(extra: [String] = ["Supported: 100rel, timer"], sdp: Bool = true) -> SIPMessage {
        let lines =
            [
                "INVITE sip:+15557654321@192.0.2.10:5060 SIP/2.0",
                "Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bKnashds8;rport=5060",
                "Max-Forwards: 70",
                "From: \"Carrier\" <sip:+15551230001@198.51.100.7>;tag=9fxced76sl",
                "To: <sip:+15557654321@192.0.2.10>",
                "Call-ID: \(theirCallID)",
                "CSeq: 101 INVITE",
                "Contact: <sip:+15551230001@198.51.100.7:5060>",
                "Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, PRACK, UPDATE"
            ] + extra
        return parse(lines.joined(separator: "\n"), body: sdp ? sdpBody : "")
    }

    /// A request from the caller in the dialog of its call (To carries our tag `uas1`).
    static func requestFromCaller(_ method: String, cseq: UInt32, sdp: Bool = false, extra: [String] = []) -> SIPMessage
    {
        let lines =
            [
                "\(method) sip:irisgw@192.0.2.10:5060 SIP/2.0",
                "Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK-\(method.lowercased())-\(cseq)",
                "Max-Forwards: 70",
                "From: \"Carrier\" <sip:+15551230001@198.51.100.7>;tag=9fxced76sl",
                "To: <sip:+15557654321@192.0.2.10>;tag=uas1",
                "Call-ID: \(theirCallID)",
                "CSeq: \(cseq) \(method)"
            ] + extra
        return parse(lines.joined(separator: "\n"), body: sdp ? sdpBody : "")
    }

    /// The caller's response to a request we sent in its dialog.
    static func responseFromCaller(
        _ status: Int, _ reason: String, cseq: UInt32, method: String, extra: [String] = []
    ) -> SIPMessage {
        let lines =
            [
                "SIP/2.0 \(status) \(reason)",
                "Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK9a1e",
                "From: <sip:+15557654321@192.0.2.10>;tag=uas1",
                "To: \"Carrier\" <sip:+15551230001@198.51.100.7>;tag=9fxced76sl",
                "Call-ID: \(theirCallID)",
                "CSeq: \(cseq) \(method)"
            ] + extra
        return parse(lines.joined(separator: "\n"))
    }
}

/// Builds machines with fixed identifiers and randomness, feeds them steps and renders their
/// actions as short lines for the tables.
enum Bench {
    typealias M = InviteSessionMachine
    static let carrier = SIPPeer(transport: .udp, address: SocketAddress(host: "198.51.100.7", port: 5060))
    static func tx(_ id: Int32) -> ServerTransaction { ServerTransaction(id: id, peer: carrier) }
    /// The lowest value of every range: glare back-off 2.1 s as Call-ID owner, 0 s otherwise.
    static let fixed = M.Randomness(integer: { $0.lowerBound }, cnonce: { "0a4f113b" })

    static func configuration(
        sessionTimer: SessionTimerPolicy? = nil, prack: SIPUserAgentConfiguration.PRACKPolicy = .supported,
        failoverTimeout: Double? = nil
    ) -> M.Configuration {
        M.Configuration(
            policy: SIPCallPolicy(prack: prack, sessionTimer: sessionTimer, failoverTimeout: failoverTimeout),
            contact: SIPURI(user: "irisgw", host: "192.0.2.10", port: 5060), serverHeader: "irisgw/0.1")
    }

    static func uac(
        credentials: DigestCredentials? = nil, sessionTimer: SessionTimerPolicy? = nil, failoverTimeout: Double? = nil
    ) -> M {
        M(
            outgoing: Wire.ourInvite, sdp: Wire.ourSDP, credentials: credentials,
            configuration: configuration(sessionTimer: sessionTimer, failoverTimeout: failoverTimeout),
            randomness: fixed)
    }

    static func uas(
        _ invite: SIPMessage = Wire.theirInvite(), sessionTimer: SessionTimerPolicy? = nil,
        prack: SIPUserAgentConfiguration.PRACKPolicy = .supported
    ) -> M {
        M(
            incoming: invite, transaction: tx(1), localTag: "uas1", firstRSeq: 1, localSequence: 500,
            configuration: configuration(sessionTimer: sessionTimer, prack: prack), randomness: fixed)
    }

    /// One input and the actions it must produce, rendered by `line`.
    struct Step: Sendable {
        var at: Double
        var event: M.Event
        var expect: [String]
        init(_ at: Double, _ event: M.Event, _ expect: [String]) {
            self.at = at
            self.event = event
            self.expect = expect
        }
    }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var steps: [Step]
        var final: M.State
        var description: String { name }
        init(_ name: String, _ steps: [Step], final: M.State) {
            self.name = name
            self.steps = steps
            self.final = final
        }
    }

    /// Runs `row` on `machine` (through `misbehaviour`, as `SIPCall` drives it), checking each
    /// step's actions and the final state.
    static func check(_ row: Row, on machine: M, through misbehaviour: TestPeerMisbehaviour = TestPeerMisbehaviour()) {
        var m = machine
        var filter = misbehaviour
        for (i, step) in row.steps.enumerated() {
            let out = filter.handle(step.event, on: &m, now: step.at).map(line)
            #expect(out == step.expect, "step \(i) at \(step.at)")
        }
        #expect(m.state == row.final)
    }

    static func time(_ t: Double) -> String {
        let ms = (t * 1000).rounded() / 1000
        return ms == ms.rounded() ? String(Int(ms)) : String(ms)
    }

    /// `send BYE 2 to=c1`, `ACK 1 to=c1 kept`, `respond 200 BYE`, `start responseRetransmit@0.5`,
    /// `report ended canceled` ...
    static func line(_ action: M.Action) -> String {
        func request(_ m: SIPMessage) -> String {
            var s = "\(m.method) \(m.cseq?.sequence ?? 0)"
            if let tag = m.to?.tag { s += " to=\(tag)" }
            if let rack = m[.rack] { s += " RAck:\(rack)" }
            return s
        }
        switch action {
        case let .send(m, _, _): return "send " + request(m)
        case let .sendACK(m, _, remember): return request(m) + (remember ? " kept" : "")
        case .resendACK: return "ACK again"
        case let .respond(r, _): return "respond \(r.statusCode ?? 0) \(r.method)"
        case .retransmit(let r): return "retransmit \(r.statusCode ?? 0) \(r.method)"
        case let .startTimer(t, at): return "start \(t)@\(time(at))"
        case .cancelTimer(let t): return "stop \(t)"
        case .terminateInviteTransaction: return "terminate INVITE"
        case .askForAnswer(let offer, _): return offer == nil ? "ask for an offer" : "ask for an answer"
        case .askForResponse(let m, _): return "ask for a response to \(m.method)"
        case .remove: return "remove"
        case .report(let r):
            switch r {
            case .incomingCall: return "report incoming"
            case .provisional(let m): return "report provisional \(m.statusCode ?? 0)"
            case .trying: return "report trying"
            case .connected: return "report connected"
            case .answer: return "report answer"
            case .request(let m): return "report request \(m.method)"
            case .offerCompleted(let s): return "report offerCompleted \(s)"
            case let .requestCompleted(method, cseq, status, _): return "report \(method) \(cseq) completed \(status)"
            case let .ended(end, _): return "report ended \(end)"
            }
        }
    }
}
