import CarrierSim
import Foundation
import Glibc
import Media
import SDP
import SIP
import TestSupport
import Testing

// Minimal pieces of Tests/EndToEndTests (TestAgent, CallRecorder, eventually), copied so
// this target depends on nothing but CarrierSim, SIP and Media.

/// What a `SIPCall` told its delegate, in order.
enum CallEvent: Sendable, Equatable {
    case provisional(Int, sdp: Bool)
    case connected
    case answer
    case request(String)
    case ended(SIPCallEnd)
}

/// Records every callback of the caller's `SIPCall` under a lock.
final class CallRecorder: SIPCallDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [CallEvent] = []
    private var _messages: [SIPMessage] = []
    /// The port our answers to re-INVITEs name.
    var mediaPort: UInt16 = 40_000

    var events: [CallEvent] { lock.withLock { _events } }
    var messages: [SIPMessage] { lock.withLock { _messages } }
    var end: SIPCallEnd? { events.lazy.compactMap { if case .ended(let e) = $0 { e } else { nil } }.first }
    var endMessage: SIPMessage? { lock.withLock { _endMessage } }
    private var _endMessage: SIPMessage?

    func waitFor(_ event: CallEvent, timeout: Double = 10) async -> Bool {
        await eventually(timeout: timeout) { events.contains(event) }
    }

    func waitForEnd(timeout: Double = 10) async -> SIPCallEnd? {
        _ = await eventually(timeout: timeout) { end != nil }
        return end
    }

    private func record(_ e: CallEvent, _ m: SIPMessage?) {
        lock.withLock {
            _events.append(e)
            if let m { _messages.append(m) }
        }
    }

    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {
        record(.provisional(response.statusCode ?? 0, sdp: response.sdp != nil), response)
    }

    func call(_ call: SIPCall, didConnect message: SIPMessage) {
        lock.withLock { _connectedAt = SIPEventLoop.now() }
        record(.connected, message)
    }

    /// When the 200 was taken (on the SIP loop, however late the test looks).
    var connectedAt: Double? { lock.withLock { _connectedAt } }
    private var _connectedAt: Double?

    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        record(.request(request.method), request)
        guard let offer else { return call.localSDP }
        let index = offer.media.firstIndex { $0.media == "audio" } ?? 0
        let codec = offer.media[index].rtpMaps.first ?? .pcmu
        return TestSDP.session(
            .audio(port: mediaPort, codecs: [codec], ptime: 20, direction: offer.direction(ofMedia: index).answer),
            version: 2)
    }

    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {
        record(.answer, message)
    }

    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        lock.withLock { _endMessage = message }
        record(.ended(end), message)
    }
}

enum TestSDP {
    static func session(_ media: MediaDescription, version: UInt64 = 1) -> SessionDescription {
        SessionDescription(
            origin: SDPOrigin(sessionID: "4242", sessionVersion: version, addrType: "IP4", address: "127.0.0.1"),
            connection: .ip4("127.0.0.1"), media: [media])
    }

    static func offer(
        codecs: [RTPMap] = [.pcmu, .pcma], port: UInt16 = 40_000, telephoneEvent: Bool = true
    ) -> SessionDescription {
        session(.audio(port: port, codecs: codecs, telephoneEvent: telephoneEvent ? .telephoneEvent() : nil, ptime: 20))
    }

    /// Encoding names of the first audio stream, telephone-event left out.
    static func codecs(_ sdp: SessionDescription?) -> [String] {
        (sdp?.media.first { $0.media == "audio" }?.rtpMaps.map { $0.encodingName.uppercased() } ?? []).filter {
            $0 != "TELEPHONE-EVENT"
        }
    }
}

/// A simulator on 127.0.0.1 port 0 with fast scripts, and a caller `SIPUserAgent` (the
/// project's own UAC). `stop()` in a `defer`.
final class SimHarness: @unchecked Sendable {
    let simulator: CarrierSimulator
    let simPeer: SIPPeer
    let caller: SIPUserAgent
    let callerLocal: SIPPeer

    /// `timeScale` 0.1: answers after 0.1 s, hold at 0.3 s, BYE at 0.5 s. `configure`
    /// changes the rest of the simulator's configuration.
    init(timeScale: Double = 0.1, configure: (inout CarrierSimulator.Configuration) -> Void = { _ in }) throws {
        var config = CarrierSimulator.Configuration()
        config.listen = SocketAddress(host: "127.0.0.1", port: 0)
        config.tcp = false
        config.timeScale = timeScale
        config.mediaThreads = 1
        configure(&config)
        simulator = try CarrierSimulator(configuration: config)
        guard let bound = try simulator.start().first else { throw SocketError("listen", code: EINVAL) }
        simPeer = bound
        caller = try SIPUserAgent(
            configuration: SIPUserAgentConfiguration(
                listen: [(.udp, SocketAddress(host: "127.0.0.1", port: 0))], prack: .supported, sessionTimer: nil))
        guard let local = try caller.start().first else { throw SocketError("listen", code: EINVAL) }
        callerLocal = local
    }

    func stop() {
        caller.shutdown()
        simulator.shutdown()
    }

    /// Calls `number` on the simulator with `sdp` (default: PCMU, PCMA, telephone-event on
    /// `mediaPort`).
    func call(
        _ number: String, recorder: CallRecorder, sdp: SessionDescription? = nil,
        credentials: DigestCredentials? = nil
    ) async -> SIPCall {
        let ua = caller
        let uri = SIPURI(user: number, host: simPeer.address.host, port: simPeer.address.port)
        let from = NameAddress(
            uri: SIPURI(user: "+15557654321", host: callerLocal.address.host, port: callerLocal.address.port))
        let offer = sdp ?? TestSDP.offer(port: recorder.mediaPort)
        let peer = simPeer
        return await ua.loop.run {
            ua.invite(
                requestURI: uri, from: from, to: NameAddress(uri: uri), peer: peer, sdp: offer,
                credentials: credentials, delegate: recorder)
        }
    }

    /// Calls `number` with a probe taking the RTP that comes back (the offer, of `codecs`
    /// when given, names its port).
    func probedCall(
        _ number: String, codecs: [RTPMap]? = nil
    ) async throws -> (call: SIPCall, recorder: CallRecorder, probe: RTPProbe) {
        let probe = try RTPProbe()
        let rec = CallRecorder()
        rec.mediaPort = probe.port
        let sdp = codecs.map { TestSDP.offer(codecs: $0, port: probe.port) }
        return (await call(number, recorder: rec, sdp: sdp), rec, probe)
    }

    /// The simulator's SDP as the caller last saw it.
    func remoteSDP(_ call: SIPCall) async -> SessionDescription? { await caller.loop.run { call.remoteSDP } }

    func onCaller<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T { await caller.loop.run(work) }
}

/// A plain UDP socket standing in for the caller's RTP: sends and receives packets with
/// timeouts (poll), for the tests only.
final class RTPProbe: @unchecked Sendable {
    let socket: UDPSocket
    var port: UInt16 { UInt16(socket.local.port) }
    let ssrc: UInt32 = 0x1234_5678
    private var sequence: UInt16 = 100
    private var timestamp: UInt32 = 8_000

    init() throws {
        socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
    }

    /// Sends one packet to `to`.
    func send(
        payloadType: UInt8, payload: [UInt8], marker: Bool = false, timestamp ts: UInt32? = nil, to: SocketAddress
    ) {
        sequence &+= 1
        if ts == nil { timestamp &+= 160 }
        let packet = RTPPacket(
            header: RTPHeader(
                marker: marker, payloadType: payloadType, sequenceNumber: sequence,
                timestamp: ts ?? timestamp, ssrc: ssrc), payload: payload)
        guard let bytes = try? packet.serialize(), let raw = RawSocketAddress(to) else { return }
        _ = bytes.withUnsafeBytes { socket.send($0, to: raw) }
    }

    /// Every packet that arrives within `seconds` (or until `until` says stop), read on a
    /// dispatch thread while the test suspends.
    func receive(for seconds: Double, until: @escaping ([RTPPacket]) -> Bool = { _ in false }) async -> [RTPPacket] {
        await offThePool { self.receiveBlocking(for: seconds, until: until) }
    }

    private func receiveBlocking(for seconds: Double, until: ([RTPPacket]) -> Bool) -> [RTPPacket] {
        var out: [RTPPacket] = []
        let deadline = SIPEventLoop.now() + seconds
        var buffer = [UInt8](repeating: 0, count: 2048)
        var from = RawSocketAddress()
        // Drain before checking `until`: on a busy machine the test may get here after the
        // condition already holds, with the packets it wants still waiting in the socket.
        repeat {
            var pfd = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 20) > 0 else { continue }
            while let n = buffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &from) }) {
                if let p = try? RTPPacket(parsing: Array(buffer[0..<n])) { out.append(p) }
            }
        } while SIPEventLoop.now() < deadline && !until(out)
        return out
    }
}

/// 20 ms of a `hz` tone as PCMU.
func pcmuTone(hz: Double, frame: Int) -> [UInt8] {
    let pcm = (0..<160).map { i in Int16(8_000 * sin(2 * Double.pi * hz * Double(frame * 160 + i) / 8_000)) }
    var out = [UInt8](repeating: 0, count: 160)
    G711.encodeULaw(pcm, into: &out)
    return out
}

/// Decodes PCMU payloads into one PCM array.
func decodePCMU(_ packets: [RTPPacket]) -> [Int16] {
    var all: [Int16] = []
    for p in packets {
        var pcm = [Int16](repeating: 0, count: p.payload.count)
        G711.decodeULaw(p.payload, into: &pcm)
        all += pcm
    }
    return all
}

/// RFC 4733 digits in `packets` of `payloadType`, decoded by Media's `DTMFReceiver`.
func digits(in packets: [RTPPacket], payloadType: UInt8 = 101) -> String {
    var receiver = DTMFReceiver()
    var out = ""
    for p in packets where p.header.payloadType == payloadType {
        guard let report = try? TelephoneEvent.parse(p.payload) else { continue }
        for e in receiver.receive(
            report, timestamp: p.header.timestamp, sequenceNumber: p.header.sequenceNumber, now: 0)
        {
            if case .ended(let d, _) = e { out.append(d.character) }
        }
    }
    return out
}

/// A caller that writes SIP by hand over UDP, for what the project's own UA would hide: our
/// INVITE retransmissions (slow-trying) and every retransmitted 200 (ignores-ack).
final class RawSIPCaller: @unchecked Sendable {
    let socket: UDPSocket
    let to: SocketAddress
    let callID = "raw-\(UInt32.random(in: 1...UInt32.max))@127.0.0.1"
    let fromTag = "rawtag\(UInt32.random(in: 1...UInt32.max))"
    let branch = "z9hG4bK-raw\(UInt32.random(in: 1...UInt32.max))"
    var local: String { "127.0.0.1:\(socket.local.port)" }

    init(to: SocketAddress) throws {
        socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        self.to = to
    }

    /// Our INVITE for `number` with `sdp`; the same bytes each time (a retransmission).
    func invite(_ number: String, sdp: SessionDescription) -> String {
        let body = sdp.serialize()
        return "INVITE sip:\(number)@\(to.host):\(to.port) SIP/2.0\r\n"
            + "Via: SIP/2.0/UDP \(local);branch=\(branch);rport\r\n"
            + "Max-Forwards: 70\r\nFrom: <sip:+15557654321@127.0.0.1>;tag=\(fromTag)\r\n"
            + "To: <sip:\(number)@\(to.host)>\r\nCall-ID: \(callID)\r\nCSeq: 1 INVITE\r\n"
            + "Contact: <sip:caller@\(local)>\r\nContent-Type: application/sdp\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    /// The ACK for a 2xx (`response` gives the To tag), or a 200 to a BYE the carrier sent.
    func ack(for response: SIPMessage, number: String) -> String {
        "ACK sip:carrier@\(to.host):\(to.port) SIP/2.0\r\nVia: SIP/2.0/UDP \(local);branch=z9hG4bK-ack\(UInt32.random(in: 1...UInt32.max))\r\n"
            + "Max-Forwards: 70\r\nFrom: <sip:+15557654321@127.0.0.1>;tag=\(fromTag)\r\n"
            + "To: \(response[.to] ?? "")\r\nCall-ID: \(callID)\r\nCSeq: 1 ACK\r\nContent-Length: 0\r\n\r\n"
    }

    func ok(to request: SIPMessage) -> String {
        "SIP/2.0 200 OK\r\n" + request.values(.via).map { "Via: \($0)\r\n" }.joined()
            + "From: \(request[.from] ?? "")\r\nTo: \(request[.to] ?? "")\r\nCall-ID: \(callID)\r\n"
            + "CSeq: \(request[.cseq] ?? "")\r\nContent-Length: 0\r\n\r\n"
    }

    func send(_ text: String) {
        guard let raw = RawSocketAddress(to) else { return }
        _ = Array(text.utf8).withUnsafeBytes { socket.send($0, to: raw) }
    }

    /// The messages that arrive within `seconds`, with when each came; stops early once
    /// `until` holds.
    func receive(
        for seconds: Double, until: @escaping ([(at: Double, message: SIPMessage)]) -> Bool = { _ in false }
    )
        async -> [(at: Double, message: SIPMessage)]
    {
        await offThePool { self.receiveBlocking(for: seconds, until: until) }
    }

    private func receiveBlocking(
        for seconds: Double, until: ([(at: Double, message: SIPMessage)]) -> Bool
    )
        -> [(at: Double, message: SIPMessage)]
    {
        var out: [(at: Double, message: SIPMessage)] = []
        let deadline = SIPEventLoop.now() + seconds
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = RawSocketAddress()
        repeat {
            var pfd = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 10) > 0 else { continue }
            while let n = buffer.withUnsafeMutableBytes({ socket.receive(into: $0, from: &from) }) {
                if let m = try? SIPMessage.parse(Array(buffer[0..<n])) { out.append((SIPEventLoop.now(), m)) }
            }
        } while SIPEventLoop.now() < deadline && !until(out)
        return out
    }
}

/// Sends a `hz` PCMU tone packet to `target` every `interval` for `count` packets, carrying
/// its index in the first two payload bytes, and collects what comes back meanwhile (and
/// for `drain` seconds after): (index sent, send time) and (packet, arrival time).
func pump(
    _ probe: RTPProbe, to target: SocketAddress, count: Int, interval: Double, hz: Double = 440,
    drain: Double = 0.5, until: ([RTPPacket]) -> Bool = { _ in false }
)
    async -> (sent: [Double], received: [(packet: RTPPacket, at: Double)])
{
    var sent: [Double] = []
    var received: [(packet: RTPPacket, at: Double)] = []
    for i in 0..<count {
        sent.append(SIPEventLoop.now())
        var payload = pcmuTone(hz: hz, frame: i)
        payload[0] = UInt8(i >> 8)
        payload[1] = UInt8(truncatingIfNeeded: i)
        probe.send(payloadType: 0, payload: payload, to: target)
        for p in await probe.receive(for: interval) { received.append((p, SIPEventLoop.now())) }
        if until(received.map(\.packet)) { return (sent, received) }
    }
    for p in await probe.receive(for: drain) { received.append((p, SIPEventLoop.now())) }
    return (sent, received)
}

/// Decodes PCMA payloads into one PCM array.
func decodePCMA(_ packets: [RTPPacket]) -> [Int16] {
    var all: [Int16] = []
    for p in packets {
        var pcm = [Int16](repeating: 0, count: p.payload.count)
        G711.decodeALaw(p.payload, into: &pcm)
        all += pcm
    }
    return all
}

/// The simulator's call suites read their sockets off the cooperative pool (`offThePool`), so
/// they no longer starve other suites; one at a time because they share the cores' timing: their
/// retransmission-spacing and answer-delay checks fail when ten simulators run at once.
@Suite(.serialized) enum SimulatorCallSuites {}
