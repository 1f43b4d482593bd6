import Foundation
import Glibc
import ICE
import IOCore
import Media
import TLS

/// `BENCH webrtc`: transcoded calls on one media thread whose platform legs are WebRTC
/// (ICE-lite, DTLS-SRTP, rtcp-mux) against the same calls with plain RTP platform legs, both
/// driven by one generator of this file (PCMU into the trunk legs, Opus into the platform
/// legs, 20 ms), alternated in the same run; and the time from opening a call to the first
/// packet the "browser" decrypts (a STUN check with USE-CANDIDATE, a DTLS handshake, the
/// first SRTP), for one call alone and for `calls` set up at once.
///
/// The generator is a thread of this process (it has to hold a DTLS client per call); the
/// ratio compares the media thread's own CPU (`MediaEngine.cpuTime`), which the generator
/// does not touch.
enum WebRTCBench {
    static let gatewayCredentials = ICECredentials(ufrag: "benchgw", pwd: "bench-gateway-password-0123")
    static let browserCredentials = ICECredentials(ufrag: "benchbr", pwd: "bench-browser-password-0123")

    struct Step {
        var channelsPerCore: Double
        /// Per call, ms from open to the first decrypted (WebRTC) or received (plain) packet.
        var setupMs: [Double]
        var keyed: Int
        var late: Int
    }

    /// One generator call: where to send, and the browser's DTLS and SRTP.
    final class BrowserCall {
        let trunk: RawSocketAddress
        let platform: RawSocketAddress
        var dtls: DTLSTransport?
        var srtp: SRTPSession?
        let openedAt: Double
        var firstMediaAt: Double?
        init(trunk: RawSocketAddress, platform: RawSocketAddress, dtls: DTLSTransport?, openedAt: Double) {
            self.trunk = trunk
            self.platform = platform
            self.dtls = dtls
            self.openedAt = openedAt
        }
    }

    static func step(
        calls n: Int, webrtc: Bool, seconds: Double, gateway: DTLSContext, browser: DTLSContext
    ) throws -> Step {
        let engine = try MediaEngine(configuration: .init(threads: 1, portRange: 30_000...39_999, portQuarantine: 0))
        defer { engine.shutdown() }
        let socket = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0), bufferBytes: 16 << 20)
        var opened: [MediaCall] = []
        defer { opened.forEach { $0.close() } }
        var calls: [Int: BrowserCall] = [:]  // by the engine's platform port
        for _ in 0..<n {
            var platform = MediaLegConfiguration(
                codec: .opus(.init(complexity: 5)), payloadType: 111, remote: webrtc ? nil : socket.local)
            if webrtc {
                platform.webrtc = WebRTCMediaConfiguration(
                    local: gatewayCredentials, remote: browserCredentials, context: gateway,
                    role: .server, peerFingerprints: [browser.certificate.fingerprint])
            }
            let now = EventLoop.now()
            let call = try engine.openCall(
                MediaCallConfiguration(
                    trunk: .init(codec: .pcmu, payloadType: 0, remote: socket.local),
                    platform: platform, rtpTimeout: 0))
            opened.append(call)
            guard let t = RawSocketAddress(call.trunkAddress), let p = RawSocketAddress(call.platformAddress) else {
                continue
            }
            let dtls =
                webrtc
                ? try DTLSTransport(
                    context: browser, role: .client, peerFingerprints: [gateway.certificate.fingerprint]) : nil
            let b = BrowserCall(trunk: t, platform: p, dtls: dtls, openedAt: now)
            calls[call.platformAddress.port] = b
            if webrtc {
                // The browser's check, then its ClientHello.
                let check = try STUNMessage(
                    type: .bindingRequest, transactionID: .random(),
                    attributes: [
                        .username("\(gatewayCredentials.ufrag):\(browserCredentials.ufrag)"), .priority(1_845_501_695),
                        .iceControlling(tieBreaker: 7), .useCandidate
                    ]
                ).serialized(integrityKey: Array(gatewayCredentials.pwd.utf8), fingerprint: true)
                check.withUnsafeBytes { _ = socket.send($0, to: p) }
                for d in b.dtls!.start(now: now).datagrams { d.withUnsafeBytes { _ = socket.send($0, to: p) } }
            }
        }
        let (pcmu, opus) = try MediaBench.payloads()
        var packet = [UInt8](repeating: 0, count: 1500)
        let rx = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { rx.deallocate() }
        var from = RawSocketAddress()
        let timer = try PeriodicTimer(interval: 0.020)
        var pfd = pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0)
        var tick = 0

        /// One 20 ms step of the generator: PCMU to every trunk leg, Opus (SRTP once keyed)
        /// to every platform leg that can take it, then everything that came back.
        func generate() {
            while poll(&pfd, 1, 100) == 0 {}
            _ = timer.read()
            let seq = UInt16(truncatingIfNeeded: tick)
            for (i, b) in calls.values.enumerated() {
                MediaBench.send(
                    &packet, pt: 0, seq: seq, ts: UInt32(tick) &* 160, ssrc: UInt32(i * 2 + 1),
                    payload: pcmu[tick % 50], to: b.trunk,
                    via: socket, srtp: nil)
                if !webrtc || b.srtp != nil {
                    MediaBench.send(
                        &packet, pt: 111, seq: seq, ts: UInt32(tick) &* 960, ssrc: UInt32(i * 2 + 2),
                        payload: opus[tick % 50],
                        to: b.platform, via: socket, srtp: b.srtp)
                }
            }
            tick += 1
            let now = EventLoop.now()
            while let length = socket.receive(into: rx, from: &from) {
                guard let port = from.address?.port, let b = calls[port] else { continue }
                let first = rx[0]
                if webrtc, PacketKind(firstByte: first) == .dtls, var dtls = b.dtls {
                    let out = dtls.receive(UnsafeRawBufferPointer(rebasing: rx[0..<length]), now: now)
                    for d in out.datagrams { d.withUnsafeBytes { _ = socket.send($0, to: b.platform) } }
                    if let keys = out.keys, let suite = SRTPSuite(rawValue: keys.suiteName) {
                        b.srtp = try? SRTPSession(
                            SRTPConfiguration(suite: suite, sendKey: keys.sendKey, receiveKey: keys.receiveKey))
                    }
                    b.dtls = dtls
                } else if PacketKind(firstByte: first) == .rtp, b.firstMediaAt == nil, length > 1,
                    !(192...223).contains(rx[1])
                {
                    if webrtc {
                        guard let srtp = b.srtp, case .ok = srtp.unprotectRTP(rx, length: length) else { continue }
                    }
                    b.firstMediaAt = now
                }
            }
            if webrtc {
                for b in calls.values where b.srtp == nil {
                    guard var dtls = b.dtls, let deadline = dtls.deadline, now >= deadline else { continue }
                    for d in dtls.handleTimeout(now: now).datagrams {
                        d.withUnsafeBytes { _ = socket.send($0, to: b.platform) }
                    }
                    b.dtls = dtls
                }
            }
        }

        // Setup: until every call's first media arrived (at most 15 s).
        let setupDeadline = EventLoop.now() + 15
        while calls.values.contains(where: { $0.firstMediaAt == nil }), EventLoop.now() < setupDeadline { generate() }
        let setupMs = calls.values.compactMap { b in b.firstMediaAt.map { ($0 - b.openedAt) * 1000 } }.sorted()
        // Steady state.
        for _ in 0..<25 { generate() }
        engine.resetMeasurements()
        let cpu0 = engine.cpuTime, wall0 = EventLoop.now()
        for _ in 0..<Int(seconds * 50) { generate() }
        let cpu = engine.cpuTime - cpu0, wall = EventLoop.now() - wall0
        return Step(
            channelsPerCore: cpu > 0 ? Double(n) * wall / cpu : 0, setupMs: setupMs,
            keyed: calls.values.filter { $0.srtp != nil }.count, late: engine.measurements().lateFrames)
    }

    /// Plain and WebRTC platform legs alternated `rounds` times (channels per core over all
    /// rounds), and the setup times of one call alone and of `calls` at once.
    static func run(calls: Int, rounds: Int, seconds: Double) throws -> String {
        let gateway = try DTLSContext(certificate: try DTLSCertificate())
        let browser = try DTLSContext(certificate: try DTLSCertificate(commonName: "bench-browser"))
        var plainCost = 0.0, webrtcCost = 0.0
        var last: Step?
        for _ in 0..<rounds {
            plainCost +=
                1
                / (try step(calls: calls, webrtc: false, seconds: seconds, gateway: gateway, browser: browser))
                .channelsPerCore
            let w = try step(calls: calls, webrtc: true, seconds: seconds, gateway: gateway, browser: browser)
            webrtcCost += 1 / w.channelsPerCore
            last = w
        }
        let one = try step(calls: 1, webrtc: true, seconds: 0.2, gateway: gateway, browser: browser)
        let plain = Double(rounds) / plainCost, webrtc = Double(rounds) / webrtcCost
        let many = last?.setupMs ?? []
        func pct(_ p: Double) -> String {
            guard !many.isEmpty else { return "-" }
            return String(format: "%.0f", many[min(many.count - 1, Int(Double(many.count - 1) * p))])
        }
        return
            "BENCH webrtc calls=\(calls) plain_channels_per_core=\(String(format: "%.0f", plain)) webrtc_channels_per_core=\(String(format: "%.0f", webrtc)) "
            + "ratio=\(String(format: "%.2f", webrtc / plain)) target_ratio_min=0.85 setup_ms_1=\(one.setupMs.first.map { String(format: "%.0f", $0) } ?? "-") "
            + "setup_ms_\(calls)_p50=\(pct(0.5)) setup_ms_\(calls)_p99=\(pct(0.99)) keyed=\(last?.keyed ?? 0)/\(calls) late_frames=\(last?.late ?? 0)"
    }
}
