import IOCore
import Media
import Synchronization

/// State a `ClientMediaLeg` shares between its media thread and callers: locks and atomics
/// only, touched a few times per 20 ms tick.
final class MediaLegShared: Sendable {
    let remote = Mutex<RawSocketAddress?>(nil)
    let source = Mutex<AudioSource>(.silence)
    /// Bumped on every `source` change, so the media thread takes the lock only then.
    let sourceGeneration = Atomic<UInt64>(0)
    let sourceFinished = Atomic<Bool>(false)
    let muted = Atomic<Bool>(false)
    let sendPayloadType: Atomic<UInt8>
    let sent = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    let audio: Mutex<ReceivedAudio>

    init(payloadType: UInt8, sampleRate: Int, recordingLimitSeconds: Double) {
        sendPayloadType = Atomic(payloadType)
        audio = Mutex(ReceivedAudio(sampleRate: sampleRate, recordingLimitSeconds: recordingLimitSeconds))
    }
}

/// The media thread's side of a `ClientMediaLeg`: socket, timer, codec, jitter buffer and
/// buffers, all allocated here once. Per packet and per tick nothing allocates (the
/// recording grows amortised, see `ReceivedAudio`). Not Sendable: its leg holds it in a
/// `LoopBound`, and the leg's loop alone runs it.
final class MediaLegWorker {
    let shared: MediaLegShared
    let socket: UDPSocket
    let timer: PeriodicTimer
    /// The payload type we offered: what we expect to receive.
    let receivePayloadType: UInt8
    private let codec: LegCodec
    private let sampleRate: Int
    private let frameSamples: Int
    /// RTP timestamp ticks per 20 ms: the Opus clock is 48 kHz whatever the codec's rate.
    private let timestampStep = UInt32(Opus.rtpClockRate / 50)

    private var jitter: JitterBuffer
    private var header: RTPHeader
    private var sentFirst = false
    private var player = SourcePlayer(.silence)
    private var sourceGeneration: UInt64 = 0
    /// Playout (and the recording) starts with the first packet received.
    private var receiving = false

    private let txBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 8)
    private let rxBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    private let sourceFrame: UnsafeMutableBufferPointer<Int16>
    /// Decoded PCM not yet played (a packet may hold up to 120 ms), from index 0.
    private let decoded: UnsafeMutableBufferPointer<Int16>
    private var decodedCount = 0
    private var from = RawSocketAddress()

    init(shared: MediaLegShared, socket: UDPSocket, payloadType: UInt8, sampleRate: Int) throws {
        self.shared = shared
        self.socket = socket
        receivePayloadType = payloadType
        self.sampleRate = sampleRate
        frameSamples = sampleRate / 50
        timer = try PeriodicTimer(interval: 0.020)
        codec = try LegCodec(.opus(.init()), sampleRate: sampleRate)
        jitter = JitterBuffer(configuration: JitterBufferConfiguration(clockRate: Int(Opus.rtpClockRate), capacity: 32))
        header = RTPHeader(
            payloadType: payloadType, sequenceNumber: .random(in: 0 ... .max),
            timestamp: .random(in: 0 ... .max), ssrc: .random(in: 1 ... .max))
        sourceFrame = .allocate(capacity: frameSamples)
        sourceFrame.initialize(repeating: 0)
        decoded = .allocate(capacity: sampleRate * 120 / 1000)
        decoded.initialize(repeating: 0)
    }

    deinit {
        txBuffer.deallocate()
        rxBuffer.deallocate()
        sourceFrame.deallocate()
        decoded.deallocate()
    }

    /// The timerfd fired: one tick per 20 ms. After a stall a few missed ticks are caught
    /// up so the stream keeps time; more than that are dropped (a burst would not help).
    func onTimer() {
        let expirations = timer.read()
        let now = EventLoop.now()
        for _ in 0..<min(expirations, 3) {
            send()
            playOut(now: now)
        }
    }

    /// The socket is readable: every waiting datagram into the jitter buffer.
    func onReadable() {
        let now = EventLoop.now()
        while let n = socket.receive(into: rxBuffer, from: &from) {
            let bytes = UnsafeRawBufferPointer(rebasing: rxBuffer[0..<n])
            guard !RTPMultiplexing.isRTCP(bytes), let view = try? RTPPacketView.parse(bytes) else { continue }
            // Opus only: the offered type, or the answer's if it chose another number.
            let pt = view.payloadType
            guard pt == receivePayloadType || pt == shared.sendPayloadType.load(ordering: .relaxed) else { continue }
            let payload = view.payload(in: bytes)
            guard !payload.isEmpty else { continue }
            let packet = JitterBuffer.Packet(
                sequenceNumber: view.sequenceNumber, timestamp: view.timestamp,
                marker: view.marker, ssrc: view.ssrc, payloadType: pt)
            _ = jitter.insert(packet, payload: payload, arrival: now)
            shared.received.add(1, ordering: .relaxed)
            receiving = true
        }
    }

    /// Encodes and sends the next 20 ms of the source (silence when muted).
    private func send() {
        let generation = shared.sourceGeneration.load(ordering: .acquiring)
        if generation != sourceGeneration {
            sourceGeneration = generation
            player.replace(with: shared.source.withLock { $0 })
            shared.sourceFinished.store(false, ordering: .relaxed)
        }
        player.render(into: sourceFrame, sampleRate: Double(sampleRate))
        if player.isFinished { shared.sourceFinished.store(true, ordering: .relaxed) }
        // Muting replaces the audio, not the stream: the source keeps playing underneath.
        if shared.muted.load(ordering: .relaxed) { sourceFrame.update(repeating: 0) }
        // The timestamp follows time, sent or not; the sequence counts packets sent.
        defer { header.timestamp &+= timestampStep }
        guard let remote = shared.remote.withLock({ $0 }) else { return }
        let payload = UnsafeMutableRawBufferPointer(rebasing: txBuffer[12...]).bindMemory(to: UInt8.self)
        let size = codec.encode(UnsafeBufferPointer(sourceFrame), into: payload)
        guard size > 0 else { return }
        header.payloadType = shared.sendPayloadType.load(ordering: .relaxed)
        header.marker = !sentFirst
        guard (try? header.write(into: txBuffer)) == 12 else { return }
        if socket.send(UnsafeRawBufferPointer(rebasing: txBuffer[0..<(12 + size)]), to: remote) {
            shared.sent.add(1, ordering: .relaxed)
        }
        sentFirst = true
        header.sequenceNumber &+= 1
    }

    /// Plays out one 20 ms frame from the jitter buffer (decoded, concealed or silence) into
    /// the recording and the analysis ring.
    private func playOut(now: Double) {
        guard receiving else { return }
        while decodedCount < frameSamples {
            let space = UnsafeMutableBufferPointer(rebasing: decoded[decodedCount...])
            var produced = 0
            switch jitter.pop(now: now) {
            case .frame(let frame):
                produced = jitter.withPayload(of: frame) {
                    codec.decode($0.assumingMemoryBound(to: UInt8.self), into: space)
                }
            case .conceal(let next?):
                produced = jitter.withPayload(of: next) {
                    codec.conceal(next: $0.assumingMemoryBound(to: UInt8.self), into: space)
                }
            case .conceal(nil):
                produced = codec.conceal(next: nil, into: space)
            case .silence:
                break
            }
            if produced <= 0 {
                // Silence, or a payload that did not decode: pad out the frame.
                UnsafeMutableBufferPointer(rebasing: decoded[decodedCount..<frameSamples]).update(repeating: 0)
                produced = frameSamples - decodedCount
            }
            decodedCount += produced
        }
        let frame = UnsafeBufferPointer(rebasing: decoded[0..<frameSamples])
        shared.audio.withLock { $0.append(frame) }
        // Keep what is left of a long packet for the next ticks.
        let rest = decodedCount - frameSamples
        for i in 0..<rest { decoded[i] = decoded[frameSamples + i] }
        decodedCount = rest
    }
}
