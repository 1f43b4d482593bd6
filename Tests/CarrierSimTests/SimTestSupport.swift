import CarrierSim
import Foundation
import Glibc
import Media
import SIP
import Testing

// Minimal pieces of Tests/EndToEndTests (TestAgent, CallRecorder, eventually), copied so
// this target depends on nothing but CarrierSim, SIP and Media.

/// Polls `condition` every 20 ms until it holds or `timeout` seconds pass.
func eventually(timeout: Double, _ condition: () -> Bool) async -> Bool {
    let until = SIPEventLoop.now() + timeout
    while true {
        if condition() { return true }
        if SIPEventLoop.now() >= until { return false }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
}

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

    func call(_ call: SIPCall, didConnect message: SIPMessage) { record(.connected, message) }

    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        record(.request(request.method), request)
        guard let offer else { return call.localSDP }
        let index = offer.media.firstIndex { $0.media == "audio" } ?? 0
        let codec = offer.media[index].rtpMaps.first ?? .pcmu
        return TestSDP.session(.audio(port: mediaPort, codecs: [codec], ptime: 20, direction: offer.direction(ofMedia: index).answer),
                               version: 2)
    }

    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) { record(.answer, message) }

    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        lock.withLock { _endMessage = message }
        record(.ended(end), message)
    }
}

enum TestSDP {
    static func session(_ media: MediaDescription, version: UInt64 = 1) -> SessionDescription {
        SessionDescription(origin: SDPOrigin(sessionID: "4242", sessionVersion: version, addrType: "IP4", address: "127.0.0.1"),
                           connection: .ip4("127.0.0.1"), media: [media])
    }

    static func offer(codecs: [RTPMap] = [.pcmu, .pcma], port: UInt16 = 40_000, telephoneEvent: Bool = true) -> SessionDescription {
        session(.audio(port: port, codecs: codecs, telephoneEvent: telephoneEvent ? .telephoneEvent() : nil, ptime: 20))
    }

    /// Encoding names of the first audio stream, telephone-event left out.
    static func codecs(_ sdp: SessionDescription?) -> [String] {
        (sdp?.media.first { $0.media == "audio" }?.rtpMaps.map { $0.encodingName.uppercased() } ?? []).filter { $0 != "TELEPHONE-EVENT" }
    }
}

/// A simulator on 127.0.0.1 port 0 with fast scripts, and a caller `SIPUserAgent` (the
/// project's own UAC). `stop()` in a `defer`.
final class SimHarness: @unchecked Sendable {
    let simulator: CarrierSimulator
    let simPeer: SIPPeer
    let caller: SIPUserAgent
    let callerLocal: SIPPeer

    /// `timeScale` 0.1: answers after 0.1 s, hold at 0.3 s, BYE at 0.5 s.
    init(timeScale: Double = 0.1) throws {
        var config = CarrierSimulator.Configuration()
        config.listen = SocketAddress(host: "127.0.0.1", port: 0)
        config.tcp = false
        config.timeScale = timeScale
        config.mediaThreads = 1
        simulator = try CarrierSimulator(configuration: config)
        guard let bound = try simulator.start().first else { throw SocketError("listen", code: EINVAL) }
        simPeer = bound
        caller = try SIPUserAgent(configuration: SIPUserAgentConfiguration(
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
    func call(_ number: String, recorder: CallRecorder, sdp: SessionDescription? = nil,
              credentials: DigestCredentials? = nil) -> SIPCall {
        let ua = caller
        let uri = SIPURI(user: number, host: simPeer.address.host, port: simPeer.address.port)
        let from = NameAddress(uri: SIPURI(user: "+15557654321", host: callerLocal.address.host, port: callerLocal.address.port))
        let offer = sdp ?? TestSDP.offer(port: recorder.mediaPort)
        let peer = simPeer
        return ua.loop.sync {
            ua.invite(requestURI: uri, from: from, to: NameAddress(uri: uri), peer: peer, sdp: offer,
                      credentials: credentials, delegate: recorder)
        }
    }

    /// The simulator's SDP as the caller last saw it.
    func remoteSDP(_ call: SIPCall) -> SessionDescription? { caller.loop.sync { call.remoteSDP } }

    func onCaller<T: Sendable>(_ work: @escaping @Sendable () -> T) -> T { caller.loop.sync(work) }
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
    func send(payloadType: UInt8, payload: [UInt8], marker: Bool = false, timestamp ts: UInt32? = nil, to: SocketAddress) {
        sequence &+= 1
        if ts == nil { timestamp &+= 160 }
        let packet = RTPPacket(header: RTPHeader(marker: marker, payloadType: payloadType, sequenceNumber: sequence,
                                                 timestamp: ts ?? timestamp, ssrc: ssrc), payload: payload)
        guard let bytes = try? packet.serialize(), let raw = RawSocketAddress(to) else { return }
        _ = bytes.withUnsafeBytes { socket.send($0, to: raw) }
    }

    /// Every packet that arrives within `seconds` (or until `until` says stop).
    func receive(for seconds: Double, until: ([RTPPacket]) -> Bool = { _ in false }) -> [RTPPacket] {
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
        for e in receiver.receive(report, timestamp: p.header.timestamp, sequenceNumber: p.header.sequenceNumber, now: 0) {
            if case .ended(let d, _) = e { out.append(d.character) }
        }
    }
    return out
}
