import Foundation
import Glibc
import IrisAPI
import IrisClient
import Media
import SIP
import Synchronization
import TestSupport
import Testing

/// Media only the call's peers can speak into (docs/media.md, "Who may send media"), tried as
/// an attacker would against `irisgw serve`: one inbound call whose caller sends PCMU and
/// RFC 4733 from 127.0.0.1, and a sender on 127.0.0.2 that knows only the gateway's trunk
/// RTP port. The app joins with the Swift client and measures what it hears.
extension GatewaySuites {
    @Suite struct HostileMediaTests {
        /// A UDP socket that sends RTP (PCMU tones, RFC 4733 events) to one address and counts
        /// what comes back. Any thread may call it: the talker's thread and the test both send
        /// through the caller's, so its stream state is behind a lock.
        final class RTPSender: Sendable {
            private struct Stream {
                var sequence: UInt16 = 1
                var timestamp: UInt32 = 1000
                var phase = 0.0
                var buffer = [UInt8](repeating: 0, count: 2048)
                var received = 0
            }

            let socket: UDPSocket
            private let target: RawSocketAddress
            private let ssrc = UInt32.random(in: 1...UInt32.max)
            private let stream = Mutex(Stream())

            /// Sends from `socket` (bound already: its port may be in an SDP) to `target`.
            init(socket: UDPSocket, to target: SocketAddress) throws {
                self.socket = socket
                guard let raw = RawSocketAddress(target) else {
                    throw SocketError("bad target \(target)", code: EINVAL)
                }
                self.target = raw
            }

            convenience init(host: String, to target: SocketAddress) throws {
                try self.init(socket: try UDPSocket(bind: SocketAddress(host: host, port: 0)), to: target)
            }

            /// Sends one packet at the stream's timestamp, then moves the timestamp on by `step`.
            private func send(
                payloadType: UInt8, marker: Bool = false, step: UInt32,
                payload: (Double) -> (bytes: [UInt8], phase: Double)
            ) {
                stream.withLock { s in
                    let (bytes, phase) = payload(s.phase)
                    s.phase = phase
                    let header = RTPHeader(
                        marker: marker, payloadType: payloadType, sequenceNumber: s.sequence, timestamp: s.timestamp,
                        ssrc: ssrc)
                    s.sequence &+= 1
                    s.timestamp &+= step
                    s.buffer.withUnsafeMutableBytes { out in
                        guard let n = try? header.write(into: out) else { return }
                        UnsafeMutableRawBufferPointer(rebasing: out[n..<(n + bytes.count)]).copyBytes(from: bytes)
                        _ = socket.send(UnsafeRawBufferPointer(rebasing: out[0..<(n + bytes.count)]), to: target)
                    }
                }
            }

            /// One 20 ms PCMU frame of a `hz` tone at half scale.
            func sendTone(_ hz: Double) {
                send(payloadType: 0, step: 160) { phase in
                    let pcm = (0..<160).map { i in Int16(16_000 * sin(phase + 2 * Double.pi * hz * Double(i) / 8000)) }
                    var ulaw = [UInt8]()
                    G711.encodeULaw(pcm, into: &ulaw)
                    return (ulaw, phase + 2 * Double.pi * hz * 160 / 8000)
                }
            }

            /// One digit as a single RFC 4733 end report (a new event each call: its own timestamp).
            func sendDigit(_ event: UInt8) {
                send(payloadType: 101, marker: true, step: 960) { phase in
                    var payload = [UInt8]()
                    TelephoneEvent(event: event, isEnd: true, duration: 800).serialize(into: &payload)
                    return (payload, phase)
                }
            }

            /// Reads what is waiting; the count of every datagram read so far.
            @discardableResult
            func drain() -> Int {
                stream.withLock { s in
                    var from = RawSocketAddress()
                    let n = s.buffer.withUnsafeMutableBytes { out in
                        var n = 0
                        while socket.receive(into: out, from: &from) != nil { n += 1 }
                        return n
                    }
                    s.received += n
                    return s.received
                }
            }
        }

        /// Sends a `hz` tone from `sender` every 20 ms on a thread of its own until stopped,
        /// draining what comes back; `paused` skips the sending (a silent peer).
        final class Talker: Sendable {
            let paused = Atomic<Bool>(false)
            private let stopped = Atomic<Bool>(false)

            init(_ sender: RTPSender, hz: Double) {
                Thread { [self] in
                    var next = SIPEventLoop.now()
                    while !stopped.load(ordering: .relaxed) {
                        if !paused.load(ordering: .relaxed) { sender.sendTone(hz) }
                        sender.drain()
                        next += 0.020
                        let wait = next - SIPEventLoop.now()
                        if wait > 0 { usleep(UInt32(wait * 1e6)) }  // the 20 ms pacing, on its own thread
                    }
                }.start()
            }

            /// Ends the sending without waiting (for a `defer`): the thread sees the flag within
            /// 20 ms, after at most one more packet.
            func stop() {
                stopped.store(true, ordering: .relaxed)
            }
        }

        /// Runs `body(n)` for n in 0..<count every `intervalMs` on a thread, and waits for it
        /// without holding a cooperative thread.
        static func paced(_ count: Int, intervalMs: Double = 20, _ body: @escaping @Sendable (Int) -> Void) async {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread {
                    for n in 0..<count {
                        body(n)
                        if intervalMs > 0 { usleep(UInt32(intervalMs * 1000)) }  // the pacing, on its own thread
                    }
                    done.resume()
                }.start()
            }
        }

        static func residentBytes(_ connection: IrisRtcConnection) throws -> Double {
            let text = try connection.metricsText()
            let line = text.split(separator: "\n").first { $0.hasPrefix("process_resident_memory_bytes ") }
            return line.flatMap { Double($0.split(separator: " ")[1]) } ?? 0
        }

        @Test func onlyTheCallerSpeaksIntoTheCall() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            // The caller's media: our own socket on 127.0.0.1, named in SIPp's SDP.
            let callerSocket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
            let mediaPort = callerSocket.local.port
            let scenario = CallerScenarios.answered(talkMs: 60_000)
                .replacingOccurrences(of: "[media_port]", with: String(mediaPort))
                .replacingOccurrences(of: "[media_ip]", with: "127.0.0.1")
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            let sipp = try GatewayInboundTests.caller(gw, scenario)
            defer { sipp.stop() }
            let note = await listener.next(timeout: 10)
            listener.close()
            let n = try #require(note, sipp.report)
            let room = try #require(n.roomid)
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 600, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: room, roomToken: n.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            let connection = try gw.connection()
            // The gateway's RTP host is the harness's 127.0.0.1; its port, from our 200 OK's SDP.
            let port = try await #require(
                try connection.sipTrace(roomId: room).ourMediaPort, "no SDP of ours in the trace")
            let trunk = SocketAddress(host: "127.0.0.1", port: port)

            // The caller talks from the port its SDP named.
            let peer = try RTPSender(socket: callerSocket, to: trunk)
            let talker = Talker(peer, hz: 440)
            defer { talker.stop() }
            let attacker = try RTPSender(host: "127.0.0.2", to: trunk)
            let legStats = { try? connection.snapshot(roomId: room).trunk }

            // The caller's tone reaches the app.
            var level440 = 0.0
            _ = await eventually(timeout: 5) {
                level440 = session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.5)
                return level440 > 0.3
            }
            #expect(level440 > 0.3, "the caller's 440 Hz is not heard: \(level440)")

            // Audio: a 2600 Hz tone from 127.0.0.2 for 2 s is not in what the app hears.
            await Self.paced(100) { _ in attacker.sendTone(2600) }
            let level2600 = session.stream.leg.toneLevel(hz: 2600, lastSeconds: 1.5)
            #expect(level2600 < 0.01, "the stranger's 2600 Hz reached the app at \(level2600) of the audio")
            #expect(session.stream.leg.toneLevel(hz: 440, lastSeconds: 1.5) > 0.3)

            // Digits: forged telephone-events from 127.0.0.2 are not reported; then the
            // caller's own digit is (the wait's condition).
            await Self.paced(200, intervalMs: 1) { i in attacker.sendDigit(UInt8(i % 10)) }
            peer.sendDigit(11)  // '#'
            #expect(
                await rec.waitFor(timeout: 5) { $0.contains { $0.event == .onSessionDTMF && $0.digit == "#" } },
                "\(rec.trace)")
            let digits = rec.events.filter { $0.event == .onSessionDTMF }.compactMap(\.digit)
            #expect(digits == ["#"], "digits reported: \(digits)")

            // Hijack: the caller pauses 3 s, the stranger sends 20 packets, the caller resumes.
            talker.paused.store(true, ordering: .relaxed)
            try await Task.sleep(nanoseconds: 3_000_000_000)  // the scenario's pause, not a wait for a condition
            await Self.paced(20) { _ in attacker.sendTone(2600) }
            talker.paused.store(false, ordering: .relaxed)
            let before = peer.drain()
            #expect(
                await eventually(timeout: 5) { peer.drain() - before >= 100 },
                "the caller no longer gets the app's audio")
            #expect(attacker.drain() == 0, "the stranger got \(attacker.drain()) packets of the app's audio")
            let dropped = legStats()?.sourceDropped ?? 0
            #expect(dropped >= 300, "source drops counted: \(dropped)")

            // Flood: 20,000 digits from the caller itself cost neither events nor memory.
            let rssBefore = try Self.residentBytes(connection)
            let eventsBefore = rec.events.count
            await Self.paced(20_000, intervalMs: 0) { i in
                peer.sendDigit(UInt8(i % 10))
                if i % 200 == 199 { usleep(2000) }  // stay within the socket's buffer
            }
            // A marker digit ('*', not in the flood) on every poll until one is reported: the
            // bucket the flood emptied lets one through once it has refilled.
            #expect(
                await eventually(timeout: 10) {
                    peer.sendDigit(10)
                    return rec.events.contains { $0.event == .onSessionDTMF && $0.digit == "*" }
                }, "\(rec.trace)")
            let reported = rec.events.dropFirst(eventsBefore).filter { $0.event == .onSessionDTMF && $0.digit != "*" }
                .count
            let stats = legStats()
            #expect(reported <= 200, "\(reported) digits of a 20,000-digit flood were reported")
            #expect((stats?.dtmfDropped ?? 0) >= 10_000, "digits dropped: \(String(describing: stats?.dtmfDropped))")
            let growth = try Self.residentBytes(connection) - rssBefore
            #expect(growth < 4_000_000, "RSS grew \(Int(growth / 1e6)) MB over the flood")
        }
    }
}
