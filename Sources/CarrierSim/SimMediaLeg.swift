import Foundation
import IOCore
import Media
import Synchronization

/// What a leg does with the audio it receives.
public enum EchoMode: Sendable, Equatable {
    /// Drop it.
    case off
    /// Send every received audio packet straight back to its source, with our SSRC and
    /// sequence numbers (the carrier numbers' RTP echo; no decoding).
    case packets
    /// Decode it and mix it into what we send each 20 ms (the `carrier-sim call` side, which
    /// plays a tone and echoes at once on one stream).
    case mixed
}

/// Counters a leg's media thread keeps for the SIP side and tests; atomics and one lock.
public final class SimMediaCounters: Sendable {
    /// RTP packets received (audio and telephone-event).
    public let received = Atomic<Int>(0)
    /// Audio packets echoed back (`EchoMode.packets`).
    public let echoed = Atomic<Int>(0)
    /// Packets we generated (tone, mixed echo, telephone-event).
    public let sent = Atomic<Int>(0)
    /// Echo packets dropped on purpose (`Impairment`, the lossy number).
    public let dropped = Atomic<Int>(0)
    private let digits = Mutex<String>("")

    /// RFC 4733 digits received so far, in order.
    public var receivedDigits: String { digits.withLock { $0 } }
    func append(digit: Character) { digits.withLock { $0.append(digit) } }
}

/// What a leg does to the echo it sends, as a bad network would (the lossy number): drops
/// `loss` of the packets (one at a random place in each run of `1/loss`) and delays each of the rest by a uniform 0 to `jitter`
/// seconds (so packets may overtake each other).
public struct Impairment: Sendable, Equatable {
    /// Fraction of packets dropped, 0...1.
    public var loss: Double
    /// Largest extra delay, seconds.
    public var jitter: Double
    public init(loss: Double, jitter: Double) {
        self.loss = min(max(loss, 0), 1)
        self.jitter = max(jitter, 0)
    }
}

/// One call's RTP endpoint on the simulator's media host: a UDP socket with an OS-chosen
/// port, pinned to one media thread. It echoes, plays tones encoded with the negotiated
/// codec, and sends and receives RFC 4733 digits. Every method may be called from any
/// thread: each hops to the media thread.
public final class SimMediaLeg: Sendable {
    /// The port our SDP names.
    public let localPort: UInt16
    /// The host our SDP names.
    public let host: String
    public let counters: SimMediaCounters
    private let thread: SimMediaThread
    /// Names the leg's worker on its thread (only that thread holds the worker).
    private let id: Int

    /// Opens a leg for `choice` on `host`, sending to `remote` (the SDP's address) until RTP
    /// from the peer shows where it really is.
    public init(host: String, choice: CodecChoice, remote: SocketAddress?, threads: SimMediaThreads) throws {
        let socket = try UDPSocket(bind: SocketAddress(host: host, port: 0))
        localPort = UInt16(socket.local.port)
        self.host = host
        counters = SimMediaCounters()
        thread = threads.pick()
        id = threads.nextLegID()
        // Built here, then handed to its thread: nothing here touches it after the hand-off.
        nonisolated(unsafe) let worker = try SimMediaWorker(
            socket: socket, choice: choice, remote: remote, counters: counters, loop: thread.loop)
        let (thread, id) = (self.thread, self.id)
        thread.loop.execute { thread.add(worker, id: id) }
    }

    /// Changes what we do with received audio.
    public func setEcho(_ mode: EchoMode) { onThread { $0.echo = mode } }

    /// Plays `tone` from now on, or stops playing for nil.
    public func play(_ tone: SineTone?) { play(tones: tone.map { [$0] } ?? []) }

    /// Plays the sum of `tones` from now on (none: silence).
    public func play(tones: [SineTone]) { onThread { $0.tones = tones } }

    /// Plays `clip` from its start from now on (nil: stops it), at the codec's rate, with
    /// any tones; after a clip that does not repeat, sends silence.
    public func play(clip: SimClip?) { onThread { $0.clip = clip.map(SimClipPlayer.init) } }

    /// Echoed G.711 audio re-encoded in the other law and sent with that law's static payload
    /// type (PCMU answered, PCMA payload type 8 sent): the codec-mismatch number.
    public func setMisencodedEcho(_ on: Bool) { onThread { $0.misencode = on } }

    /// Loss and jitter applied to the echo from now on (nil: none).
    public func setImpairment(_ impairment: Impairment?) { onThread { $0.impairment = impairment } }

    /// Queues RFC 4733 digits (0-9 * # A-D); ignored when the call has no telephone-event.
    public func send(digits: String) { onThread { try? $0.dtmfSender.enqueue(digits) } }

    /// Whether received RFC 4733 digits are sent back as RFC 4733 (number 009).
    public func setDigitEcho(_ on: Bool) { onThread { $0.echoDigits = on } }

    /// Where to send: a new SDP address (re-INVITE, or the answer to our offer).
    public func setRemote(_ address: SocketAddress?) { onThread { $0.setRemote(address) } }

    /// Switches codec (the answer to our offer chose another one).
    public func reconfigure(_ choice: CodecChoice) { onThread { try? $0.reconfigure(choice) } }

    /// Stops the leg and closes its socket.
    public func close() {
        let (thread, id) = (self.thread, self.id)
        thread.loop.execute { thread.remove(id) }
    }

    private func onThread(_ change: @escaping @Sendable (SimMediaWorker) -> Void) {
        let (thread, id) = (self.thread, self.id)
        thread.loop.execute { thread.worker(id).map(change) }
    }
}

/// The media-thread side of a `SimMediaLeg`: socket, codec state, RTP header and buffers,
/// allocated once; the per-packet and per-tick paths allocate nothing. Not Sendable: built
/// by the leg and handed to its media thread, which alone holds it from then on.
final class SimMediaWorker {
    let socket: UDPSocket
    let counters: SimMediaCounters
    var echo: EchoMode = .off
    var tones: [SineTone] = []
    var clip: SimClipPlayer?
    var misencode = false
    var impairment: Impairment?
    /// Where the echo is in its run of `1/loss` packets, and which one of the run is dropped.
    private var lossRun = (position: 0, dropped: 0)
    private unowned let loop: EventLoop
    var echoDigits = false
    var dtmfSender = DTMFSender()
    private var dtmfReceiver = DTMFReceiver()

    private var codec: LegCodec
    private var payloadType: UInt8
    private var eventPayloadType: UInt8?
    private var header: RTPHeader
    /// Our RTP clock (8 kHz for every codec here, G.722 included: RFC 3551).
    private var timestamp: UInt32
    /// Added to an echoed packet's timestamp so it lands on our clock.
    private var echoOffset: UInt32?
    private var remote: RawSocketAddress?

    private let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    private let tx = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 8)
    /// One 20 ms frame at up to 16 kHz.
    private let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 320)
    private let heard = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 960)
    private var heardFresh = false
    private var from = RawSocketAddress()

    init(
        socket: UDPSocket, choice: CodecChoice, remote: SocketAddress?, counters: SimMediaCounters, loop: EventLoop
    ) throws {
        self.socket = socket
        self.counters = counters
        self.loop = loop
        codec = try LegCodec(choice.codec, sampleRate: choice.sampleRate)
        payloadType = UInt8(choice.rtpMap.payloadType)
        eventPayloadType = choice.telephoneEvent.map { UInt8($0.payloadType) }
        timestamp = .random(in: 0 ... .max)
        header = RTPHeader(
            payloadType: payloadType, sequenceNumber: .random(in: 0 ... .max), timestamp: 0,
            ssrc: .random(in: 1 ... .max))
        frame.initialize(repeating: 0)
        heard.initialize(repeating: 0)
        setRemote(remote)
    }

    deinit {
        rx.deallocate()
        tx.deallocate()
        frame.deallocate()
        heard.deallocate()
    }

    func setRemote(_ address: SocketAddress?) {
        if let address, address.port > 0, let raw = RawSocketAddress(address) { remote = raw }
    }

    func reconfigure(_ choice: CodecChoice) throws {
        codec = try LegCodec(choice.codec, sampleRate: choice.sampleRate)
        payloadType = UInt8(choice.rtpMap.payloadType)
        eventPayloadType = choice.telephoneEvent.map { UInt8($0.payloadType) }
    }

    // MARK: Receive

    func onReadable() {
        let now = EventLoop.now()
        while let n = socket.receive(into: rx, from: &from) {
            let bytes = UnsafeRawBufferPointer(rebasing: rx[0..<n])
            guard !RTPMultiplexing.isRTCP(bytes), let view = try? RTPPacketView.parse(bytes) else { continue }
            counters.received.add(1, ordering: .relaxed)
            // Symmetric RTP: answer where the peer really sends from.
            remote = from
            if let ept = eventPayloadType, view.payloadType == ept {
                receiveEvent(view, bytes, now: now)
            } else if view.payloadType == payloadType {
                receiveAudio(view, n)
            }
        }
    }

    private func receiveAudio(_ view: RTPPacketView, _ length: Int) {
        switch echo {
        case .off:
            return
        case .packets:
            // Digits go out on our clock; audio under them would garble them.
            guard !dtmfSender.isSendingEvent else { return }
            let offset = echoOffset ?? (timestamp &- view.timestamp)
            echoOffset = offset
            header.sequenceNumber &+= 1
            // Rewrite sequence, timestamp and SSRC in place; payload and marker stay.
            RTPBytes.store16(header.sequenceNumber, rx, 2)
            RTPBytes.store32(view.timestamp &+ offset, rx, 4)
            RTPBytes.store32(header.ssrc, rx, 8)
            if misencode { misencodeInPlace(view, length) }
            if let impairment {
                sendImpaired(length, impairment)
            } else if socket.send(UnsafeRawBufferPointer(rebasing: rx[0..<length]), to: from) {
                counters.echoed.add(1, ordering: .relaxed)
            }
        case .mixed:
            let payload = view.payload(in: UnsafeRawBufferPointer(rebasing: rx[0..<length]))
            let decoded = payload.withMemoryRebound(to: UInt8.self) { codec.decode($0, into: heard) }
            // Only the first 20 ms of a longer packet are mixed: enough for an echo.
            if decoded > 0 { heardFresh = true }
        }
    }

    /// Re-encodes the G.711 payload in `rx` in the other law and sets that law's payload type
    /// (the codec-mismatch number: PCMU answered, PCMA sent as payload type 8).
    private func misencodeInPlace(_ view: RTPPacketView, _ length: Int) {
        let payload = view.payload(in: UnsafeRawBufferPointer(rebasing: rx[0..<length]))
        guard let base = payload.baseAddress, let rxBase = rx.baseAddress else { return }
        let offset = UnsafeRawPointer(rxBase).distance(to: base)
        let count = min(payload.count, heard.count)
        let bytes = UnsafeMutableRawBufferPointer(rebasing: rx[offset..<(offset + count)]).bindMemory(to: UInt8.self)
        let pcm = UnsafeMutableBufferPointer(rebasing: heard[0..<count])
        let otherPayloadType: UInt8
        switch codec.codec {
        case .pcmu:
            G711.decodeULaw(UnsafeBufferPointer(bytes), into: pcm)
            G711.encodeALaw(UnsafeBufferPointer(pcm), into: bytes)
            otherPayloadType = 8
        case .pcma:
            G711.decodeALaw(UnsafeBufferPointer(bytes), into: pcm)
            G711.encodeULaw(UnsafeBufferPointer(pcm), into: bytes)
            otherPayloadType = 0
        default:
            return
        }
        rx[1] = (rx[1] & 0x80) | otherPayloadType
    }

    /// Drops the echo packet in `rx` at random, or sends it after a random delay (a copy, on
    /// a loop timer: the lossy number is a test tool, one small allocation per packet).
    private func sendImpaired(_ length: Int, _ impairment: Impairment) {
        if drops(impairment.loss) {
            counters.dropped.add(1, ordering: .relaxed)
            return
        }
        let delay = impairment.jitter > 0 ? Double.random(in: 0...impairment.jitter) : 0
        let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: rx[0..<length]))
        let to = from
        _ = loop.schedule(after: delay) { [weak self] in
            guard let self else { return }
            let sent = bytes.withUnsafeBytes { self.socket.send($0, to: to) }
            if sent { self.counters.echoed.add(1, ordering: .relaxed) }
        }
    }

    /// Whether to drop this packet: one at a random place in each run of `1/loss` packets, so
    /// the loss is random in where it falls but its rate holds over any few seconds (a test
    /// that checks the loss is flagged must not pass by a lucky draw).
    private func drops(_ loss: Double) -> Bool {
        guard loss > 0 else { return false }
        let run = max(1, Int((1 / loss).rounded()))
        if lossRun.position == 0 { lossRun.dropped = Int.random(in: 0..<run) }
        let drop = lossRun.position == lossRun.dropped
        lossRun.position = (lossRun.position + 1) % run
        return drop
    }

    private func receiveEvent(_ view: RTPPacketView, _ bytes: UnsafeRawBufferPointer, now: Double) {
        guard let report = try? TelephoneEvent.parse(view.payload(in: bytes)) else { return }
        let events = dtmfReceiver.receive(
            report, timestamp: view.timestamp, sequenceNumber: view.sequenceNumber, now: now)
        handle(events)
    }

    private func handle(_ events: DTMFEvents) {
        for event in events {
            guard case .ended(let digit, _) = event else { continue }
            counters.append(digit: digit.character)
            if echoDigits { try? dtmfSender.enqueue(String(digit.character)) }
        }
    }

    // MARK: Send, every 20 ms

    func tick(now: Double) {
        handle(dtmfReceiver.tick(now: now))
        defer { timestamp &+= 160 }
        guard let remote else { return }
        if let ept = eventPayloadType, let packet = dtmfSender.tick(timestamp: timestamp) {
            sendEvent(packet, payloadType: ept, to: remote)
            return
        }
        guard !dtmfSender.isSendingEvent else { return }
        let samples = codec.frameSamples
        let pcm = UnsafeMutableBufferPointer(rebasing: frame[0..<samples])
        var haveAudio = false
        pcm.update(repeating: 0)
        for i in tones.indices {
            tones[i].mix(into: pcm, sampleRate: codec.sampleRate)
            haveAudio = true
        }
        if clip != nil {
            clip?.mix(into: pcm, sampleRate: codec.sampleRate)
            haveAudio = true
        }
        if echo == .mixed, heardFresh {
            for i in 0..<samples { pcm[i] = Int16(clamping: Int32(pcm[i]) + Int32(heard[i])) }
            heardFresh = false
            haveAudio = true
        }
        guard haveAudio else { return }
        sendAudio(pcm, to: remote)
    }

    private func sendAudio(_ pcm: UnsafeMutableBufferPointer<Int16>, to remote: RawSocketAddress) {
        header.payloadType = payloadType
        header.marker = false
        header.sequenceNumber &+= 1
        header.timestamp = timestamp
        let headerLength = header.encodedLength
        let payload = UnsafeMutableRawBufferPointer(rebasing: tx[headerLength...]).bindMemory(to: UInt8.self)
        let size = codec.encode(UnsafeBufferPointer(pcm), into: payload)
        guard size > 0,
            let length = try? RTPPacket.build(
                header: header, payload: UnsafeRawBufferPointer(rebasing: tx[headerLength..<(headerLength + size)]),
                into: tx)
        else { return }
        if socket.send(UnsafeRawBufferPointer(rebasing: tx[0..<length]), to: remote) {
            counters.sent.add(1, ordering: .relaxed)
        }
    }

    private func sendEvent(_ packet: DTMFSender.Packet, payloadType: UInt8, to remote: RawSocketAddress) {
        header.payloadType = payloadType
        header.marker = packet.marker
        header.sequenceNumber &+= 1
        header.timestamp = packet.timestamp
        guard let headerLength = try? header.write(into: tx) else { return }
        let n = packet.report.serialize(into: UnsafeMutableRawBufferPointer(rebasing: tx[headerLength...]))
        if socket.send(UnsafeRawBufferPointer(rebasing: tx[0..<(headerLength + n)]), to: remote) {
            counters.sent.add(1, ordering: .relaxed)
        }
    }
}

/// Big-endian stores into a packet buffer (RTP is network byte order).
enum RTPBytes {
    static func store16(_ v: UInt16, _ b: UnsafeMutableRawBufferPointer, _ at: Int) {
        b[at] = UInt8(v >> 8)
        b[at + 1] = UInt8(truncatingIfNeeded: v)
    }

    static func store32(_ v: UInt32, _ b: UnsafeMutableRawBufferPointer, _ at: Int) {
        b[at] = UInt8(v >> 24)
        b[at + 1] = UInt8(truncatingIfNeeded: v >> 16)
        b[at + 2] = UInt8(truncatingIfNeeded: v >> 8)
        b[at + 3] = UInt8(truncatingIfNeeded: v)
    }
}
