import Foundation
import SDP
import SIP

/// A running `SIPUserAgent` on 127.0.0.1 with an OS-chosen port; `shutdown()` in a `defer`.
final class TestAgent: @unchecked Sendable {
    let ua: SIPUserAgent
    /// Where the agent listens (the first configured socket).
    let local: SIPPeer
    /// Keeps the UA delegate alive (`SIPUserAgent.delegate` is weak).
    var delegate: AnyObject?

    init(
        transport: SIPTransportProtocol = .udp, prack: SIPUserAgentConfiguration.PRACKPolicy = .supported,
        sessionTimer: SessionTimerPolicy? = SessionTimerPolicy(), t1: Double = 0.5
    ) throws {
        let config = SIPUserAgentConfiguration(
            listen: [(transport, SocketAddress(host: "127.0.0.1", port: 0))],
            prack: prack, sessionTimer: sessionTimer, t1: t1)
        ua = try SIPUserAgent(configuration: config)
        let bound = try ua.start()
        guard let first = bound.first else { throw SocketError("listen", code: EINVAL) }
        local = first
    }

    func shutdown() { ua.shutdown() }

    /// An `AnsweringEndpoint` serving this agent's calls.
    func answering(_ configure: (inout AnsweringEndpoint.Behaviour) -> Void = { _ in }) async -> AnsweringEndpoint {
        var behaviour = AnsweringEndpoint.Behaviour()
        configure(&behaviour)
        let chosen = behaviour
        let ua = self.ua
        let endpoint = await ua.loop.run { AnsweringEndpoint(ua: ua, behaviour: chosen) }
        delegate = endpoint
        return endpoint
    }

    /// A `ScriptedCallee` serving this agent's calls.
    func scripted(_ onCall: @escaping (SIPCall, CallRecorder) -> Void) async -> ScriptedCallee {
        let callee = ScriptedCallee(onCall: onCall)
        let ua = self.ua
        await ua.loop.run { ua.delegate = callee }
        delegate = callee
        return callee
    }

    /// The endpoint's statistics, read on the loop.
    func stats(_ endpoint: AnsweringEndpoint) async -> AnsweringEndpoint.Stats {
        await ua.loop.run { endpoint.stats }
    }

    /// Places a call to `sipp` (its scenario plays the callee) with `recorder` as delegate.
    func call(
        _ sipp: SIPp, recorder: CallRecorder, sdp: SessionDescription? = SDP.offer(),
        credentials: DigestCredentials? = nil, headers: [SIPHeader] = []
    ) async -> SIPCall {
        await call(
            uri: sipp.uri, peer: sipp.peer, recorder: recorder, sdp: sdp, credentials: credentials, headers: headers)
    }

    func call(
        uri: SIPURI, peer: SIPPeer, recorder: CallRecorder, sdp: SessionDescription? = SDP.offer(),
        credentials: DigestCredentials? = nil, headers: [SIPHeader] = []
    ) async -> SIPCall {
        let ua = self.ua
        let from = NameAddress(
            displayName: "irisgw", uri: SIPURI(user: "gateway", host: local.address.host, port: local.address.port))
        let to = NameAddress(uri: uri)
        return await ua.loop.run {
            ua.invite(
                requestURI: uri, from: from, to: to, peer: peer, sdp: sdp, headers: headers,
                credentials: credentials, delegate: recorder)
        }
    }

    /// Runs `work` on the SIP loop and suspends until its result.
    func onLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T { await ua.loop.run(work) }

    /// Counters of the agent, read on the loop.
    var counters: SIPUserAgent.Counters {
        get async {
            let ua = self.ua
            return await ua.loop.run { ua.counters }
        }
    }

    var activeCalls: Int {
        get async {
            let ua = self.ua
            return await ua.loop.run { ua.activeCallCount }
        }
    }
}

/// SDP offers and answers for the tests (the agent sends no media).
enum SDP {
    static func offer(
        codecs: [RTPMap] = [.pcmu, .pcma], port: UInt16 = 40_000,
        direction: MediaDirection = .sendrecv, version: UInt64 = 1
    ) -> SessionDescription {
        SessionDescription(
            origin: SDPOrigin(sessionID: "4242", sessionVersion: version, addrType: "IP4", address: "127.0.0.1"),
            connection: .ip4("127.0.0.1"),
            media: [
                .audio(port: port, codecs: codecs, telephoneEvent: .telephoneEvent(), ptime: 20, direction: direction)
            ])
    }

    /// The first offered codec among `accept`, the mirrored direction (RFC 3264 §6.1); nil when
    /// no audio codec fits.
    static func answer(
        to offer: SessionDescription, accept: [String] = ["PCMU", "PCMA"], port: UInt16 = 40_002
    ) -> SessionDescription? {
        guard let index = offer.media.firstIndex(where: { $0.media == "audio" && $0.port != 0 }),
            let codec = offer.media[index].rtpMaps.first(where: { m in
                accept.contains { $0.caseInsensitiveCompare(m.encodingName) == .orderedSame }
            })
        else { return nil }
        let direction = offer.direction(ofMedia: index).answer
        return SessionDescription(
            origin: SDPOrigin(sessionID: "4343", sessionVersion: 1, addrType: "IP4", address: "127.0.0.1"),
            connection: .ip4("127.0.0.1"),
            media: [.audio(port: port, codecs: [codec], ptime: 20, direction: direction)])
    }

    /// Encoding names of the first audio stream, upper-cased, telephone-event left out.
    static func codecs(_ sdp: SessionDescription?) -> [String] {
        (sdp?.media.first(where: { $0.media == "audio" })?.rtpMaps.map { $0.encodingName.uppercased() } ?? [])
            .filter { $0 != "TELEPHONE-EVENT" }
    }
}
