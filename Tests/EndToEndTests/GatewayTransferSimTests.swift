import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Transfers through a real gateway and `irisgw carrier-sim`: the app's transfer the
    /// carrier carries out or refuses (and the gateway's bridge then), the carrier's REFER under
    /// each policy, and the carrier's INVITE with Replaces. Audio is the app's 440 Hz tone,
    /// echoed by whichever simulated leg carries the call.
    @Suite struct GatewayTransferSimTests {
        /// The simulator and a gateway whose trunk routes to it, with `transfer` keys.
        static func start(
            transfer: String, outboundExtra: String = ""
        ) async throws -> (CarrierSimProcess, GatewayProcess) {
            let sim = try await CarrierSimProcess()
            var profile = GatewayProcess.Profile(proxies: [sim.port])
            profile.transfer = transfer
            profile.outboundExtra = outboundExtra
            do {
                return (sim, try await GatewayProcess(profiles: [profile]))
            } catch {
                sim.stop()
                throw error
            }
        }

        /// A connected call to `number` whose app sends 440 Hz and hears it echoed.
        static func echoingCall(
            _ gw: GatewayProcess, _ number: String, headers: [String: String]? = nil
        ) async throws -> (IrisRtcAudioSession, SessionRecorder) {
            let rec = SessionRecorder()
            let session = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(source: .tone(hz: 440, amplitude: 0.3)),
                delegate: rec)
            try await session.createWithTN(targetTN: number, sourceTN: "+15557654321", headers: headers)
            guard await rec.waitForStatus(.connected, timeout: 15), await hearsEcho(session) else {
                session.stop()
                throw SocketError("no connected, echoing call to \(number): \(rec.trace)", code: ETIMEDOUT)
            }
            return (session, rec)
        }

        static func hearsEcho(_ session: IrisRtcAudioSession, timeout: Double = 5) async -> Bool {
            await eventually(timeout: timeout) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) > 0.3 }
        }

        /// `onSessionTransfer` and `onSessionTransferRequest` as `name:state/code(method by)`.
        static func transfers(_ rec: SessionRecorder) -> [String] {
            rec.events.compactMap { e -> String? in
                guard let t = e.transfer else { return nil }
                let name = e.event == .onSessionTransferRequest ? "request" : "transfer"
                return "\(name):\(t.state.rawValue)" + (e.sip.map { "/\($0.code)" } ?? "") + "(\(t.method) \(t.by))"
            }
        }

        static func waitForTransfer(_ rec: SessionRecorder, _ last: String, timeout: Double = 15) async -> Bool {
            await rec.waitFor(timeout: timeout) { _ in transfers(rec).contains(last) }
        }

        @Test func theCarrierCarriesOutTheAppsTransfer() async throws {
            let (sim, gw) = try await Self.start(transfer: "notifyTimeoutSec: 5")
            defer {
                gw.stop()
                sim.stop()
            }
            let (session, rec) = try await Self.echoingCall(gw, "+15550100024")
            defer { session.stop() }
            try await session.transfer(to: "+15550100001")
            #expect(await rec.waitFor { _ in rec.ended != nil }, "\(Self.transfers(rec)) \(sim.lines.suffix(5))")
            #expect(
                Self.transfers(rec) == [
                    "transfer:requested(refer app)", "transfer:trying/100(refer app)",
                    "transfer:ringing/180(refer app)",
                    "transfer:succeeded/200(refer app)"
                ])
            #expect(rec.ended?.reason == .transferred)
            #expect(await eventually(timeout: 5) { sim.lines.contains { $0.contains("REFER <sip:+15550100001@") } })
        }

        /// The carrier refuses the REFER (405): the gateway calls the target itself, joins the two
        /// trunk legs and the app leaves; closing the session ends both legs.
        @Test func theGatewayBridgesWhenTheCarrierRefuses() async throws {
            let (sim, gw) = try await Self.start(transfer: "fallback: \"bridge\"")
            defer {
                gw.stop()
                sim.stop()
            }
            let (session, rec) = try await Self.echoingCall(gw, "+15550100025")
            defer { session.stop() }
            let room = try #require(session.roomId)
            try await session.transfer(to: "+15550100001")
            #expect(
                await Self.waitForTransfer(rec, "transfer:succeeded(bridge app)"),
                "\(Self.transfers(rec)) \(sim.lines.suffix(5))")
            #expect(
                Self.transfers(rec).prefix(2) == ["transfer:requested(refer app)", "transfer:trying/405(bridge app)"])
            // The app has left: its tone no longer comes back, and the call goes on without it.
            #expect(await eventually(timeout: 5) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) < 0.05 })
            let live = try await session.connection.sessions()
            #expect(live.count == 2, "\(live.map(\.roomId))")
            let leg = try #require(live.first { $0.roomId != room })
            #expect(leg.targetTN == "+15550100001" && leg.status == .connected)
            #expect(rec.ended == nil)
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            #expect(rec.ended?.reason == .transferred)
            #expect(await eventually(timeout: 5) { (try? session.connection.sessions().isEmpty) ?? false })
            let records = try await gw.recordsAfterStop()
            let mine = try #require(records.first { $0.roomId == room })
            #expect(mine.transferMethod == "bridge" && mine.transferOutcome == "succeeded")
            #expect(mine.transferRoomId == leg.roomId)
            #expect(records.first { $0.roomId == leg.roomId }?.transferRoomId == room)
        }

        /// The app closes its call while the bridge's own call to the target still rings: that
        /// call is cancelled with it, and the transfer reported failed; nothing is left behind.
        @Test func closingWhileTheBridgeRingsCancelsIt() async throws {
            let (sim, gw) = try await Self.start(transfer: "fallback: \"bridge\"")
            defer {
                gw.stop()
                sim.stop()
            }
            let (session, rec) = try await Self.echoingCall(gw, "+15550100025")
            defer { session.stop() }
            try await session.transfer(to: "+15550100003")  // rings for ever
            #expect(
                await eventually(timeout: 10) { (try? await session.connection.sessions().count) == 2 },
                "\(Self.transfers(rec))")
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            #expect(Self.transfers(rec).last == "transfer:failed(bridge app)", "\(Self.transfers(rec))")
            #expect(rec.ended?.reason == .completed)
            #expect(
                await eventually(timeout: 10) { (try? await session.connection.sessions().isEmpty) ?? false },
                "the bridge's call was left behind")
            #expect(
                await eventually(timeout: 5) { sim.lines.contains { $0.hasPrefix("call +15550100003") } },
                "\(sim.lines)")
        }

        /// The carrier's REFER under `dial`: the gateway calls the target on the trunk and the
        /// app's leg moves onto the new call (its tone still echoed, now by the target).
        @Test func theCarriersReferIsDialled() async throws {
            let (sim, gw) = try await Self.start(transfer: "refer: \"dial\"")
            defer {
                gw.stop()
                sim.stop()
            }
            let (session, rec) = try await Self.echoingCall(gw, "+15550100030")
            defer { session.stop() }
            #expect(
                await Self.waitForTransfer(rec, "transfer:succeeded/200(dial carrier)"),
                "\(Self.transfers(rec)) \(sim.lines.suffix(5))")
            #expect(Self.transfers(rec).first == "transfer:trying(dial carrier)")
            // The referrer's call ends (its BYE after our NOTIFY 200); the session goes on.
            #expect(
                await eventually(timeout: 10) {
                    sim.lines.contains { $0.contains("sent REFER") && $0.contains("got NOTIFY 200 200") }
                }, "\(sim.lines.suffix(5))")
            #expect(await Self.hearsEcho(session), "no echo from the new call")
            #expect(try await session.connection.snapshot(roomId: try #require(session.roomId)).status == .connected)
            #expect(rec.ended == nil)
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            let record = try #require(try await gw.recordsAfterStop().first)
            #expect(record.transferTarget == "+15550100001" && record.transferredBy == "carrier")
            #expect(record.transferMethod == "dial" && record.transferOutcome == "succeeded")
        }

        @Test(arguments: [true, false])
        func theAppAnswersTheCarriersRefer(accept: Bool) async throws {
            let (sim, gw) = try await Self.start(transfer: "refer: \"app\"")
            defer {
                gw.stop()
                sim.stop()
            }
            let (session, rec) = try await Self.echoingCall(gw, "+15550100030")
            defer { session.stop() }
            #expect(await Self.waitForTransfer(rec, "request:requested(dial carrier)"), "\(Self.transfers(rec))")
            let request = try #require(rec.events.first { $0.event == .onSessionTransferRequest })
            #expect(request.transfer?.targetTN == "+15550100001")
            #expect(request.transfer?.referredBy?.contains("+15550100030") == true)
            if accept {
                try await session.acceptTransfer()
                #expect(
                    await Self.waitForTransfer(rec, "transfer:succeeded/200(dial carrier)"), "\(Self.transfers(rec))")
            } else {
                try await session.declineTransfer()
                #expect(await Self.waitForTransfer(rec, "transfer:failed(dial carrier)"), "\(Self.transfers(rec))")
                // The carrier keeps the call: still connected, still echoing.
                #expect(await Self.hearsEcho(session))
                #expect(rec.ended == nil)
            }
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            if !accept {
                #expect(await eventually(timeout: 5) { sim.lines.contains { $0.contains("got NOTIFY 603 200") } })
            }
        }

        struct RefusedRefer: Sendable, CustomStringConvertible {
            var name: String
            var transfer: String
            var referTo: String?
            var status: Int
            var description: String { name }
        }

        static let refused: [RefusedRefer] = [
            RefusedRefer(name: "refer: reject (the default)", transfer: "notifyTimeoutSec: 10", status: 603),
            RefusedRefer(
                name: "a Refer-To outside the allowed prefixes is never dialled", transfer: "refer: \"dial\"",
                referTo: "+445550100001", status: 403)
        ]

        @Test(arguments: refused)
        func theCarriersReferIsRefused(_ c: RefusedRefer) async throws {
            let (sim, gw) = try await Self.start(
                transfer: c.transfer, outboundExtra: "appHeaders: [\"X-Sim-Refer-To\"],")
            defer {
                gw.stop()
                sim.stop()
            }
            let (session, rec) = try await Self.echoingCall(
                gw, "+15550100030", headers: c.referTo.map { ["X-Sim-Refer-To": $0] })
            defer { session.stop() }
            // The refusal is counted as it goes out (`irisgw_refused_total`).
            #expect(
                await eventually(timeout: 10) {
                    (try? session.connection.metricsText())?.contains("refer_\(c.status)") == true
                })
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            #expect(
                await eventually(timeout: 5) {
                    sim.lines.contains { $0.contains("sent REFER") && $0.contains(" \(c.status)") }
                },
                "\(sim.lines.suffix(5))")
            #expect(Self.transfers(rec).isEmpty, "\(Self.transfers(rec))")
            #expect(!sim.lines.contains { $0.hasPrefix("call +445550100001") }, "\(sim.lines)")
        }

        /// The carrier's INVITE with Replaces: the new leg takes the old one's place; the app
        /// keeps its audio.
        @Test func anInviteWithReplacesTakesOverTheTrunkLeg() async throws {
            let (sim, gw) = try await Self.start(transfer: "")
            defer {
                gw.stop()
                sim.stop()
            }
            let (session, rec) = try await Self.echoingCall(gw, "+15550100031")
            defer { session.stop() }
            #expect(
                await Self.waitForTransfer(rec, "transfer:succeeded(replaces carrier)"),
                "\(Self.transfers(rec)) \(sim.lines.suffix(5))")
            // The replaced leg got our BYE; the new one echoes.
            #expect(
                await eventually(timeout: 5) {
                    sim.lines.contains { $0.hasPrefix("call +15550100031") && $0.contains("caller hung up") }
                },
                "\(sim.lines)")
            #expect(await Self.hearsEcho(session), "no echo from the new leg")
            #expect(rec.ended == nil)
            try await session.close()
            #expect(await rec.waitFor { _ in rec.ended != nil })
            #expect(rec.ended?.reason == .completed)
            // Our BYE at the close went to the new leg.
            #expect(
                await eventually(timeout: 5) {
                    sim.lines.contains { $0.contains("replacing ") && $0.contains("caller hung up") }
                },
                "\(sim.lines)")
        }

        /// Attended: the app has two calls on the trunk and asks the first's carrier to join its
        /// party to the second's (REFER with Replaces of the second call's dialog). When the
        /// carrier has done it, both sessions end `transferred`.
        @Test func attendedTransferJoinsTheTwoCalls() async throws {
            let (sim, gw) = try await Self.start(transfer: "notifyTimeoutSec: 5")
            defer {
                gw.stop()
                sim.stop()
            }
            let (first, recFirst) = try await Self.echoingCall(gw, "+15550100024")
            defer { first.stop() }
            let (second, recSecond) = try await Self.echoingCall(gw, "+15550100001")
            defer { second.stop() }
            try await first.transfer(replacing: second)
            #expect(
                await recFirst.waitFor { _ in recFirst.ended != nil && recSecond.ended != nil },
                "\(Self.transfers(recFirst)) \(Self.transfers(recSecond)) \(sim.lines.suffix(5))")
            #expect(Self.transfers(recFirst).last == "transfer:succeeded/200(refer app)")
            #expect(Self.transfers(recSecond) == ["transfer:succeeded/200(refer app)"])
            let event = try #require(recSecond.events.first { $0.event == .onSessionTransfer })
            #expect(event.transfer?.replacesRoomId == first.roomId)
            #expect(recFirst.ended?.reason == .transferred && recSecond.ended?.reason == .transferred)
            #expect(
                await eventually(timeout: 5) {
                    sim.lines.contains {
                        $0.contains("REFER <sip:") && $0.contains("?Replaces=") && $0.contains(" 202")
                    }
                }, "\(sim.lines)")
        }

        /// Attended with the bridge fallback: the carrier refuses, the gateway joins the two
        /// calls' trunk legs itself and the app leaves both.
        @Test func attendedTransferBridgedWhenTheCarrierRefuses() async throws {
            let (sim, gw) = try await Self.start(transfer: "fallback: \"bridge\"")
            defer {
                gw.stop()
                sim.stop()
            }
            let (first, recFirst) = try await Self.echoingCall(gw, "+15550100025")
            defer { first.stop() }
            let (second, recSecond) = try await Self.echoingCall(gw, "+15550100001")
            defer { second.stop() }
            try await first.transfer(replacing: second)
            #expect(
                await Self.waitForTransfer(recFirst, "transfer:succeeded(bridge app)"),
                "\(Self.transfers(recFirst)) \(sim.lines.suffix(5))")
            #expect(await Self.waitForTransfer(recSecond, "transfer:succeeded(bridge app)"))
            for s in [first, second] {
                #expect(await eventually(timeout: 5) { s.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) < 0.05 })
            }
            try await second.close()
            #expect(await recFirst.waitFor { _ in recFirst.ended != nil && recSecond.ended != nil })
            #expect(recFirst.ended?.reason == .transferred && recSecond.ended?.reason == .transferred)
        }
    }
}
