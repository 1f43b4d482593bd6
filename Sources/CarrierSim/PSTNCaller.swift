import Foundation
import IOCore
import Media
import SDP
import SIP
import Synchronization

/// The other direction: PSTN callers dialling the gateway's DIDs (`irisgw carrier-sim
/// call`). Each call offers PCMU + telephone-event, plays a tone mixed with an echo of what
/// it hears, and hangs up after `hangupAfter` or waits for the gateway's BYE.
public final class PSTNCaller: Sendable {
    /// What to dial and how. Every field has a documented default.
    public struct Configuration: Sendable {
        /// The DID dialled (Request-URI user part), e.g. +15550001000.
        public var did: String
        /// The caller's number (From user part).
        public var from: String
        /// The gateway's SIP address. Default 127.0.0.1:5060 (UDP).
        public var gateway = SocketAddress(host: "127.0.0.1", port: 5060)
        /// Our SIP and RTP host. Default 127.0.0.1 (port from the OS).
        public var localHost = "127.0.0.1"
        /// Seconds after the answer to send BYE; nil waits for the gateway's BYE. Default nil.
        public var hangupAfter: Double?
        /// Calls to place. Default 1.
        public var calls = 1
        /// New calls per second. Default 1.
        public var rate = 1.0
        /// The tone we play, Hz. Default 300.
        public var toneHz = 300.0

        public init(did: String, from: String) {
            self.did = did
            self.from = from
        }
    }

    /// How one call went.
    public struct Outcome: Sendable, CustomStringConvertible {
        /// 1-based, in placing order.
        public var index: Int
        public var end: SIPCallEnd
        /// Seconds from INVITE to 200, when answered.
        public var answeredAfter: Double?
        /// Seconds from 200 to the end, when answered.
        public var connectedFor: Double?
        /// The final status when not answered, or the response/request that ended it.
        public var status: Int?
        /// Q.850 cause of the `Reason` that came with the end.
        public var cause: Int?
        /// RTP packets we received.
        public var packetsReceived: Int

        /// Answered, then ended by either side's BYE.
        public var isSuccess: Bool {
            guard answeredAfter != nil else { return false }
            return end == .remoteHangup || end == .localHangup
        }

        public var description: String {
            let causeText = cause.map { " (cause \($0))" } ?? ""
            guard let answered = answeredAfter else {
                switch end {
                case .rejected(let s): return "call \(index): rejected \(s)\(causeText)"
                default: return "call \(index): failed, \(end)\(causeText)"
                }
            }
            let how: String
            switch end {
            case .remoteHangup: how = "ended by gateway BYE"
            case .localHangup: how = "ended by our BYE"
            default: how = "ended: \(end)"
            }
            let setup = String(format: "%.1f", answered), talk = String(format: "%.1f", connectedFor ?? 0)
            return
                "call \(index): answered after \(setup) s, \(how) after \(talk) s\(causeText), received \(packetsReceived) RTP packets"
        }
    }

    public let configuration: Configuration
    private let ua: SIPUserAgent
    private let media: SimMediaThreads
    /// The calls in progress; on the SIP loop only (checked in debug builds).
    private let legs: LoopBoundBox<[Int: CallerLeg]>
    private let outcomes = Mutex<[Outcome]>([])
    private let done = DispatchSemaphore(value: 0)

    public init(configuration: Configuration) throws {
        self.configuration = configuration
        var sip = SIPUserAgentConfiguration(
            listen: [(.udp, SocketAddress(host: configuration.localHost, port: 0))],
            userAgent: "irisgw-carrier-sim/0.1", contactUser: "pstn", prack: .supported, sessionTimer: nil)
        sip.defence = .testPeer
        ua = try SIPUserAgent(configuration: sip)
        legs = LoopBoundBox([:], loop: ua.loop)
        media = try SimMediaThreads(count: 1)
    }

    /// Places every call, paced at `rate`, and blocks until all have ended; `onOutcome`
    /// hears each as it ends (on the SIP loop). Returns the outcomes in placing order.
    public func run(onOutcome: @escaping @Sendable (Outcome) -> Void = { _ in }) throws -> [Outcome] {
        try ua.start()
        let count = max(configuration.calls, 1)
        let spacing = configuration.rate > 0 ? 1 / configuration.rate : 0
        ua.loop.execute { [self] in
            for i in 1...count {
                ua.loop.schedule(after: Double(i - 1) * spacing) { [self] in place(i, onOutcome: onOutcome) }
            }
        }
        for _ in 0..<count { done.wait() }
        ua.shutdown()
        media.stop()
        return outcomes.withLock { $0.sorted { $0.index < $1.index } }
    }

    /// Hangs up every call in progress (SIGINT); `run` returns once they have ended.
    public func hangupAll() {
        ua.loop.execute { [self] in for leg in legs.value.values { leg.call?.hangup() } }
    }

    private func place(_ index: Int, onOutcome: @escaping @Sendable (Outcome) -> Void) {
        let c = configuration
        let leg: SimMediaLeg
        do {
            let pcmu = CodecChoice(rtpMap: .pcmu, codec: .pcmu, telephoneEvent: .telephoneEvent())
            leg = try SimMediaLeg(host: c.localHost, choice: pcmu, remote: nil, threads: media)
        } catch {
            finish(Outcome(index: index, end: .transportError, packetsReceived: 0), onOutcome)
            return
        }
        leg.setEcho(.mixed)
        leg.play(SineTone(hz: c.toneHz))
        let caller = CallerLeg(index: index, media: leg, hangupAfter: c.hangupAfter, loop: ua.loop) {
            [weak self] outcome in
            self?.legs.value[index] = nil
            self?.finish(outcome, onOutcome)
        }
        legs.value[index] = caller
        let local = ua.localAddresses.first?.address ?? SocketAddress(host: c.localHost, port: 0)
        let uri = SIPURI(user: c.did, host: c.gateway.host, port: c.gateway.port)
        let from = NameAddress(uri: SIPURI(user: c.from, host: local.host, port: local.port))
        let sdp = SimSDP.offer(
            host: c.localHost, port: leg.localPort, codecs: [.pcmu],
            sessionID: String(UInt32.random(in: 1...UInt32.max)))
        caller.call = ua.invite(
            requestURI: uri, from: from, to: NameAddress(uri: uri),
            peer: SIPPeer(transport: .udp, address: c.gateway), sdp: sdp, delegate: caller)
    }

    private func finish(_ outcome: Outcome, _ onOutcome: @Sendable (Outcome) -> Void) {
        outcomes.withLock { $0.append(outcome) }
        onOutcome(outcome)
        done.signal()
    }
}

/// One PSTN call toward the gateway: follows the SDP answer with its media leg and reports
/// the outcome once. SIP-loop confined; not Sendable: `PSTNCaller.legs` holds it.
final class CallerLeg: SIPCallDelegate {
    let index: Int
    let media: SimMediaLeg
    let hangupAfter: Double?
    let loop: EventLoop
    var call: SIPCall?
    private let started = EventLoop.now()
    private var connectedAt: Double?
    private var hangupTimer: EventLoop.Timer?
    private let report: (PSTNCaller.Outcome) -> Void

    init(
        index: Int, media: SimMediaLeg, hangupAfter: Double?, loop: EventLoop,
        report: @escaping (PSTNCaller.Outcome) -> Void
    ) {
        self.index = index
        self.media = media
        self.hangupAfter = hangupAfter
        self.loop = loop
        self.report = report
    }

    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {
        if let sdp = response.sdp { follow(sdp) }
    }

    func call(_ call: SIPCall, didConnect message: SIPMessage) {
        connectedAt = EventLoop.now()
        if let sdp = call.remoteSDP { follow(sdp) }
        if let hangupAfter {
            hangupTimer = loop.schedule(after: hangupAfter) { [weak call] in call?.hangup() }
        }
    }

    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        guard let offer else { return call.localSDP }
        guard let chosen = CodecChoice.choose(from: offer),
            let index = offer.media.firstIndex(where: { $0.media == "audio" && !$0.isRejected })
        else { return nil }
        follow(offer)
        let version = (call.localSDP?.origin.sessionVersion ?? 1) &+ 1
        return SimSDP.answer(
            chosen, host: media.host, port: media.localPort, direction: offer.direction(ofMedia: index).answer,
            version: version, sessionID: call.localSDP?.origin.sessionID ?? "1")
    }

    /// Sends where the gateway's SDP says, with the codec it chose.
    private func follow(_ sdp: SessionDescription) {
        if let chosen = CodecChoice.choose(from: sdp) { media.reconfigure(chosen) }
        media.setRemote(SimSDP.remoteAddress(sdp))
    }

    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        loop.cancel(hangupTimer)
        media.close()
        let now = EventLoop.now()
        let status: Int? = message?.statusCode ?? { if case .rejected(let s) = end { s } else { nil } }()
        report(
            PSTNCaller.Outcome(
                index: index, end: end, answeredAfter: connectedAt.map { $0 - started },
                connectedFor: connectedAt.map { now - $0 }, status: status, cause: message?.q850Cause,
                packetsReceived: media.counters.received.load(ordering: .relaxed)))
        self.call = nil
    }
}
