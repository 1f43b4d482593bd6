import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// docs/events.md, "Outbound: SIP to events", through real processes: `irisgw serve`, SIPp as the
    /// carrier, the Swift Iris client as the app (with its Opus RTP leg).
    @Suite struct GatewayOutboundTests {
        struct RejectRow: Sendable, CustomStringConvertible {
            var status: String
            var q850: Int?
            var trace: [String]
            var description: String { status }
        }

        static let start = ["onSessionCreated", "Initializing", "Connecting"]

        static let rejectRows: [RejectRow] = [
            RejectRow(status: "486 Busy Here", q850: 17, trace: start + ["Disconnected", "ended:busy"]),
            RejectRow(status: "600 Busy Everywhere", trace: start + ["Disconnected", "ended:busy"]),
            RejectRow(status: "603 Decline", q850: 21, trace: start + ["Disconnected", "ended:declined"]),
            RejectRow(status: "404 Not Found", q850: 1, trace: start + ["Disconnected", "error:-407", "ended:failed"]),
            RejectRow(
                status: "484 Address Incomplete", q850: 28,
                trace: start + ["Disconnected", "error:-407", "ended:failed"]),
            RejectRow(
                status: "604 Does Not Exist Anywhere", trace: start + ["Disconnected", "error:-407", "ended:failed"]),
            RejectRow(status: "408 Request Timeout", trace: start + ["Disconnected", "error:-402", "ended:no-answer"]),
            RejectRow(
                status: "480 Temporarily Unavailable", q850: 18,
                trace: start + ["Disconnected", "error:-402", "ended:no-answer"]),
            RejectRow(status: "403 Forbidden", trace: start + ["Disconnected", "error:-417", "ended:failed"]),
            RejectRow(
                status: "503 Service Unavailable", q850: 41,
                trace: start + ["Disconnected", "error:-503", "ended:failed"])
        ]

        /// Places one call from the client; returns the recorder once the session ended.
        static func call(
            _ gw: GatewayProcess, target: String = "+15551230001", source: AudioSource = .silence,
            timeout: Double = 20, during: (IrisRtcAudioSession, SessionRecorder) async throws -> Void = { _, _ in }
        ) async throws
            -> (SessionRecorder, IrisRtcAudioSession)
        {
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: source), delegate: rec)
            try await session.createWithTN(targetTN: target, sourceTN: "+15557654321")
            try await during(session, rec)
            _ = await rec.waitFor(timeout: timeout) { $0.contains { $0.event == .onSessionEnded } }
            session.stop()
            return (rec, session)
        }

        @Test(arguments: rejectRows)
        func finalFailure(_ row: RejectRow) async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.reject(row.status, q850: row.q850))
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await Self.call(gw)
            #expect(rec.trace == row.trace, "\(rec.events)\n\(sipp.report)")
            let code = Int(row.status.prefix(3))!
            let ended = try #require(rec.ended)
            #expect(ended.sip?.code == code)
            #expect(ended.sip?.reason == String(row.status.dropFirst(4)))
            #expect(ended.sip?.cause == row.q850)
            #expect(rec.events.last?.event == .onSessionEnded)
            #expect(rec.events.map(\.seq) == Array(1...rec.events.count))
        }

        @Test func answeredCallCarriesAudioBothWaysThroughSIPpEcho() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(), sippArguments: ["-rtp_echo"])
            defer { gw.stop(); sipp.stop() }
            let (rec, session) = try await Self.call(gw, source: .tone(hz: 440, amplitude: 0.3)) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
                // Our 440 Hz went through Opus -> PCMU -> SIPp's echo -> PCMU -> Opus and came back.
                var at440 = 0.0
                _ = await eventually(timeout: 5) {
                    at440 = session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.5)
                    return at440 > 0.3
                }
                // a second in which no 1 kHz may come: the behaviour, not a wait
                try await Task.sleep(nanoseconds: 1_000_000_000)
                let at1000 = session.stream.leg.toneLevel(hz: 1000, lastSeconds: 0.5)
                #expect(at440 > 0.3 && at1000 < 0.05, "440 Hz level \(at440), 1 kHz level \(at1000)")
                let snap = try await session.connection.snapshot(roomId: session.roomId!)
                #expect(snap.status == .connected && snap.codec == "PCMU")
                #expect(
                    (snap.trunk?.packetsReceived ?? 0) > 50 && (snap.platform?.packetsReceived ?? 0) > 50, "\(snap)")
                try await session.close()
            }
            #expect(
                rec.trace == Self.start + ["Connected", "onStreamQualityIndicator", "Disconnected", "ended:completed"],
                "\(rec.events)")
            let quality = rec.events.first { $0.event == .onStreamQualityIndicator }
            #expect(quality?.quality == "NonHD" && quality?.codec == "PCMU")
            #expect((rec.ended?.durationSec ?? 0) >= 0.5)
            #expect(session.endedEvent != nil)
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func earlyMediaReachesTheAppBeforeTheAnswer() async throws {
            let xml = CarrierScenarios.answer(
                answerAfterMs: 4000, earlyMedia: true, playPcap: "/usr/share/sip-tester/g711a.pcap",
                codec: (8, "PCMA"))
            let (sipp, gw) = try await carrierAndGateway(xml)
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await Self.call(gw) { session, rec in
                #expect(
                    await rec.waitFor { $0.contains { $0.event == .onSessionEarlyMedia } },
                    "\(rec.trace)\n\(sipp.report)")
                _ = await eventually(timeout: 3) { session.stream.leg.receivedPackets() > 20 }
                let beforeAnswer = session.stream.leg.receivedPackets()
                #expect(!rec.events.contains { $0.status == .connected })
                #expect(beforeAnswer > 20, "packets before the answer: \(beforeAnswer)")
                #expect(await rec.waitForStatus(.connected))
                try await session.close()
            }
            #expect(
                rec.trace == [
                    "onSessionCreated", "Initializing", "Connecting*", "onSessionEarlyMedia", "Connected",
                    "onStreamQualityIndicator", "Disconnected", "ended:completed"
                ], "\(rec.events)")
            #expect(rec.events.first { $0.event == .onStreamQualityIndicator }?.codec == "PCMA")
        }

        @Test func ringTimeoutCancelsAndEndsNoAnswer() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.ringUntilCancel) { profile in
                profile.ringTimeoutSec = 2
            }
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await Self.call(gw)
            #expect(
                rec.trace == Self.start + ["Disconnected", "error:-402", "ended:no-answer"],
                "\(rec.events)\n\(sipp.report)")
            #expect(rec.ended?.sip?.code == 487)
            #expect(sipp.received("CANCEL ") == 1)
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func closeWhileRingingCancels() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.ringUntilCancel)
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await Self.call(gw) { session, rec in
                #expect(await rec.waitForStatus(.connecting))
                try await session.close()
            }
            #expect(rec.trace == Self.start + ["Disconnected", "ended:canceled"], "\(rec.events)\n\(sipp.report)")
            #expect(rec.ended?.sip?.code == 487)
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func byeFromTheCarrierEndsCompletedWithItsCause() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(byeAfterMs: 1000))
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await Self.call(gw)
            #expect(
                rec.trace == Self.start + ["Connected", "onStreamQualityIndicator", "Disconnected", "ended:completed"],
                "\(rec.events)\n\(sipp.report)")
            #expect(rec.ended?.sip?.cause == 16)
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func failoverToTheNextProxyOn503() async throws {
            let first = try await SIPp.listening(
                .inline(name: "busy-node", xml: CarrierScenarios.reject("503 Service Unavailable", ring: false)),
                timeout: 30)
            defer { first.stop() }
            let second = try await SIPp.listening(.inline(name: "carrier", xml: CarrierScenarios.answer()), timeout: 30)
            defer { second.stop() }
            let gw = try await GatewayProcess(profiles: [.init(proxies: [first.port, second.port])])
            defer { gw.stop() }
            let (rec, _) = try await Self.call(gw) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(first.report)\n\(second.report)")
                try await session.close()
            }
            #expect(
                rec.trace == [
                    "onSessionCreated", "Initializing", "Connecting", "Connected", "onStreamQualityIndicator",
                    "Disconnected", "ended:completed"
                ], "\(rec.events)")
            #expect(await first.waitForExit(timeout: 10) == 0, first.report)
            #expect(await second.waitForExit(timeout: 10) == 0, second.report)
        }
    }
}

extension GatewaySuites.GatewayOutboundTests {
    /// A proxy that never answers (a socket that swallows everything) before one that does:
    /// after the failover time (default 4 s: the INVITE and its retransmissions at 0.5, 1.5
    /// and 3.5 s) the INVITE goes to the next proxy, which answers; the silent one gets no
    /// CANCEL (RFC 3261 §9.1). With `failoverTimeoutMs: 0` the move waits for Timer B (64*T1),
    /// the INVITE retransmitted all along; that gateway runs with `sip.t1Ms: 100` (Timer B
    /// 6.4 s instead of 32), which also shows the setting moves every timer.
    @Test(.timeLimit(.minutes(2)), arguments: [nil, 0] as [Int?])
    func noResponseFailsOverToTheNextProxy(failoverTimeoutMs: Int?) async throws {
        let blackHole = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
        let sipp = try await SIPp.listening(.inline(name: "carrier", xml: CarrierScenarios.answer()), timeout: 60)
        defer { sipp.stop() }
        var profile = GatewayProcess.Profile(proxies: [blackHole.local.port, sipp.port])
        profile.ringTimeoutSec = 60
        if let failoverTimeoutMs { profile.outboundExtra = "failoverTimeoutMs: \(failoverTimeoutMs)," }
        let gw = try await GatewayProcess(
            profiles: [profile], config: failoverTimeoutMs == 0 ? "{ sip: { t1Ms: 100 } }" : nil)
        defer { gw.stop() }
        let (rec, _) = try await Self.call(gw, timeout: 45) { session, rec in
            #expect(await rec.waitForStatus(.connected, timeout: 45), "\(rec.trace)\n\(sipp.report)")
            try await session.close()
        }
        #expect(
            rec.trace == [
                "onSessionCreated", "Initializing", "Connecting", "Connected", "onStreamQualityIndicator",
                "Disconnected", "ended:completed"
            ], "\(rec.events)")
        // The black hole got the INVITE and its retransmissions, and nothing else.
        let sent = blackHole.drainTexts()
        #expect(sent.allSatisfy { $0.hasPrefix("INVITE ") }, "\(sent)")
        #expect(sent.count >= (failoverTimeoutMs == 0 ? 5 : 3), "\(sent.count) INVITEs reached the silent proxy")
    }
}

extension UDPSocket {
    /// Reads every datagram waiting now and says how many there were (a silent peer's count
    /// of what reached it).
    func drainCount() -> Int { drainTexts().count }

    /// Reads every datagram waiting now, each as text (what a silent peer was sent).
    func drainTexts() -> [String] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer { buffer.deallocate() }
        var from = RawSocketAddress(), texts: [String] = []
        while let n = receive(into: buffer, from: &from) {
            texts.append(String(decoding: buffer.prefix(n), as: UTF8.self))
        }
        return texts
    }
}
