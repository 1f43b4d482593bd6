import Crypto
import Foundation
import IOCore
import Media
import SIP
import Speech
import Synchronization

/// A SIP peer that behaves like a PSTN carrier behind the gateway: each test number of
/// `TestNumbers` runs a scripted behaviour (busy, ringing until CANCEL, early media, hold,
/// DTMF, 407 ...), with real RTP (echo, tones, RFC 4733) on a small fixed pool of media
/// threads. `irisgw carrier-sim` runs one; tests run one on port 0.
public final class CarrierSimulator: SIPUserAgentDelegate, Sendable {
    /// How the simulator listens and paces its scripts. Every field has a documented default.
    public struct Configuration: Sendable {
        /// SIP address. Default 127.0.0.1:5090, where `sip-profiles/carrier-sim.json5` sends.
        public var listen = SocketAddress(host: "127.0.0.1", port: 5090)
        /// Also listen on TCP at the same host (the same port unless it is 0). Default true.
        public var tcp = true
        /// Host for RTP sockets and SDP. Default 127.0.0.1.
        public var mediaHost = "127.0.0.1"
        /// Digest username number 012 accepts. Default `gw`.
        public var authUser = "gw"
        /// Digest password for number 012. Default `carrier-sim` (the profile reads the
        /// gateway's side from $CARRIER_SIM_PASSWORD).
        public var authPassword = "carrier-sim"
        /// Digest realm of the 407. Default `carrier-sim`.
        public var authRealm = "carrier-sim"
        /// Seconds between the INVITE and the 200 for ringing numbers. Default 1.
        public var answerDelay = 1.0
        /// Seconds of early media (number 004) before the 200. Default 2.
        public var earlyMediaDuration = 2.0
        /// Seconds after the answer until the hold re-INVITE (008). Default 3.
        public var holdAfter = 3.0
        /// Seconds after the answer until the resume re-INVITE (008). Default 6.
        public var resumeAfter = 6.0
        /// Seconds after the answer until our BYE (010). Default 5.
        public var hangupAfter = 5.0
        /// Seconds after the answer until the DTMF digits (009) start. Default 0.5.
        public var dtmfAfter = 0.5
        /// Seconds after the 200 until the late-media number (017) starts its RTP. Default 3.
        public var lateMediaDelay = 3.0
        /// Seconds of silence (not even 100 Trying) of the slow-trying number (022). Default 4.
        public var tryingDelay = 4.0
        /// Seconds after its 200 until the ignores-ack number (021) gives up and sends BYE:
        /// RFC 3261's 64*T1 (32 s) capped at this. Default 5.
        public var ignoredACKGiveUp = 5.0
        /// Share of its outgoing RTP the lossy number (023) drops at random, percent (0-100).
        /// Default 5. Not scaled.
        public var lossPercent = 5.0
        /// Extra delay of each RTP packet of the lossy number (023): uniform 0 to this, in
        /// milliseconds (packets may overtake each other). Default 40. Not scaled.
        public var jitterMs = 40.0
        /// Seconds after the answer until the refers-caller number (030) sends its REFER and
        /// the replaces-call number (031) its INVITE with `Replaces`. Default 1.
        public var referAfter = 1.0
        /// Seconds between the NOTIFYs a transfer number (024-028) sends about a REFER (each
        /// after the previous one got its response); a target that answers does so
        /// `answerDelay` after its 180. Default 0.5.
        public var referNotifyInterval = 0.5
        /// Multiplies every delay above; tests use a small one. Default 1.
        public var timeScale = 1.0
        /// Announcement tone of the early media (004), Hz. Default 400.
        public var announcementHz = 400.0
        /// Media threads shared by every call. Default 2.
        public var mediaThreads = 2
        /// RFC 3261 T1 for the SIP stack. Default 0.5 s.
        public var t1 = 0.5
        /// The espeak-ng that speaks for the answering-machine numbers (032 person, 033
        /// voicemail; their clips are made once per process on a thread of their own when the
        /// simulator starts). Default `/usr/bin/espeak-ng`; without it those numbers answer
        /// 500 with a `Warning` that names it. Not scaled.
        public var espeak = SpeechSynthesizer.defaultExecutable

        public init() {}

        /// `seconds` scaled by `timeScale`.
        func scaled(_ seconds: Double) -> Double { seconds * timeScale }
    }

    /// One line per finished call: the number, what it did, how it ended.
    public struct CallReport: Sendable, Equatable, CustomStringConvertible {
        public var number: String
        public var behaviour: Behaviour
        public var outcome: String
        public var description: String { "\(number) \(behaviour) \(outcome)" }
    }

    public let configuration: Configuration
    public let ua: SIPUserAgent
    let media: SimMediaThreads
    let digest: DigestServer
    /// The answering-machine numbers' audio, set by `start()`.
    private let clipStore = Mutex<SimClipStore?>(nil)
    /// Called on the SIP loop for each finished call (the CLI prints it).
    public var onReport: (@Sendable (CallReport) -> Void)? {
        get { onReportSlot.withLock { $0 } }
        set { onReportSlot.withLock { $0 = newValue } }
    }
    private let onReportSlot = Mutex<(@Sendable (CallReport) -> Void)?>(nil)
    private let reportsStore = Mutex<[CallReport]>([])
    private let transfersStore = Mutex<[TransferRecord]>([])
    /// The calls in progress; on the SIP loop only (checked in debug builds).
    let calls: LoopBoundBox<[ObjectIdentifier: SimCall]>

    /// Creates the simulator; nothing listens until `start()`.
    public init(configuration: Configuration = Configuration()) throws {
        self.configuration = configuration
        var listen: [(transport: SIPTransportProtocol, address: SocketAddress)] = [(.udp, configuration.listen)]
        if configuration.tcp { listen.append((.tcp, configuration.listen)) }
        var sip = SIPUserAgentConfiguration(
            listen: listen, userAgent: "irisgw-carrier-sim/0.1", contactUser: "carrier",
            prack: .supported, sessionTimer: nil, t1: configuration.t1)
        // A test carrier takes whatever load a test or a benchmark sends it.
        sip.defence = .testPeer
        ua = try SIPUserAgent(configuration: sip)
        calls = LoopBoundBox([:], loop: ua.loop)
        media = try SimMediaThreads(count: configuration.mediaThreads)
        digest = DigestServer(realm: configuration.authRealm, secret: Crypto.randomBytes(count: 32))
    }

    /// Opens the sockets and starts serving; returns the bound addresses (port 0 resolved).
    @discardableResult
    public func start() throws -> [SIPPeer] {
        // Set before the loop runs, so no call can arrive without a delegate.
        ua.delegate = self
        clipStore.withLock { $0 = SimClipStore.shared(executable: configuration.espeak) }
        return try ua.start()
    }

    /// Ends every call (BYE or final response) and stops the SIP and media threads.
    public func shutdown() {
        let ua = self.ua
        ua.loop.sync { [self] in
            for call in calls.value.values { call.sip.hangup(status: 503) }
        }
        ua.shutdown()
        media.stop()
    }

    /// Calls finished so far, in order.
    public var reports: [CallReport] { reportsStore.withLock { $0 } }

    /// Every transfer step so far (REFERs, NOTIFYs and INVITEs with `Replaces`, both ways),
    /// in order.
    public var transfers: [TransferRecord] { transfersStore.withLock { $0 } }

    /// The transfer steps of the calls to `number`, in order.
    public func transfers(for number: String) -> [TransferRecord.Step] {
        transfers.filter { $0.number == number }.map(\.step)
    }

    /// Calls in progress.
    public var activeCalls: Int {
        let ua = self.ua
        return ua.loop.sync { [self] in calls.value.count }
    }

    public func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) {
        let number = call.invite.requestURI?.user ?? ""
        let sim = SimCall(sip: call, number: number, behaviour: TestNumbers.behaviour(for: number), simulator: self)
        calls.value[ObjectIdentifier(sim)] = sim
        sim.start()
    }

    /// The slow-trying number (022) sends no 100 Trying until its script says so.
    public func userAgent(_ ua: SIPUserAgent, sendsTryingFor invite: SIPMessage) -> Bool {
        TestNumbers.behaviour(for: invite.requestURI?.user ?? "") != .slowTrying
    }

    /// The answering-machine clips as they stand (never blocks): `preparing` until made.
    var amdClips: SimClipStore.State {
        clipStore.withLock { $0 }?.state ?? .preparing
    }

    /// A call the simulator placed itself (replaces-call's new INVITE): tracked and reported
    /// like the others (SIP loop).
    func adopt(_ call: SimCall) {
        calls.value[ObjectIdentifier(call)] = call
    }

    /// One transfer step of a call (SIP loop).
    func record(_ call: SimCall, _ step: TransferRecord.Step) {
        let record = TransferRecord(number: call.number, callID: call.sip.callID, step: step)
        transfersStore.withLock { $0.append(record) }
    }

    /// A call's script ended (SIP loop).
    func finished(_ call: SimCall, outcome: String) {
        calls.value[ObjectIdentifier(call)] = nil
        let report = CallReport(number: call.number, behaviour: call.behaviour, outcome: outcome)
        reportsStore.withLock { $0.append(report) }
        onReport?(report)
    }
}
