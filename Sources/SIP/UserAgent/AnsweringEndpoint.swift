import SDP

/// A signalling-only answering peer: rings, answers with an SDP answer built from the offer
/// (or an offer of its own), answers hold with the mirrored direction, optionally hangs up.
/// It is what `irisgw sip-endpoint` runs for conformance scenarios and the call-rate bench;
/// it sends no media. Confined to its agent's loop (made and read there; checked in debug
/// builds).
public final class AnsweringEndpoint: SIPUserAgentDelegate, SIPCallDelegate, Sendable {
    public struct Behaviour: Sendable {
        /// Send 180 (or a reliable 180 when the caller requires 100rel) before answering. Default true.
        public var ring = true
        /// Seconds between the INVITE and the 200. Default 0.
        public var answerAfter: Double = 0
        /// Reject every call with this status instead of answering. Default nil.
        public var rejectStatus: Int? = nil
        /// Send BYE this many seconds after the call is confirmed. Default nil (wait for BYE).
        public var hangupAfter: Double? = nil
        /// Codecs we accept, by encoding name. Default PCMU, PCMA.
        public var codecs: [String] = ["PCMU", "PCMA"]
        /// The RTP port written in our SDP (nothing listens on it). Default 49170.
        public var mediaPort: UInt16 = 49170
        public init() {}
    }

    public let ua: SIPUserAgent
    /// What only the agent's loop touches.
    private struct LoopState {
        var behaviour: Behaviour
        var stats = Stats()
        var lastInvite: SIPMessage?
    }
    private let loopState: LoopBoundBox<LoopState>

    public var behaviour: Behaviour {
        get { loopState.value.behaviour }
        set { loopState.value.behaviour = newValue }
    }
    /// Calls answered, ended, and by how they ended, for tests and the bench.
    public private(set) var stats: Stats {
        get { loopState.value.stats }
        _modify { yield &loopState.value.stats }
    }

    public struct Stats: Sendable {
        public var received = 0
        public var connected = 0
        public var ended = 0
        public var endings: [String: Int] = [:]
    }

    public init(ua: SIPUserAgent, behaviour: Behaviour = Behaviour()) {
        self.ua = ua
        loopState = LoopBoundBox(LoopState(behaviour: behaviour), loop: ua.loop)
        ua.delegate = self
    }

    /// The last INVITE answered (for tests and diagnostics).
    public private(set) var lastInvite: SIPMessage? {
        get { loopState.value.lastInvite }
        set { loopState.value.lastInvite = newValue }
    }

    public func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) {
        stats.received += 1
        lastInvite = call.invite
        call.delegate = self
        if let status = behaviour.rejectStatus {
            if behaviour.ring { call.ring() }
            call.reject(status: status)
            return
        }
        let answer: SessionDescription?
        if let offer = call.remoteSDP {
            guard let a = makeAnswer(to: offer) else {
                call.reject(status: 488)
                return
            }
            answer = a
        } else {
            answer = makeOffer()
        }
        if behaviour.ring { call.ring() }
        if behaviour.answerAfter > 0 {
            ua.loop.schedule(after: behaviour.answerAfter) { [weak call] in call?.answer(sdp: answer) }
        } else {
            call.answer(sdp: answer)
        }
    }

    public func call(_ call: SIPCall, didConnect message: SIPMessage) {
        stats.connected += 1
        if let after = behaviour.hangupAfter {
            ua.loop.schedule(after: after) { [weak call] in call?.hangup() }
        }
    }

    public func call(
        _ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage
    ) -> SessionDescription? {
        guard let offer else { return call.localSDP.map { $0.redirected(.sendrecv) } ?? makeOffer() }
        return makeAnswer(to: offer)
    }

    public func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        stats.ended += 1
        stats.endings[String(describing: end), default: 0] += 1
    }

    /// An answer with the first offered codec we accept, telephone-event if offered, and the
    /// mirrored direction (sendonly is answered recvonly: RFC 3264 §6.1).
    public func makeAnswer(to offer: SessionDescription) -> SessionDescription? {
        guard let index = offer.media.firstIndex(where: { $0.media == "audio" && $0.port != 0 }) else { return nil }
        let media = offer.media[index]
        guard
            let codec = media.rtpMaps.first(where: { m in
                behaviour.codecs.contains(where: { $0.caseInsensitiveCompare(m.encodingName) })
            })
        else {
            return nil
        }
        let te = media.rtpMaps.first(where: {
            $0.encodingName.lowercased() == "telephone-event" && $0.clockRate == 8000
        })
        let direction = offer.direction(ofMedia: index).answer
        return session(
            MediaDescription.audio(
                port: behaviour.mediaPort, codecs: [codec], telephoneEvent: te, ptime: 20, direction: direction))
    }

    /// Our offer when the INVITE had none (delayed offer, RFC 3261 §13.2.1).
    public func makeOffer() -> SessionDescription {
        let codecs = behaviour.codecs.compactMap { name in
            [RTPMap.pcmu, .pcma, .g722].first(where: { $0.encodingName == name })
        }
        return session(
            MediaDescription.audio(
                port: behaviour.mediaPort, codecs: codecs, telephoneEvent: .telephoneEvent(), ptime: 20))
    }

    private func session(_ media: MediaDescription) -> SessionDescription {
        .single(
            media, host: ua.localAddresses.first?.address.host ?? "127.0.0.1",
            sessionID: String(UInt32.random(in: 1...UInt32.max)),
            version: 1)
    }
}
