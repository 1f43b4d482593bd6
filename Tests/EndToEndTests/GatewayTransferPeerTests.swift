import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Transfers through a real gateway with pjsua2 (PJSIP) as the carrier or PBX behind the
    /// trunk: it takes our REFER (blind, and attended with Replaces) and calls the target, whose
    /// audio is checked; it sends its own REFER and an INVITE with Replaces to the gateway.
    @Suite(
        .enabled(if: PJSUAPeer.isInstalled, "needs pjsua2 in .build/pyenv (`make deps` installs pjsua2-python)"))
    struct GatewayTransferPeerTests {
        /// A gateway whose one trunk's proxy is `carrier`, with `transfer` keys; its DID
        /// +15550001000 routes to `alice`.
        static func gateway(_ carrier: PJSUAPeer, transfer: String = "") async throws -> GatewayProcess {
            var profile = GatewayProcess.Profile(proxies: [carrier.port])
            profile.transfer = transfer
            return try await GatewayProcess(profiles: [profile])
        }

        static func transfers(_ rec: SessionRecorder) -> [String] { GatewayTransferSimTests.transfers(rec) }

        /// pjsua C the transfer target (recording), pjsua the carrier (1 kHz, its REFERs' calls
        /// routed to C), and a gateway whose trunk is the carrier. Stop all three in a `defer`.
        static func carrierAndTarget() async throws -> (PJSUAPeer, PJSUAPeer, GatewayProcess) {
            let target = try await PJSUAPeer(.init(user: "c", record: true))
            do {
                let carrier = try await PJSUAPeer(.init(user: "carrier", tone: 1000, target: target.address))
                do {
                    return (target, carrier, try await gateway(carrier))
                } catch {
                    carrier.stop()
                    throw error
                }
            } catch {
                target.stop()
                throw error
            }
        }

        /// A connected call from the app through the gateway to the carrier.
        static func call(
            _ gw: GatewayProcess, source: AudioSource = .silence
        ) async throws -> (
            IrisRtcAudioSession, SessionRecorder
        ) {
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: source), delegate: rec)
            try await session.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321")
            guard await rec.waitForStatus(.connected, timeout: 15) else {
                session.stop()
                throw SocketError("the call did not connect: \(rec.trace)", code: ETIMEDOUT)
            }
            return (session, rec)
        }

        /// Blind: pjsua takes our REFER and calls the target (routed to pjsua C), which hears
        /// the carrier's 1 kHz; the session ends `transferred`.
        @Test func pjsuaCarriesOutABlindTransfer() async throws {
            let (target, carrier, gw) = try await Self.carrierAndTarget()
            defer {
                gw.stop()
                carrier.stop()
                target.stop()
            }
            let (session, rec) = try await Self.call(gw)
            defer { session.stop() }
            try await session.transfer(to: "+15557770000")
            let refer = await carrier.waitFor { $0.event == "refer-received" }
            #expect(refer?.referTo?.contains("+15557770000@127.0.0.1:\(carrier.port)") == true, carrier.report)
            #expect(refer?.referredBy?.contains("+15557654321") == true, carrier.report)
            #expect(await target.waitFor(call: 0, state: "CONFIRMED") != nil, target.report)
            #expect(await target.hears(call: 0, hz: 1000), target.report)
            #expect(await rec.waitFor(timeout: 15) { _ in rec.ended != nil }, "\(Self.transfers(rec))")
            #expect(Self.transfers(rec).last == "transfer:succeeded/200(refer app)", "\(Self.transfers(rec))")
            #expect(rec.ended?.reason == .transferred)
        }

        /// Attended: the app's first call goes to the carrier, the second comes in from pjsua C;
        /// the REFER's Replaces names the second call's dialog, the carrier sends C an INVITE with
        /// Replaces, C takes it in place of our call and hears the carrier; both sessions end
        /// `transferred`.
        @Test func pjsuaCarriesOutAnAttendedTransfer() async throws {
            let (target, carrier, gw) = try await Self.carrierAndTarget()
            defer {
                gw.stop()
                carrier.stop()
                target.stop()
            }
            let (first, recFirst) = try await Self.call(gw)
            defer { first.stop() }

            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            target.send("call sip:+15550001000@127.0.0.1:\(gw.sipPort)")
            let note = try #require(await listener.next(timeout: 10), target.report)
            let recSecond = SessionRecorder()
            let second = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: recSecond)
            defer { second.stop() }
            try await second.join(roomId: try #require(note.roomid), roomToken: try #require(note.roomtoken))
            #expect(await recSecond.waitForStatus(.connected), "\(recSecond.trace)")

            try await first.transfer(replacing: second)
            let refer = await carrier.waitFor { $0.event == "refer-received" }
            #expect(refer?.referTo?.contains("Replaces=") == true, carrier.report)
            #expect(await target.waitFor { $0.event == "replaced" } != nil, target.report)
            let replacement = try #require(await target.waitFor { $0.event == "replaced" }?.newCall)
            #expect(await target.hears(call: replacement, hz: 1000), target.report)
            #expect(
                await recFirst.waitFor(timeout: 15) { _ in recFirst.ended != nil && recSecond.ended != nil },
                "\(Self.transfers(recFirst)) \(Self.transfers(recSecond))")
            #expect(recFirst.ended?.reason == .transferred, "\(recFirst.trace)")
            #expect(recSecond.ended?.reason == .transferred, "\(recSecond.trace)")
        }

        /// What a PBX behind the trunk does to the call, and what the app then sees.
        struct PBXMove: Sendable, CustomStringConvertible {
            var name: String
            var transfer = ""
            /// The pjsua command (call 0 is ours), given the gateway's SIP port.
            var command: @Sendable (Int) -> String
            var succeeded: String
            var description: String { name }
        }

        static let pbxMoves: [PBXMove] = [
            // The gateway calls the Refer-To's number on the trunk (pjsua again, answering with
            // its tone) and the app's leg moves to it; pjsua gets NOTIFYs up to 200.
            PBXMove(
                name: "a REFER under refer: dial is dialled and the app moves", transfer: "refer: \"dial\"",
                command: { "refer 0 sip:+15551230002@127.0.0.1:\($0)" },
                succeeded: "transfer:succeeded/200(dial carrier)"),
            // An INVITE with Replaces naming our call: the new leg takes its place.
            PBXMove(
                name: "an INVITE with Replaces takes over the call",
                command: { "replace 0 sip:+15550001000@127.0.0.1:\($0)" },
                succeeded: "transfer:succeeded(replaces carrier)")
        ]

        /// Either way the app keeps hearing the PBX's tone on the new leg, the old one is hung up,
        /// and the session goes on until the app closes it.
        @Test(arguments: pbxMoves)
        func aPBXMovesTheCall(_ move: PBXMove) async throws {
            let carrier = try await PJSUAPeer(.init(user: "pbx", tone: 1000))
            defer { carrier.stop() }
            let gw = try await Self.gateway(carrier, transfer: move.transfer)
            defer { gw.stop() }
            let (session, rec) = try await Self.call(gw)
            defer { session.stop() }
            #expect(await carrier.waitFor(call: 0, state: "CONFIRMED") != nil, carrier.report)
            carrier.send(move.command(gw.sipPort))
            #expect(
                await rec.waitFor(timeout: 15) { _ in Self.transfers(rec).contains(move.succeeded) },
                "\(Self.transfers(rec))\n\(carrier.report)")
            #expect(await carrier.waitFor(call: 0, state: "DISCONNECTED") != nil, carrier.report)
            #expect(
                await eventually(timeout: 8) { session.stream.leg.toneLevel(hz: 1000, lastSeconds: 0.5) > 0.3 },
                "the app does not hear the new leg")
            #expect(rec.ended == nil)
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            #expect(rec.ended?.reason == .completed)
        }
    }
}

extension GatewaySuites {
    /// baresip (Debian) calling in through a real gateway whose trunk's proxy is the carrier
    /// simulator: baresip takes the app's REFER (it calls the Refer-To as written: the number at
    /// the trunk's proxy, where the simulator answers and echoes), and baresip sends its own
    /// REFER (`/transfer`), which the gateway dials under `refer: dial`.
    @Suite(.enabled(if: Baresip.isInstalled, "needs baresip (Debian baresip) with its ausine and aubridge modules"))
    struct GatewayTransferBaresipTests {
        static let caller = "+15559876543"

        /// baresip calls the gateway's DID; the app joins with a 440 Hz tone.
        static func inboundCall(
            _ gw: GatewayProcess, record: Bool = false
        ) async throws -> (Baresip, IrisRtcAudioSession, SessionRecorder) {
            let listener = try IrisNotificationListener(connection: try gw.connection(), routingId: "alice")
            defer { listener.close() }
            let phone = try await Baresip(
                account: .init(user: caller, answerMode: "auto"), options: .init(record: record),
                dial: "sip:+15550001000@127.0.0.1:\(gw.sipPort)")
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 440, amplitude: 0.3)),
                delegate: rec)
            do {
                let note = try #require(await listener.next(timeout: 10), phone.report)
                try await session.join(roomId: try #require(note.roomid), roomToken: try #require(note.roomtoken))
                guard await rec.waitForStatus(.connected), await phone.waitFor("Call established") else {
                    throw SocketError("baresip's call did not connect: \(rec.trace)\n\(phone.report)", code: ETIMEDOUT)
                }
            } catch {
                session.stop()
                phone.stop()
                throw error
            }
            return (phone, session, rec)
        }

        @Test func baresipCarriesOutTheAppsTransfer() async throws {
            let (sim, gw) = try await GatewayTransferSimTests.start(transfer: "notifyTimeoutSec: 5")
            defer {
                gw.stop()
                sim.stop()
            }
            let (phone, session, rec) = try await Self.inboundCall(gw, record: true)
            defer {
                session.stop()
                phone.stop()
            }
            try await session.transfer(to: "+15550100001")
            #expect(await phone.waitFor("transferring call"), phone.report)
            #expect(
                phone.transferLines.contains { $0.contains("+15550100001@127.0.0.1:\(sim.port)") },
                "\(phone.transferLines)")
            #expect(
                await rec.waitFor(timeout: 15) { _ in rec.ended != nil }, "\(GatewayTransferSimTests.transfers(rec))")
            #expect(GatewayTransferSimTests.transfers(rec).last == "transfer:succeeded/200(refer app)")
            #expect(rec.ended?.reason == .transferred)
            // The transferee and the target talk: the simulator echoes baresip's 440 Hz sine back.
            // baresip's WAV is whole once its call ends: a second of it, then the hang-up.
            func secondCallBytes() -> Int {
                let files = phone.recordings()
                guard files.count >= 2, let last = files.last else { return 0 }
                return ((try? FileManager.default.attributesOfItem(atPath: last))?[.size] as? Int) ?? 0
            }
            #expect(await eventually(timeout: 10) { secondCallBytes() > 24_000 }, "\(phone.recordings())")
            phone.send("/hangup")
            #expect(
                await eventually(timeout: 5) { sim.lines.contains { $0.hasPrefix("call +15550100001") } },
                "\(sim.lines)")
            #expect(
                await eventually(timeout: 5) { GatewaySRTPTests.heardByBaresip(phone, hz: 440, latest: true) > 0.5 },
                "\(phone.recordings())")
        }

        @Test func baresipsReferIsDialledAndTheAppMoves() async throws {
            let (sim, gw) = try await GatewayTransferSimTests.start(transfer: "refer: \"dial\"")
            defer {
                gw.stop()
                sim.stop()
            }
            let (phone, session, rec) = try await Self.inboundCall(gw)
            defer {
                session.stop()
                phone.stop()
            }
            phone.transfer(to: "sip:+15550100001@127.0.0.1:\(gw.sipPort)")
            #expect(
                await rec.waitFor(timeout: 15) { _ in
                    GatewayTransferSimTests.transfers(rec).contains("transfer:succeeded/200(dial carrier)")
                }, "\(GatewayTransferSimTests.transfers(rec))\n\(phone.report)")
            // baresip hangs up once our NOTIFY says 200; the app now talks to the simulator.
            #expect(await phone.waitFor("terminated"), phone.report)
            #expect(await GatewayTransferSimTests.hearsEcho(session), "no echo from the new call")
            #expect(rec.ended == nil)
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
        }
    }
}
