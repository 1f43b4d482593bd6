// libFuzzer harness `fuzz-sip-session`, compiled into the SIP module with the other SIP
// harnesses (FuzzSIPTargets.swift) by `make fuzz`. Sequences of SIP messages go to one live
// SIPUserAgent, through its own receive path, so that transactions (osip), dialogs and
// INVITE sessions run, not only the parser; the clock is virtual (CFuzzSupport), so timers
// and retransmissions fire when the input says and in the same order every run.
//
// An input is a script of chunks, each opened by a directive line starting with `@@`
// (bytes before the first one are one `recv raw` chunk, so any SIP message is an input):
//
//   @@ recv [raw] [tcp] [peer=N]   the text below, SIPp keywords filled, from peer N (0-3;
//                                  3 is a source the agent does not trust). Without `raw`
//                                  the text is cleaned as SIPp does (indentation dropped,
//                                  CRLF line ends, [len] computed).
//   @@ again                       the last recv, byte for byte (a retransmission)
//   @@ wait MS                     the clock moves MS milliseconds, in steps; timers fire
//   @@ call [nosdp] [auth] [notimer] [100rel] [tcp] [peer=N]
//                                  the agent places a call to peer N
//   @@ request [METHOD] [peer=N]   the agent sends an OPTIONS (or METHOD) request outside a
//                                  dialog (a non-INVITE client transaction); `options` too
//   @@ ring [sdp] [reliable] | answer [nosdp] | reject [STATUS] | hangup [STATUS]
//   @@ reinvite [sendonly|recvonly|inactive|sendrecv]
//                                  acts on the latest call (the agent's side)
//   @@ mode auto|ring|early|none|reject [STATUS] [reliable]
//                                  what the agent does with the next incoming calls: ring
//                                  and answer (default), ring only, 183 with SDP then
//                                  answer, nothing, or reject; `reliable`: its provisional
//                                  responses ask for PRACK when the caller supports 100rel
//   @@ offers accept|refuse        answers to re-INVITE/UPDATE/PRACK offers (refuse: 488)
//   @@ capture NAME HEADER[:|^|~TEXT|#|;PARAM|@uri|@host] [from=KIND]
//                                  SIPp's <ereg> and <assignstr>: [$NAME] becomes HEADER's
//                                  value (after a space, as SIPp has it, or after ": " (^),
//                                  as it has it for a header named without its colon), its
//                                  lines as [last_HEADER:] gives them (:), the value from TEXT on (~),
//                                  its first number (#), a parameter's value, or the URI of
//                                  an address (with or without its scheme), in the agent's
//                                  latest message of KIND (a method or status code; any when
//                                  absent)
//   @@ # TEXT                      a comment
//
// Keywords are SIPp's, seen from the peer: [remote_ip] [remote_port] are the agent's,
// [local_ip] [local_port] the peer's; [call_id] [branch] [branch-N] [cseq] [len] [pid]
// [call_number] [service] [transport] [media_ip] [media_port] [peer_tag_param] [next_url]
// [last_Header:] (header lines of the last message the agent sent) [last_Request_URI] [$NAME];
// and [rack] (RSeq, CSeq number and method of the agent's last reliable provisional).
// Fuzz/seeds/make-sip-session-seeds.py writes SIPp scenarios in this form.
//
// FUZZ_TRACE=1 in the environment prints every chunk and every message both ways, which is
// how to read a reproducer: FUZZ_TRACE=1 .build/fuzz/fuzz-sip-session CRASH-FILE.
//
// Invariants (a precondition failure is a finding): nothing crashes; every message the agent
// sends parses (but a stateless 400 to a message that does not, which echoes its headers);
// after each chunk the agent holds no more calls than chunks so far and no more
// than 8 transactions per chunk; each call reports its end at most once and nothing after
// it; at the end, with every call hung up, all calls and transactions are gone within 240 s
// of virtual time, and every call reported its end exactly once.
import CFuzzSupport
import Glibc
import SDP

/// What `fuzz-sip-session` runs for each input (called from FuzzSIPTargets.swift).
func fuzzSIPSession(_ bytes: [UInt8]) {
    SessionHarness.shared.run(Script(bytes))
}

/// One input, cut into chunks.
struct Script {
    struct Chunk {
        var verb: String
        var words: [String]
        var body: [UInt8]
        func has(_ word: String) -> Bool { words.contains(word) }
        func value(_ key: String) -> String? {
            words.first(where: { $0.hasPrefix(key + "=") }).map { String($0.dropFirst(key.count + 1)) }
        }
        var number: Int? { words.lazy.compactMap { Int($0) }.first }
    }

    static let maxChunks = 48
    var chunks: [Chunk] = []

    init(_ bytes: [UInt8]) {
        let at = UInt8(ascii: "@"), newline = UInt8(ascii: "\n")
        // Directive lines: "@@" at the very start or right after a newline.
        var starts: [Int] = []
        var i = 0
        while i + 1 < bytes.count {
            if bytes[i] == at, bytes[i + 1] == at, i == 0 || bytes[i - 1] == newline { starts.append(i) }
            i += 1
        }
        let firstDirective = starts.first ?? bytes.count
        if firstDirective > 0 {
            let raw = Array(bytes[0..<(starts.isEmpty ? bytes.count : firstDirective - 1)])
            chunks.append(Chunk(verb: "recv", words: ["raw"], body: raw))
        }
        for (n, start) in starts.enumerated() where chunks.count < Self.maxChunks {
            let end = n + 1 < starts.count ? starts[n + 1] - 1 : bytes.count
            var lineEnd = start
            while lineEnd < end, bytes[lineEnd] != newline { lineEnd += 1 }
            let line = String(decoding: bytes[(start + 2)..<lineEnd], as: UTF8.self)
            var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            let verb = words.isEmpty ? "recv" : words.removeFirst().lowercased()
            let body = lineEnd < end ? Array(bytes[(lineEnd + 1)..<end]) : []
            chunks.append(Chunk(verb: verb, words: words, body: body))
        }
    }
}

/// The agent, its delegate, and what one input has done so far. Everything but `run` and the
/// clock steps executes on the agent's loop (inside `loop.sync`).
final class SessionHarness: SIPUserAgentDelegate, SIPCallDelegate, @unchecked Sendable {
    static let shared = SessionHarness()

    let ua: SIPUserAgent
    let endpoint: AnsweringEndpoint
    let agent: SocketAddress
    let tracing = getenv("FUZZ_TRACE") != nil

    enum Mode: Equatable { case auto, ring, early, none, reject(Int) }

    // One input's state, reset by `reset()`.
    var mode = Mode.auto
    var reliableRing = false
    var refuseOffers = false
    var calls: [SIPCall] = []
    var ends: [ObjectIdentifier: Int] = [:]
    var lastSent: SIPMessage?
    /// What the agent sent in this input, newest last (the latest 64).
    var sentLog: [SIPMessage] = []
    var variables: [String: String] = [:]
    var agentTag: String?
    var nextURL: String?
    var rack: String?
    var previous: (bytes: [UInt8], peer: SIPPeer)?
    var outgoingCallID: String?
    var recvCount = 0
    var cseq = 0
    /// True while the agent handles a message its parser refuses: its stateless 400 copies
    /// that message's Via, From, To, Call-ID and CSeq as they are, so it need not parse.
    var answeringUnparsable = false

    private init() {
        fuzz_clock_freeze()
        do {
            // The defaults: PRACK supported, session timers, T1 0.5 s, the stock defence.
            ua = try SIPUserAgent(configuration: SIPUserAgentConfiguration())
            agent = try ua.start()[0].address
        } catch {
            fatalError("fuzz-sip-session: cannot start the agent: \(error)")
        }
        // On the loop, which owns the agent's state from `start` on.
        endpoint = ua.loop.sync { [ua] in AnsweringEndpoint(ua: ua) }
        let trusted = Self.peerHost(0)
        ua.loop.sync { [self] in
            ua.delegate = self
            ua.isTrustedSource = { $0.host == trusted }
            ua.transports.sendOverride = { [unowned self] bytes, peer in self.agentSent(bytes, to: peer) }
        }
    }

    static func peerHost(_ n: Int) -> String { n == 3 ? "127.0.0.9" : "127.0.0.1" }

    static func peer(_ chunk: Script.Chunk) -> SIPPeer {
        let n = min(3, max(0, Int(chunk.value("peer") ?? "0") ?? 0))
        return SIPPeer(
            transport: chunk.has("tcp") ? .tcp : .udp, address: SocketAddress(host: peerHost(n), port: 5070 + n))
    }

    // MARK: Running an input (fuzzer thread)

    func run(_ script: Script) {
        for (index, chunk) in script.chunks.enumerated() {
            if chunk.verb == "wait" {
                advance(milliseconds: min(max(chunk.number ?? 500, 0), 4_000_000))
                ua.loop.sync { [self] in checkBounds(chunks: index + 1) }
            } else {
                ua.loop.sync { [self] in
                    perform(chunk)
                    checkBounds(chunks: index + 1)
                }
            }
        }
        ua.loop.sync { [self] in for call in calls { call.hangup() } }
        // Up to 240 s in 8 s steps, each checked in the loop turn after the last one's timers.
        var rounds = 0
        while rounds < 30,
            !ua.loop.sync({ [self] in
                if ua.transactions.count == 0 && ua.activeCallCount == 0 { return true }
                trace("   (clock +8000 ms)")
                fuzz_clock_advance(8_000_000_000)
                return false
            })
        {
            rounds += 1
        }
        ua.loop.sync { [self] in
            checkQuiet()
            reset()
            // Past every ban, rate window and merged-request memory, so inputs do not meet.
            fuzz_clock_advance(70_000_000_000)
        }
    }

    /// Moves the clock on the loop: in the same loop turn, after this work, the timers now
    /// due fire and osip's pump runs; whatever the fuzzer thread asks next runs in a later
    /// turn. The clock moves nowhere else, so the order of events is the same every run.
    func step(nanoseconds: Int64) {
        trace("   (clock +\(nanoseconds / 1_000_000) ms)")
        ua.loop.sync { fuzz_clock_advance(nanoseconds) }
    }

    /// Moves the clock in up to 8 steps (none shorter than 500 ms), so retransmission
    /// timers fire about as often as they would.
    func advance(milliseconds: Int) {
        var remaining = Int64(milliseconds) * 1_000_000
        let stride = max(remaining / 8, 500_000_000)
        while remaining > 0 {
            let d = min(stride, remaining)
            step(nanoseconds: d)
            remaining -= d
        }
    }

    // MARK: Chunks (loop)

    func trace(_ text: @autoclosure () -> String) {
        guard tracing else { return }
        let line = Array((text() + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    func perform(_ chunk: Script.Chunk) {
        if chunk.verb != "recv" { trace("@@ \(chunk.verb) \(chunk.words.joined(separator: " "))") }
        switch chunk.verb {
        case "again":
            if let previous {
                trace("--> agent again")
                deliver(previous.bytes, from: previous.peer)
            }
        case "call":
            placeCall(chunk)
        case "#":
            break
        case "capture":
            capture(chunk)
        case "request", "options", "register":
            let peer = Self.peer(chunk)
            let uri = SIPURI(user: "service", host: peer.address.host, port: peer.address.port)
            var method =
                chunk.verb == "request"
                ? chunk.words.first(where: { !$0.contains("=") && $0 != "tcp" })?.uppercased() ?? "OPTIONS"
                : chunk.verb.uppercased()
            // The agent's own requests outside a dialog; an INVITE goes through `call`.
            if !["OPTIONS", "REGISTER", "INFO", "MESSAGE", "NOTIFY", "SUBSCRIBE"].contains(method) {
                method = "OPTIONS"
            }
            ua.sendRequest(
                method, to: uri, peer: peer,
                from: NameAddress(uri: SIPURI(user: "irisgw", host: agent.host, port: agent.port))
            ) { _ in }
        case "ring":
            guard let call = calls.last else { return }
            call.ring(sdp: chunk.has("sdp") ? answer(for: call) : nil, reliable: chunk.has("reliable") ? true : nil)
        case "answer":
            guard let call = calls.last else { return }
            call.answer(sdp: chunk.has("nosdp") ? nil : answer(for: call))
        case "reject":
            calls.last?.reject(status: status(chunk, default: 486))
        case "hangup", "cancel", "bye":
            calls.last?.hangup(status: status(chunk, default: 480))
        case "reinvite":
            guard let call = calls.last else { return }
            let sdp = call.localSDP ?? endpoint.makeOffer()
            let direction: MediaDirection =
                chunk.has("sendonly")
                ? .sendonly
                : chunk.has("recvonly")
                    ? .recvonly
                    : chunk.has("inactive") ? .inactive : .sendrecv
            var offer = sdp.redirected(direction)
            offer.origin = sdp.origin.incrementingVersion()
            call.reinvite(sdp: offer)
        case "mode":
            reliableRing = chunk.has("reliable")
            switch chunk.words.first?.lowercased() {
            case "ring": mode = .ring
            case "early": mode = .early
            case "none": mode = .none
            case "reject": mode = .reject(status(chunk, default: 486))
            default: mode = .auto
            }
        case "offers":
            refuseOffers = chunk.has("refuse")
        default:
            receive(chunk)
        }
    }

    /// A status code from the chunk's words, kept to what the agent may send (3xx-6xx).
    func status(_ chunk: Script.Chunk, default value: Int) -> Int {
        guard let n = chunk.number, (300...699).contains(n) else { return value }
        return n
    }

    func receive(_ chunk: Script.Chunk) {
        let peer = Self.peer(chunk)
        recvCount += 1
        // SIPp's [cseq] moves on with each request it sends (not with ACK or CANCEL).
        let method = String(
            decoding: chunk.body.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A })
                .prefix(while: { $0 > 0x20 }), as: UTF8.self)
        if !method.isEmpty, !method.hasPrefix("SIP/"), method != "ACK", method != "CANCEL" { cseq += 1 }
        let bytes = chunk.has("raw") ? expand(chunk.body, peer: peer) : sippMessage(chunk.body, peer: peer)
        previous = (bytes, peer)
        trace("--> agent from \(peer)\n" + String(decoding: bytes, as: UTF8.self))
        deliver(bytes, from: peer)
    }

    func deliver(_ bytes: [UInt8], from peer: SIPPeer) {
        answeringUnparsable =
            (try? SIPMessage.parse(bytes, framing: peer.transport == .udp ? .datagram : .stream)) == nil
        ua.receive(bytes, from: peer, at: SocketAddress(host: "127.0.0.1", port: 5060))
        answeringUnparsable = false
    }

    func placeCall(_ chunk: Script.Chunk) {
        let peer = Self.peer(chunk)
        let uri = SIPURI(user: "service", host: peer.address.host, port: peer.address.port)
        let base = ua.configuration.callPolicy
        let policy = SIPCallPolicy(
            prack: chunk.has("100rel") ? .required : base.prack,
            sessionTimer: chunk.has("notimer") ? nil : base.sessionTimer)
        let call = ua.invite(
            requestURI: uri, from: NameAddress(uri: SIPURI(user: "irisgw", host: agent.host, port: agent.port)),
            to: NameAddress(uri: uri), peer: peer, sdp: chunk.has("nosdp") ? nil : endpoint.makeOffer(),
            credentials: chunk.has("auth") ? DigestCredentials(username: "alice", password: "secret") : nil,
            policy: policy, delegate: self)
        calls.append(call)
        outgoingCallID = call.callID
    }

    func answer(for call: SIPCall) -> SessionDescription? {
        if let offer = call.remoteSDP { return endpoint.makeAnswer(to: offer) }
        return endpoint.makeOffer()
    }

    // MARK: What the agent sends (loop)

    func agentSent(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        trace("<-- agent to \(peer)\n" + String(decoding: bytes, as: UTF8.self))
        let message: SIPMessage
        do {
            message = try SIPMessage.parse(bytes, framing: peer.transport == .udp ? .datagram : .stream)
        } catch {
            if answeringUnparsable { return true }
            fatalError("the agent sent a message its own parser refuses (\(error)):\n\(Self.printable(bytes))")
        }
        lastSent = message
        sentLog.append(message)
        if sentLog.count > 64 { sentLog.removeFirst() }
        if let tag = message.isRequest ? message.from?.tag : message.to?.tag { agentTag = tag }
        if let contact = message.contacts.first { nextURL = contact.uri.serialize() }
        if let rseq = message.rseq, let cseq = message.cseq { rack = "\(rseq) \(cseq.sequence) \(cseq.method)" }
        return true
    }

    /// Bytes as text, control bytes other than CR LF shown as \xNN.
    static func printable(_ bytes: [UInt8]) -> String {
        var s = ""
        for b in bytes {
            if b == 0x0A || b == 0x0D || (b >= 0x20 && b < 0x7F) {
                s.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                s += "\\x" + String(b, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return s
    }

    // MARK: The delegate (loop)

    func track(_ call: SIPCall) {
        calls.append(call)
        call.delegate = self
    }

    func checkAlive(_ call: SIPCall, _ what: String) {
        invariant(ends[ObjectIdentifier(call)] == nil, "\(call.summary) reported \(what) after its end")
    }

    func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) {
        track(call)
        let reliable: Bool? = reliableRing ? true : nil
        switch mode {
        case .none:
            return
        case .reject(let status):
            call.ring(reliable: reliable)
            call.reject(status: status)
        case .ring:
            call.ring(reliable: reliable)
        case .early:
            guard let sdp = answer(for: call) else { return call.reject(status: 488) }
            call.ring(sdp: sdp, reliable: reliable)
            call.answer(sdp: sdp)
        case .auto:
            guard let sdp = answer(for: call) else { return call.reject(status: 488) }
            call.ring(reliable: reliable)
            call.answer(sdp: sdp)
        }
    }

    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {
        checkAlive(call, "a provisional response")
    }
    func call(_ call: SIPCall, didConnect message: SIPMessage) { checkAlive(call, "a connection") }
    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {
        checkAlive(call, "an answer")
    }
    func call(_ call: SIPCall, didReceiveRequest request: SIPMessage) { checkAlive(call, "a request") }
    func call(_ call: SIPCall, didCompleteOffer status: Int) { checkAlive(call, "an offer's outcome") }

    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        checkAlive(call, "an offer")
        if refuseOffers { return nil }
        guard let offer else { return call.localSDP.map { $0.redirected(.sendrecv) } ?? endpoint.makeOffer() }
        return endpoint.makeAnswer(to: offer)
    }

    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        let id = ObjectIdentifier(call)
        invariant(ends[id] == nil, "\(call.summary) reported its end twice: \(end) after an earlier end")
        ends[id] = 1
    }

    // MARK: Invariants (loop)

    func checkBounds(chunks: Int) {
        invariant(ua.activeCallCount <= chunks, "\(ua.activeCallCount) calls after \(chunks) chunks")
        invariant(ua.transactions.count <= 8 * chunks, "\(ua.transactions.count) transactions after \(chunks) chunks")
        invariant(
            ua.transactions.serverCount <= ua.configuration.defence.maxServerTransactions,
            "\(ua.transactions.serverCount) server transactions, over the cap")
    }

    func checkQuiet() {
        let states = calls.map { "\($0.summary): \($0.state)" }.joined(separator: "; ")
        invariant(
            ua.transactions.count == 0,
            "\(ua.transactions.count) transactions left 240 s after every call was hung up: "
                + "\(ua.transactions.liveSummary.joined(separator: "; ")) (calls: \(states))")
        invariant(
            ua.activeCallCount == 0, "\(ua.activeCallCount) calls left 240 s after every call was hung up (\(states))")
        for call in calls {
            invariant(
                ends[ObjectIdentifier(call)] == 1, "\(call.summary) ended without reporting it (state \(call.state))")
        }
    }

    func reset() {
        mode = .auto
        reliableRing = false
        refuseOffers = false
        calls = []
        ends = [:]
        lastSent = nil
        sentLog = []
        variables = [:]
        agentTag = nil
        nextURL = nil
        rack = nil
        previous = nil
        outgoingCallID = nil
        recvCount = 0
        cseq = 0
    }

    // MARK: SIPp keywords (loop)

    /// `@@ capture NAME SPEC [from=KIND]`, SIPp's <ereg> on a message it received.
    func capture(_ chunk: Script.Chunk) {
        let plain = chunk.words.filter { !$0.hasPrefix("from=") }
        guard plain.count >= 2 else { return }
        let kind = chunk.value("from")
        var spec = Substring(plain[1])
        var from: String? = nil
        var number = false
        var parameter: String? = nil
        var uri: Substring? = nil
        let line = spec.hasSuffix(":")
        let colon = spec.hasSuffix("^")
        if colon { spec = spec.dropLast() }
        if let tilde = spec.firstIndex(of: "~") {
            from = String(spec[spec.index(after: tilde)...])
            spec = spec[..<tilde]
        } else if let semi = spec.firstIndex(of: ";") {
            parameter = String(spec[spec.index(after: semi)...]).lowercased()
            spec = spec[..<semi]
        } else if let at = spec.firstIndex(of: "@") {
            uri = spec[spec.index(after: at)...]
            spec = spec[..<at]
        } else if spec.hasSuffix("#") {
            number = true
            spec = spec.dropLast()
        }
        let wanted = SIPHeaderName(String(spec.filter { $0 != ":" && $0 != " " }))
        let message = sentLog.last(where: { m in
            guard let kind else { return true }
            return m.isRequest ? m.method.caseInsensitiveCompare(kind) : m.statusCode.map(String.init) == kind
        })
        guard let value = message?.headers.first(where: { $0.name == wanted })?.value else { return }
        if let uri {
            guard let address = try? NameAddress.parse(value) else { return }
            var text = address.uri.serialize()
            if uri == "host", let colon = text.firstIndex(of: ":") { text = String(text[text.index(after: colon)...]) }
            variables[plain[0]] = text
        } else if let parameter {
            let lower = value.lowercased()
            guard let r = lower.range(of: ";" + parameter + "=") ?? lower.range(of: parameter + "=") else { return }
            let rest = value[r.upperBound...]
            variables[plain[0]] = String(rest.prefix(while: { $0 != ";" && $0 != "," && $0 != ">" && $0 != " " }))
        } else if line {
            variables[plain[0]] = message?.headers.filter { $0.name == wanted }.map {
                "\($0.name.canonical): \($0.value)"
            }
            .joined(separator: "\r\n")
        } else if let from {
            guard let r = value.range(of: from) else { return }
            variables[plain[0]] = String(value[r.lowerBound...])
        } else if number {
            let digits = value.drop(while: { !$0.isNumber }).prefix(while: { $0.isNumber })
            variables[plain[0]] = String(digits)
        } else {
            variables[plain[0]] = (colon ? ": " : " ") + value
        }
    }

    /// A SIPp `<send>` text as SIPp sends it: each line's indentation dropped, CRLF line
    /// ends, blank lines around it removed, keywords filled, [len] the body's length.
    func sippMessage(_ text: [UInt8], peer: SIPPeer) -> [UInt8] {
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line -> [UInt8] in
            var l = ArraySlice(line)
            while let f = l.first, f == 0x20 || f == 0x09 { l = l.dropFirst() }
            while let b = l.last, b == 0x0D || b == 0x20 || b == 0x09 { l = l.dropLast() }
            return Array(l)
        }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let split = lines.firstIndex(where: { $0.isEmpty }) ?? lines.count
        let bodyLines = split < lines.count ? Array(lines[(split + 1)...]) : []
        var body: [UInt8] = []
        for line in bodyLines { body += expand(line, peer: peer) + [0x0D, 0x0A] }
        var head: [UInt8] = []
        for line in lines[..<split] {
            let filled = expand(line, peer: peer)
            if filled.isEmpty { continue }
            head += filled + [0x0D, 0x0A]
        }
        head = replace(Array("[len]".utf8), in: head, with: Array(String(body.count).utf8))
        return head + [0x0D, 0x0A] + body
    }

    func replace(_ needle: [UInt8], in bytes: [UInt8], with value: [UInt8]) -> [UInt8] {
        guard bytes.count >= needle.count else { return bytes }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == needle[0], i + needle.count <= bytes.count, Array(bytes[i..<(i + needle.count)]) == needle {
                out += value
                i += needle.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// Fills the keywords in `bytes`; unknown ones (and [len], filled later) stay as they are.
    func expand(_ bytes: [UInt8], peer: SIPPeer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "["),
                let close = bytes[(i + 1)..<min(bytes.count, i + 48)].firstIndex(of: UInt8(ascii: "]")),
                let value = keyword(String(decoding: bytes[(i + 1)..<close], as: UTF8.self), peer: peer)
            {
                out += value.utf8
                i = close + 1
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    func branch(_ n: Int) -> String { "z9hG4bK-4242-1-\(n)" }

    func keyword(_ name: String, peer: SIPPeer) -> String? {
        switch name {
        case "service": return "service"
        case "remote_ip", "remote_host": return agent.host
        case "remote_port": return String(agent.port)
        case "local_ip", "media_ip": return peer.address.host
        case "local_port": return String(peer.address.port)
        case "local_ip_type", "remote_ip_type", "media_ip_type": return "4"
        case "media_port", "auto_media_port": return "6000"
        case "transport": return peer.transport.rawValue
        case "pid": return "4242"
        case "call_number": return "1"
        // The agent's call when it placed one (SIPp as the callee), else SIPp's own.
        case "call_id": return outgoingCallID ?? "1-4242@127.0.0.1"
        case "sipp_version": return "fuzz"
        case "branch": return branch(recvCount)
        case "cseq": return String(max(cseq, 1))
        case "peer_tag_param": return agentTag.map { ";tag=" + $0 } ?? ""
        case "next_url": return nextURL ?? "sip:service@\(agent.host):\(agent.port)"
        case "last_Request_URI": return lastSent?.requestURI?.serialize() ?? ""
        case "last_cseq_number": return lastSent?.cseq.map { String($0.sequence) } ?? "1"
        case "rack": return rack ?? "1 1 INVITE"
        case "routes": return ""
        default:
            if name.hasPrefix("branch-"), let n = Int(name.dropFirst(7)) { return branch(recvCount - n) }
            if name.hasPrefix("$") { return variables[String(name.dropFirst())] ?? "" }
            if name.hasPrefix("last_") {
                var header = name.dropFirst(5)
                if header.hasSuffix(":") { header = header.dropLast() }
                guard !header.isEmpty, let m = lastSent else { return "" }
                let wanted = SIPHeaderName(String(header))
                return m.headers.filter { $0.name == wanted }.map { "\($0.name.canonical): \($0.value)" }.joined(
                    separator: "\r\n")
            }
            return nil
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
