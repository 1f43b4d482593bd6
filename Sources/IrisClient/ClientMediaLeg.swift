import IOCore
import Media
import SDP
import Synchronization

/// Why a `ClientMediaLeg` could not be created.
public enum ClientMediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The UDP socket could not be bound (`reason` is the system's text).
    case bind(host: String, reason: String)
    /// Opus runs at 8000, 12000, 16000, 24000 or 48000 Hz only.
    case unsupportedSampleRate(Int)
    /// RTP payload types are 0...127.
    case invalidPayloadType(UInt8)
    /// The codec or the thread's timer could not be set up.
    case setup(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .bind(let host, let reason): "cannot bind a UDP socket on \(host): \(reason)"
        case .unsupportedSampleRate(let rate): "Opus cannot run at \(rate) Hz (8000, 12000, 16000, 24000 or 48000)"
        case .invalidPayloadType(let pt): "RTP payload type \(pt) is outside 0...127"
        case .setup(let reason): "media leg setup failed: \(reason)"
        }
    }
}

/// The client's own Opus RTP endpoint toward the gateway (the platform leg): Opus
/// 48000/2 on RTP/AVP, payload type 111 by default, 20 ms frames, mono audio.
///
/// Rates: the codec encodes and decodes at `sampleRate` (48 kHz by default; 8 or 16 kHz
/// also work), mono. The RTP timestamp always runs at 48 kHz and the SDP always says
/// `opus/48000/2`, as RFC 7587 §4 requires whatever the codec's internal rate: 20 ms is
/// 960 ticks. Sources given as `.samples`, the recording and tone measurements are all at
/// `sampleRate`.
///
/// A thread of its own (an `EventLoop` with a 20 ms timerfd) sends one packet per tick
/// once a remote is set, and receives into a jitter buffer that is played out on the same
/// tick into the recording (from the first packet on, a frame per tick: losses concealed,
/// gaps silent). All methods are safe from any thread.
public final class ClientMediaLeg: Sendable {
    /// Where the leg receives (the bound UDP socket).
    public let localAddress: SocketAddress
    /// The PCM rate of sources, recordings and measurements.
    public let sampleRate: Int
    /// The payload type offered for Opus (what we expect to receive).
    public let payloadType: UInt8
    /// The address written into the SDP offer (default: the bound host).
    public let advertisedHost: String

    private let shared: MediaLegShared
    /// The media thread's side, on `loop` only (checked in debug builds).
    private let worker: LoopBound<MediaLegWorker>
    private let loop: EventLoop
    private let stopped = Atomic<Bool>(false)
    private let sessionID = UInt64.random(in: 1...(UInt64(1) << 62))

    /// Binds a UDP socket on `host` (a literal; port 0: the OS picks) and starts the
    /// leg's thread. Nothing is sent until `setRemote` or `applyAnswer`.
    ///
    /// - Parameters:
    ///   - advertisedHost: the address for the SDP offer when `host` is a wildcard
    ///     (0.0.0.0) or not what the gateway should send to.
    ///   - recordingLimitSeconds: how much received audio `recordedSamples()` keeps (the
    ///     first so many seconds); default 10 minutes.
    public init(
        host: String = "127.0.0.1", payloadType: UInt8 = 111, sampleRate: Int = 48_000,
        advertisedHost: String? = nil, recordingLimitSeconds: Double = 600
    ) throws(ClientMediaError) {
        guard Opus.supportedSampleRates.contains(Int32(clamping: sampleRate)) else {
            throw .unsupportedSampleRate(sampleRate)
        }
        guard payloadType <= 127 else { throw .invalidPayloadType(payloadType) }
        let socket: UDPSocket
        do {
            socket = try UDPSocket(bind: SocketAddress(host: host, port: 0), bufferBytes: 256 * 1024)
        } catch {
            throw .bind(host: host, reason: "\(error)")
        }
        let shared = MediaLegShared(
            payloadType: payloadType, sampleRate: sampleRate, recordingLimitSeconds: recordingLimitSeconds)
        let worker: MediaLegWorker
        do {
            worker = try MediaLegWorker(
                shared: shared, socket: socket, payloadType: payloadType, sampleRate: sampleRate)
            loop = try EventLoop()
        } catch {
            throw .setup("\(error)")
        }
        self.worker = LoopBound(worker, loop: loop)
        self.shared = shared
        self.localAddress = socket.local
        self.sampleRate = sampleRate
        self.payloadType = payloadType
        self.advertisedHost = advertisedHost ?? socket.local.host
        // Registered before the thread runs (the builder owns the loop until then): whoever
        // makes a leg, another loop too, never waits on this one.
        loop.register(fd: worker.socket.fd) { [worker] in worker.onReadable() }
        loop.register(fd: worker.timer.fd) { [worker] in worker.onTimer() }
        loop.start(name: "iris-client-rtp")
    }

    deinit { stop() }

    // MARK: - Addressing

    /// Sends to `address` from the next tick on.
    public func setRemote(_ address: SocketAddress) {
        let raw = RawSocketAddress(address)
        shared.remote.withLock { $0 = raw }
    }

    /// Stops sending (receiving goes on).
    public func clearRemote() {
        shared.remote.withLock { $0 = nil }
    }

    /// Where packets go, if anywhere.
    public var remote: SocketAddress? { shared.remote.withLock { $0 }?.address }

    /// The payload type packets are sent with: `payloadType`, or the one an applied answer
    /// gave Opus.
    public var sendPayloadType: UInt8 { shared.sendPayloadType.load(ordering: .relaxed) }

    /// A minimal SDP offer for this leg (CRLF line ends): `v=`, `o=`, `s=`, `c=IN IP4`
    /// (IP6 for an IPv6 host), `t=0 0`, `m=audio <port> RTP/AVP <pt>`, `a=rtpmap:<pt>
    /// opus/48000/2`, `a=fmtp:<pt> minptime=20;useinbandfec=1`, `a=ptime:20`, `a=sendrecv`.
    /// Bump `sessionVersion` for each new offer of the same session (RFC 3264 §8).
    public func sdpOffer(sessionVersion: UInt64 = 1) -> String {
        let opus = RTPMap(payloadType: Int(payloadType), encodingName: "opus", clockRate: 48_000, channels: 2)
        var audio = MediaDescription.audio(port: UInt16(localAddress.port), codecs: [opus], ptime: 20)
        audio.attributes.insert(.fmtp(payloadType: opus.payloadType, "minptime=20;useinbandfec=1"), at: 1)
        return SessionDescription.single(
            audio, host: advertisedHost, sessionID: String(sessionID), version: sessionVersion,
            sessionName: "irisgw-client"
        ).serialize()
    }

    /// Takes the remote address (`c=` and `m=audio` port) and Opus payload type from an SDP
    /// answer and starts sending there. Throws `AudioAnswerError` (nothing changes then).
    @discardableResult
    public func applyAnswer(_ sdp: String) throws(AudioAnswerError) -> SDPAudioAnswer {
        let answer = try SDPAudioAnswer.parse(sdp, preferredPayloadType: payloadType)
        shared.sendPayloadType.store(answer.payloadType, ordering: .relaxed)
        setRemote(answer.remote)
        return answer
    }

    // MARK: - Sending

    /// What is sent; setting it starts the new source from its beginning.
    public var source: AudioSource {
        get { shared.source.withLock { $0 } }
        set {
            shared.source.withLock { $0 = newValue }
            shared.sourceGeneration.add(1, ordering: .releasing)
        }
    }

    /// True once a `.samples` source has been sent to its end.
    public var isSourceFinished: Bool {
        shared.sourceFinished.load(ordering: .relaxed) && shared.sourceGeneration.load(ordering: .relaxed) > 0
    }

    /// Sends silence instead of the source while true (packets keep flowing).
    public var muted: Bool {
        get { shared.muted.load(ordering: .relaxed) }
        set { shared.muted.store(newValue, ordering: .relaxed) }
    }

    /// RTP packets sent so far.
    public func sentPackets() -> Int { shared.sent.load(ordering: .relaxed) }

    // MARK: - Receiving

    /// Opus RTP packets received so far (other payload types and RTCP are not counted).
    public func receivedPackets() -> Int { shared.received.load(ordering: .relaxed) }

    /// The share (0...1) of the energy received in the last `lastSeconds` (at most 10 s)
    /// that lies at `hz` (Goertzel over blocks of whole cycles near 50 ms, relative to the
    /// blocks' total energy): near 1 for a clean tone at `hz`, near 0 when absent or silent.
    public func toneLevel(hz: Double, lastSeconds: Double) -> Double {
        let count = Int(max(lastSeconds, 0) * Double(sampleRate))
        let samples = shared.audio.withLock { $0.last(count) }
        return ReceivedAudio.toneLevel(samples, hz: hz, sampleRate: sampleRate)
    }

    /// The received audio so far, mono at `sampleRate`, one 20 ms frame per tick since the
    /// first packet (up to the recording limit).
    public func recordedSamples() -> [Int16] {
        shared.audio.withLock { $0.recordingCopy() }
    }

    /// Forgets the recording and the audio `toneLevel` looks at.
    public func clearRecording() {
        shared.audio.withLock { $0.clear() }
    }

    // MARK: - Lifecycle

    /// Stops the thread and closes the socket's use (idempotent; the socket itself closes
    /// when the leg is released).
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Once its thread is gone the loop is the caller's: no hop, no wait on a loop's queue.
        loop.stop()
        loop.unregister(fd: worker.value.socket.fd)
        loop.unregister(fd: worker.value.timer.fd)
    }
}
