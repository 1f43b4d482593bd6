import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// docs/events.md, "Inbound: SIP to events": SIPp calls a DID through the trunk; the Swift client
    /// gets the notification and joins or rejects.
    @Suite struct GatewayInboundTests {
        static let did = "+15550001000"

        /// SIPp calling the gateway's SIP port with `scenario`.
        static func caller(_ gw: GatewayProcess, _ xml: String, did: String = did, extra: [String] = []) throws -> SIPp
        {
            try SIPp(.inline(name: "caller", xml: xml), remote: gw.sipPeer, timeout: 40, arguments: ["-s", did] + extra)
        }

        /// Waits for the notification of the next call to `alice`.
        static func notification(_ gw: GatewayProcess, start: () throws -> SIPp) async throws -> (SessionEvent?, SIPp) {
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let sipp = try start()
            return (await listener.next(timeout: 10), sipp)
        }

        static func events(_ gw: GatewayProcess, room: String, until end: Bool = true) async throws -> [SessionEvent] {
            let connection = try gw.connection()
            // The listener blocks until the end: off the cooperative pool.
            return try await offThePool { () throws(IrisError) in
                var result: [SessionEvent] = []
                _ = try IrisNotificationListener.waitForEnd(connection: connection, roomId: room, timeout: 20) {
                    result.append($0)
                }
                return result
            }
        }

        static func trace(_ events: [SessionEvent]) -> [String] {
            events.map { e in
                switch e.event {
                case .onSessionSIPStatus: e.status!.rawValue
                case .onSessionEnded: "ended:" + e.reason!.rawValue
                case .onNotification: "notification:" + (e.type ?? "?")
                default: e.event.rawValue
                }
            }
        }

        static let start = ["onSessionCreated", "notification:notify", "Initializing"]

        @Test func joinConnectsAndTheCallersByeCompletes() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let (note, sipp) = try await Self.notification(gw) {
                try Self.caller(gw, CallerScenarios.answered(talkMs: 5000), extra: ["-rtp_echo"])
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            #expect(n.userdata?.data.tar == Self.did && n.userdata?.data.cid == "+15559876543")
            #expect(
                n.rtcserver == gw.apiURL && n.routingid == "alice"
                    && (n.roomtokenexpirytime ?? 0) > Int64(Date().timeIntervalSince1970))
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 600, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            // The caller's SIPp echoes our 600 Hz back through the trunk leg.
            var level = 0.0
            _ = await eventually(timeout: 4) {
                level = session.stream.leg.toneLevel(hz: 600, lastSeconds: 0.5)
                return level > 0.3
            }
            let snap = try await session.connection.snapshot(roomId: n.roomid!)
            #expect(
                level > 0.3,
                "600 Hz level \(level); \(snap); client rx \(session.stream.leg.receivedPackets()) tx \(session.stream.leg.sentPackets())"
            )
            #expect(await session.waitForEnd(timeout: 10))
            #expect(
                Self.trace(rec.events) == Self.start + [
                    "Connecting", "Connected", "onStreamQualityIndicator", "Disconnected", "ended:completed"
                ],
                "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test(arguments: [(false, 603), (true, 486)])
        func rejectAnswersTheCaller(busy: Bool, status: Int) async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let (note, sipp) = try await Self.notification(gw) { try Self.caller(gw, CallerScenarios.rejected(status)) }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            try await IrisRtcAudioSession.reject(
                connection: try gw.connection(), roomId: n.roomid!, roomToken: n.roomtoken!, busy: busy)
            let events = try await Self.events(gw, room: n.roomid!)
            #expect(Self.trace(events) == Self.start + ["Disconnected", "ended:rejected"], "\(events)")
            #expect(events.last?.sip?.code == status)
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            // The trace starts with the caller's INVITE and our 100, both before the session
            // existed, and holds every message SIPp logged, in order.
            let trace = try await gw.connection().sipTrace(roomId: n.roomid!)
            #expect(
                trace.messages.map { messageLines($0.text) } == sippMessages(sipp.messages).map(\.lines),
                "\(trace.messages.map(\.firstLine))")
            #expect(
                trace.messages.first?.firstLine.hasPrefix("INVITE ") == true
                    && trace.messages.first?.direction == "received")
            #expect(
                trace.messages.map(\.firstLine).contains("SIP/2.0 \(status) \(status == 486 ? "Busy Here" : "Decline")")
            )
        }

        @Test func noJoinAnswers480AndNotifiesCancel() async throws {
            var profile = GatewayProcess.Profile()
            profile.inboundRingTimeoutSec = 2
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            let (note, sipp) = try await Self.notification(gw) { try Self.caller(gw, CallerScenarios.rejected(480)) }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            let events = try await Self.events(gw, room: n.roomid!)
            #expect(
                Self.trace(events) == Self.start + ["notification:cancel", "Disconnected", "ended:no-answer"],
                "\(events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func callerCancelEndsCanceled() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let (note, sipp) = try await Self.notification(gw) {
                try Self.caller(gw, CallerScenarios.cancels(afterMs: 1000))
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            let events = try await Self.events(gw, room: n.roomid!)
            #expect(
                Self.trace(events) == Self.start + ["notification:cancel", "Disconnected", "ended:canceled"],
                "\(events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            // A join after the end is refused and changes nothing.
            let late = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
            defer { late.stop() }
            await #expect(throws: IrisError.self) { try await late.join(roomId: n.roomid!, roomToken: n.roomtoken!) }
        }

        struct Refusal: Sendable, CustomStringConvertible {
            var name: String
            var did: String
            var allowFrom: [String]
            var status: Int
            var config: String? = nil
            var description: String { name }
        }

        @Test(arguments: [
            Refusal(name: "unknown DID", did: "+15550009999", allowFrom: ["127.0.0.1/32"], status: 404),
            // Only when told to answer unknown sources; by default they get nothing (HostileTrafficTests).
            Refusal(
                name: "disallowed source", did: did, allowFrom: ["10.0.0.0/8"], status: 403,
                config: "{ sip: { answerUnknownSources: true } }")
        ])
        func refusedWithoutASession(_ r: Refusal) async throws {
            var profile = GatewayProcess.Profile()
            profile.routes = [(Self.did, "alice")]
            profile.allowFrom = r.allowFrom
            let gw = try await GatewayProcess(profiles: [profile], config: r.config)
            defer { gw.stop() }
            let sipp = try Self.caller(gw, CallerScenarios.rejected(r.status, ring: false), did: r.did)
            defer { sipp.stop() }
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            #expect(try await gw.connection().sessions().isEmpty)
        }

        /// An INVITE without SDP: our 200 offers, the caller answers in the ACK, audio flows.
        @Test func lateOfferIsAnsweredInTheACK() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let (note, sipp) = try await Self.notification(gw) {
                try Self.caller(gw, CallerScenarios.lateOffer(talkMs: 5000), extra: ["-rtp_echo"])
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 700, amplitude: 0.3)),
                delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            var level = 0.0
            _ = await eventually(timeout: 4) {
                level = session.stream.leg.toneLevel(hz: 700, lastSeconds: 0.5)
                return level > 0.3
            }
            #expect(level > 0.3, "700 Hz through the caller's echo: \(level)")
            #expect(await session.waitForEnd(timeout: 10))
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(sipp.messages.contains("m=audio"), "our offer in the 200")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func holdFromTheCallerIsAnsweredRecvonlyAndReported() async throws {
            let gw = try await GatewayProcess(profiles: [.init()])
            defer { gw.stop() }
            let (note, sipp) = try await Self.notification(gw) {
                try Self.caller(gw, CallerScenarios.answered(talkMs: 500, hold: true))
            }
            defer { sipp.stop() }
            let n = try #require(note, sipp.report)
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: rec)
            defer { session.stop() }
            try await session.join(roomId: n.roomid!, roomToken: n.roomtoken!)
            #expect(await session.waitForEnd(timeout: 15))
            let statuses = rec.events.filter { $0.event == .onSessionSIPStatus }.map {
                $0.status!.rawValue + ($0.by.map { "(\($0))" } ?? "")
            }
            #expect(
                statuses == ["Initializing", "Connecting", "Connected", "Hold(remote)", "Connected", "Disconnected"],
                "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
            // On the wire: our answers to sendonly and sendrecv.
            #expect(sipp.messages.contains("a=recvonly"), sipp.report)
        }
    }
}
