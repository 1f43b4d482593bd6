import Foundation
import Glibc
import IOCore
import Synchronization
import TestSupport
import Testing

@testable import Media

/// One end of a test call over real UDP on 127.0.0.1 (the carrier, or the app): sends RTP
/// it builds itself and keeps every datagram that arrives, with its source.
final class RTPTestPeer: @unchecked Sendable {  // used by one test task at a time
    /// A datagram that arrived, with its RTP header read (nil fields: not RTP).
    struct Received: Sendable {
        let bytes: [UInt8]
        let source: SocketAddress?
        var payloadType: UInt8 { bytes[1] & 0x7F }
        var marker: Bool { bytes[1] & 0x80 != 0 }
        var sequenceNumber: UInt16 { UInt16(bytes[2]) << 8 | UInt16(bytes[3]) }
        var timestamp: UInt32 { bytes[4...7].reduce(0) { $0 << 8 | UInt32($1) } }
        var ssrc: UInt32 { bytes[8...11].reduce(0) { $0 << 8 | UInt32($1) } }
        var payload: [UInt8] { Array(bytes[12...]) }
    }

    let socket: UDPSocket
    var address: SocketAddress { socket.local }
    let ssrc = UInt32.random(in: 1...UInt32.max)
    var sequenceNumber = UInt16.random(in: 0...UInt16.max)
    var timestamp = UInt32.random(in: 0...UInt32.max)
    private(set) var received: [Received] = []
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)

    /// A peer on `host` (127.0.0.2 plays a stranger: it is on `lo` too).
    init(host: String = "127.0.0.1") throws {
        socket = try UDPSocket(bind: SocketAddress(host: host, port: 0))
    }

    deinit { buffer.deallocate() }

    /// Sends one RTP packet with the next sequence number; the timestamp is the peer's
    /// current one unless given.
    func send(
        payloadType: UInt8, payload: [UInt8], marker: Bool = false, timestamp ts: UInt32? = nil, to: SocketAddress
    ) {
        let ts = ts ?? timestamp
        var packet: [UInt8] = [
            0x80, (marker ? 0x80 : 0) | payloadType, UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF),
            UInt8(ts >> 24), UInt8((ts >> 16) & 0xFF), UInt8((ts >> 8) & 0xFF), UInt8(ts & 0xFF),
            UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)
        ]
        packet += payload
        sequenceNumber &+= 1
        guard let raw = RawSocketAddress(to) else { return }
        packet.withUnsafeBytes { _ = socket.send($0, to: raw) }
    }

    /// Keeps whatever has arrived since the last call.
    func drain() {
        var from = RawSocketAddress()
        while let n = socket.receive(into: buffer, from: &from) {
            received.append(Received(bytes: Array(buffer[0..<n]), source: from.address))
        }
    }

    /// The RTP packets received with `payloadType`, in arrival order.
    func packets(payloadType: UInt8) -> [Received] {
        received.filter { $0.bytes.count >= 12 && $0.payloadType == payloadType }
    }
}

/// A codec at one PCM rate for the test peers: arrays in and out, over `LegCodec`.
final class TestCodec: @unchecked Sendable {  // one user at a time
    let codec: LegCodec
    var frameSamples: Int { codec.frameSamples }
    init(_ codec: AudioCodec, sampleRate: Int) throws {
        self.codec = try LegCodec(codec, sampleRate: sampleRate)
    }

    func encode(_ pcm: [Int16]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 1500)
        let n = pcm.withUnsafeBufferPointer { p in out.withUnsafeMutableBufferPointer { codec.encode(p, into: $0) } }
        return Array(out[0..<n])
    }

    func decode(_ payload: [UInt8]) -> [Int16] {
        var out = [Int16](repeating: 0, count: 5760)
        let n = payload.withUnsafeBufferPointer { p in out.withUnsafeMutableBufferPointer { codec.decode(p, into: $0) }
        }
        return Array(out[0..<n])
    }
}

/// A sine at `frequency` Hz, sample `offset` onwards, peak `amplitude`.
func sine(_ frequency: Double, sampleRate: Int, count: Int, offset: Int, amplitude: Double = 8000) -> [Int16] {
    (0..<count).map { Int16(amplitude * sin(2 * Double.pi * frequency * Double(offset + $0) / Double(sampleRate))) }
}

/// Events reported by a call, collected from its media thread.
final class MediaEventLog: Sendable {
    private let events = Mutex<[MediaEvent]>([])
    func append(_ event: MediaEvent) { events.withLock { $0.append(event) } }
    var all: [MediaEvent] { events.withLock { $0 } }
    /// The digits reported on `leg`, in order.
    func digits(on leg: MediaLeg) -> String {
        String(all.compactMap { if case .dtmf(leg, let d, _) = $0 { d } else { nil } })
    }
}

/// A media engine for one test: one thread, no port quarantine, and 40 ports the OS says are
/// free now (the engine skips a pair another socket takes later, as in production).
enum TestMediaEngine {
    static func make() throws -> MediaEngine {
        try MediaEngine(configuration: .init(threads: 1, portRange: try freePortRange(count: 40), portQuarantine: 0))
    }
}

/// An engine with one call: PCMU toward a "carrier" peer, Opus toward an "app" peer.
func openBridge(
    _ configure: (inout MediaCallConfiguration) -> Void = { _ in }
) throws
    -> (MediaEngine, RTPTestPeer, RTPTestPeer, MediaCall)
{
    let engine = try TestMediaEngine.make()
    let carrier = try RTPTestPeer(), app = try RTPTestPeer()
    var config = MediaCallConfiguration(
        trunk: .init(codec: .pcmu, payloadType: 0, remote: carrier.address),
        platform: .init(codec: .opus(.init()), payloadType: 111, remote: app.address))
    configure(&config)
    do {
        return (engine, carrier, app, try engine.openCall(config))
    } catch {
        engine.shutdown()
        throw error
    }
}

/// `count` 20 ms frames of two tones into `call`: the carrier's 1 kHz in PCMU and the app's
/// 440 Hz in Opus made from `appRate` audio (48 kHz as a browser's, or 8 kHz); what comes
/// back is drained as it arrives.
func pacedTones(_ count: Int, carrier: RTPTestPeer, app: RTPTestPeer, call: MediaCall, appRate: Int) async throws {
    let pcmu = try TestCodec(.pcmu, sampleRate: 8000)
    let opus = try TestCodec(.opus(.init()), sampleRate: appRate)
    let frame = appRate / 50
    await paced(count) { n in
        carrier.send(
            payloadType: 0, payload: pcmu.encode(sine(1000, sampleRate: 8000, count: 160, offset: n * 160)),
            marker: n == 0, to: call.trunkAddress)
        carrier.timestamp &+= 160
        app.send(
            payloadType: 111, payload: opus.encode(sine(440, sampleRate: appRate, count: frame, offset: n * frame)),
            marker: n == 0, to: call.platformAddress)
        app.timestamp &+= 960
        carrier.drain()
        app.drain()
    }
}

/// Runs `body(n)` for packets n = 0..<count, one every `intervalMs` against the monotonic
/// clock (no drift from sleep overshoot), on a thread of its own: the cooperative pool
/// may be busy with other tests, and a stalled sender would look like network jitter.
func paced(_ count: Int, intervalMs: Int = 20, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            var next = timespec()
            clock_gettime(CLOCK_MONOTONIC, &next)
            for n in 0..<count {
                body(n)
                next.tv_nsec += intervalMs * 1_000_000
                while next.tv_nsec >= 1_000_000_000 {
                    next.tv_nsec -= 1_000_000_000
                    next.tv_sec += 1
                }
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) == EINTR {}
            }
            done.resume()
        }
        thread.name = "rtp-test-peer"
        thread.start()
    }
}

/// A value shared between a test and its sender thread, one writer at a time.
final class Shared<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// RFC 4733 digits in `packets` (telephone-event payloads), through a `DTMFReceiver`.
func decodeTelephoneEvents(_ packets: [RTPTestPeer.Received], clockRate: Int) -> String {
    var receiver = DTMFReceiver(configuration: .init(clockRate: clockRate))
    var digits = ""
    var now = 0.0
    for p in packets {
        guard let report = try? TelephoneEvent.parse(p.payload) else { continue }
        now += 0.02
        for case .ended(let d, _) in receiver.receive(
            report, timestamp: p.timestamp, sequenceNumber: p.sequenceNumber, now: now)
        {
            digits.append(d.character)
        }
    }
    for case .ended(let d, _) in receiver.reset() { digits.append(d.character) }
    return digits
}

/// True when `frequency` clearly dominates `audio`: its Goertzel power beats the power at
/// 0.7x and 1.4x the frequency twentyfold. Unlike a share of total energy, this holds when a
/// busy machine adds a concealed or silent frame to the window.
func toneDominates(_ frequency: Double, sampleRate: Double, _ audio: [Int16]) -> Bool {
    let at = Goertzel(frequency: frequency, sampleRate: sampleRate).power(audio)
    return [0.7, 1.4].allSatisfy { at > 20 * Goertzel(frequency: frequency * $0, sampleRate: sampleRate).power(audio) }
}
