import Foundation
import Glibc
import IOCore
import Media
import SDP
import SIP
import Synchronization

/// The carrier of `BENCH stream` and `BENCH record`: a SIP UAS on UDP that answers every
/// INVITE at once, each call with an RTP socket of its own (one socket per leg, as a real
/// carrier's media has), PCMU both ways. Every 20 ms each call sends a frame: silence, but for
/// a tone burst of `burstFrames` frames once a second (staggered across calls). What comes
/// back is listened to: the first loud frame after a burst began is that burst's echo, and
/// the time between is the audio delay trunk → platform → trunk.
///
/// Everything runs on one thread of its own (its sockets polled, arrivals stamped by the
/// kernel); figures are read through a Mutex.
final class ToneCarrier: Sendable {
    /// What the bench reads while the carrier runs.
    struct Figures: Sendable {
        /// Calls answered and not yet ended (BYE).
        var live = 0
        /// Delays (ms) of the bursts echoed while `measuring`.
        var delaysMs: [Double] = []
        /// Bursts sent while measuring, and those whose echo had not come when the call's next
        /// burst began (a second later).
        var bursts = 0
        var lost = 0
        /// RTP packets received from the gateway, all calls.
        var packetsReceived = 0
        var measuring = false
    }

    /// Frames of tone per burst (80 ms).
    static let burstFrames = 4
    /// A received frame whose mean magnitude is above this is the burst's echo; the burst is
    /// about 8000, silence through G.711 or Opus stays far below.
    static let loudness = 1000.0

    let port: Int
    fileprivate let figures = Mutex(Figures())
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        let sip = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 4 << 20)
        let timer = try PeriodicTimer(interval: 0.020)
        port = sip.local.port
        Thread { [self] in
            var worker = Worker(sip: sip, timer: timer, owner: self)
            while !stopping.load(ordering: .relaxed) { worker.turn() }
            worker.calls.removeAll()
            worker.buffer.deallocate()
            done.signal()
        }.start()
    }

    /// Starts a measured stretch: delays and burst counts from now on only.
    func startMeasuring() {
        figures.withLock {
            $0.delaysMs = []
            $0.bursts = 0
            $0.lost = 0
            $0.measuring = true
        }
    }

    /// Ends the measured stretch; what it gathered.
    func stopMeasuring() -> Figures {
        figures.withLock {
            $0.measuring = false
            return $0
        }
    }

    var live: Int { figures.withLock { $0.live } }
    var packetsReceived: Int { figures.withLock { $0.packetsReceived } }

    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }

    /// One call's leg: its socket, where the gateway's RTP is, the burst waiting for its echo.
    struct Call {
        let socket: UDPSocket
        let remote: RawSocketAddress
        /// The 200 OK, sent again for a retransmitted INVITE.
        let answer: [UInt8]
        /// Ticks this call's bursts are shifted by (calls' bursts spread over the second).
        let phase: Int
        var sequence: UInt16 = 0
        /// When the burst now waiting for its echo began (monotonic s).
        var burstSent: Double?
        /// That burst began while measuring (so its echo counts).
        var burstMeasured = false
    }

    /// The carrier thread's state.
    struct Worker {
        let sip: UDPSocket
        let timer: PeriodicTimer
        /// Its figures (the carrier lives until its thread has ended: `stop` waits for it).
        let owner: ToneCarrier
        var calls: [String: Call] = [:]
        var tick = 0
        var answered = 0
        let silence = [UInt8](repeating: 0xFF, count: 160)
        let tone: [[UInt8]]
        var packet = [UInt8](repeating: 0, count: 1500)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        var pcm: [Int16] = []

        init(sip: UDPSocket, timer: PeriodicTimer, owner: ToneCarrier) {
            self.sip = sip
            self.timer = timer
            self.owner = owner
            // 1 kHz at about a quarter of full scale, continuous across the burst's frames.
            tone = (0..<ToneCarrier.burstFrames).map { f in
                var bytes: [UInt8] = []
                let samples = (0..<160).map { i in
                    Int16(8000 * sin(2 * Double.pi * 1000 * Double(f * 160 + i) / 8000))
                }
                G711.encodeULaw(samples, into: &bytes)
                return bytes
            }
        }

        /// Waits for the next socket or tick (at most 20 ms) and handles what is ready.
        mutating func turn() {
            let order = Array(calls.keys)
            var fds = [pollfd(fd: sip.fd, events: Int16(POLLIN), revents: 0)]
            fds.append(pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0))
            fds += order.map { pollfd(fd: calls[$0]!.socket.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 20) > 0 else { return }
            if fds[0].revents != 0 { readSIP() }
            for (i, id) in order.enumerated() where fds[i + 2].revents != 0 { readRTP(id) }
            if fds[1].revents != 0 {
                _ = timer.read()
                sendFrames()
            }
        }

        mutating func readSIP() {
            var from = RawSocketAddress()
            while let n = sip.receive(into: buffer, from: &from) {
                guard let message = try? SIPMessage.parse(Array(buffer[0..<n])), message.isRequest else { continue }
                if let reply = answer(message) { reply.withUnsafeBytes { _ = sip.send($0, to: from) } }
            }
        }

        /// The response to a request from the gateway (nil for ACK).
        mutating func answer(_ request: SIPMessage) -> [UInt8]? {
            let id = request.callID ?? ""
            switch request.method {
            case "ACK": return nil
            case "INVITE":
                if let call = calls[id] { return call.answer }
                guard let offer = request.sdp, let audio = offer.firstMedia("audio"),
                    let remote = RawSocketAddress(SocketAddress(host: "127.0.0.1", port: Int(offer.media[audio].port))),
                    let socket = try? UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
                else {
                    return SIPMessage.response(to: request, status: 488, toTag: "bench").serialize()
                }
                answered += 1
                var ok = SIPMessage.response(to: request, status: 200, toTag: "bench\(answered)")
                ok.addHeader(.contact, "<sip:carrier@127.0.0.1:\(sip.local.port)>")
                ok.body = Array(
                    BenchSDP.audio(port: socket.local.port, payloadType: 0, rtpmap: "PCMU/8000", session: answered)
                        .utf8)
                ok.setHeader(.contentType, "application/sdp")
                let bytes = ok.serialize()
                calls[id] = Call(socket: socket, remote: remote, answer: bytes, phase: (answered * 7) % 50)
                owner.figures.withLock { $0.live = calls.count }
                return bytes
            case "BYE", "CANCEL":
                if calls.removeValue(forKey: id) != nil { owner.figures.withLock { $0.live = calls.count } }
                return SIPMessage.response(to: request, status: 200).serialize()
            default:
                return SIPMessage.response(to: request, status: 200).serialize()
            }
        }

        /// Drains a call's socket; the first loud frame after a burst is its echo.
        mutating func readRTP(_ id: String) {
            guard var call = calls[id] else { return }
            var from = RawSocketAddress()
            var age = 0.0
            var received = 0
            while let n = call.socket.receive(into: buffer, from: &from, age: &age) {
                received += 1
                guard let began = call.burstSent,
                    let view = try? RTPPacketView.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<n])),
                    !view.payloadRange.isEmpty
                else { continue }
                G711.decodeULaw(Array(buffer[view.payloadRange]), into: &pcm)
                let mean = pcm.reduce(0.0) { $0 + abs(Double($1)) } / Double(max(pcm.count, 1))
                guard mean > ToneCarrier.loudness else { continue }
                let arrived = EventLoop.now() - age
                call.burstSent = nil
                if call.burstMeasured {
                    owner.figures.withLock { if $0.measuring { $0.delaysMs.append((arrived - began) * 1000) } }
                }
            }
            calls[id] = call
            owner.figures.withLock { $0.packetsReceived += received }
        }

        /// One frame to every call: silence, or the burst's next frame.
        mutating func sendFrames() {
            tick += 1
            let now = EventLoop.now()
            let measuring = owner.figures.withLock { $0.measuring }
            var bursts = 0, lost = 0
            for id in calls.keys {
                guard var call = calls[id] else { continue }
                let position = (tick + call.phase) % 50
                if position == 0 {
                    if call.burstSent != nil, call.burstMeasured { lost += 1 }
                    call.burstSent = now
                    call.burstMeasured = measuring
                    if measuring { bursts += 1 }
                }
                let payload = position < ToneCarrier.burstFrames ? tone[position] : silence
                call.sequence &+= 1
                packet.withUnsafeMutableBytes {
                    _ = try? RTPHeader(
                        payloadType: 0, sequenceNumber: call.sequence,
                        timestamp: UInt32(truncatingIfNeeded: tick * 160),
                        ssrc: UInt32(truncatingIfNeeded: id.hashValue)
                    ).write(into: $0)
                }
                packet.replaceSubrange(12..<(12 + 160), with: payload)
                packet.withUnsafeBytes {
                    _ = call.socket.send(UnsafeRawBufferPointer(rebasing: $0[0..<172]), to: call.remote)
                }
                calls[id] = call
            }
            if bursts > 0 || lost > 0 {
                owner.figures.withLock {
                    $0.bursts += bursts
                    $0.lost += lost
                }
            }
        }
    }
}
