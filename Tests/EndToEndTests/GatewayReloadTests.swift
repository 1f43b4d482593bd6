import Foundation
import Glibc
import IrisAPI
import IrisClient
import SIP
import Synchronization
import TestSupport
import Testing

extension GatewaySuites {
    /// Live reload (docs/operations.md, "Reloading") of a real `irisgw serve` in front of
    /// `irisgw carrier-sim`, by `POST /v1/admin/reload` and by SIGHUP, while calls go on.
    @Suite struct GatewayReloadTests {
        /// A few calls at a time to the simulator's echo number, each answered, its echo
        /// heard, then closed, until `stop()`; what failed is kept with its trace.
        final class SteadyCalls: Sendable {
            private let state = Mutex<(completed: Int, failed: [String], stopping: Bool)>((0, [], false))
            private let workers = Mutex<[Task<Void, Never>]>([])

            init(_ gw: GatewayProcess, at once: Int) {
                let tasks = (0..<once).map { _ in Task { [self] in await run(gw) } }
                workers.withLock { $0 = tasks }
            }

            var completed: Int { state.withLock { $0.completed } }

            private func run(_ gw: GatewayProcess) async {
                while !state.withLock({ $0.stopping }) {
                    let failure = await Self.oneCall(gw)
                    state.withLock { s in
                        if let failure { s.failed.append(failure) } else { s.completed += 1 }
                    }
                }
            }

            /// One call; nil when it went as it should, else what happened.
            private static func oneCall(_ gw: GatewayProcess) async -> String? {
                let rec = SessionRecorder()
                do {
                    let session = IrisRtcAudioSession(
                        connection: try gw.connection(),
                        stream: try IrisRtcStream(source: .tone(hz: 440, amplitude: 0.3)),
                        delegate: rec)
                    defer { session.stop() }
                    try await session.createWithTN(targetTN: "+15550100001", sourceTN: "+15557654321")
                    guard await rec.waitForStatus(.connected, timeout: 10),
                        await eventually(timeout: 5, { session.stream.leg.receivedPackets() > 10 })
                    else { return "not connected with audio: \(rec.trace)" }
                    try await session.close()
                    guard await rec.waitFor(timeout: 10, { _ in rec.ended != nil }), rec.ended?.reason == .completed
                    else { return "not completed: \(rec.trace)" }
                    return nil
                } catch {
                    return "\(error): \(rec.trace)"
                }
            }

            /// No call starts from now on (for a `defer`: the calls under way end on their own).
            func halt() { state.withLock { $0.stopping = true } }

            /// Lets the calls under way finish; returns how many completed and what failed.
            func stop() async -> (completed: Int, failed: [String]) {
                halt()
                for task in workers.withLock({ $0 }) { await task.value }
                return state.withLock { ($0.completed, $0.failed) }
            }
        }

        static func reload(
            _ gw: GatewayProcess, bearer: String? = nil
        ) async throws -> (
            status: Int, json: [String: Any]
        ) {
            try await PageTokenScopeTests.call(gw, "POST", "/v1/admin/reload", bearer: bearer ?? gw.apiKey)
        }

        /// The summary's lists, `reloaded unchanged removed restartRequired` by name.
        static func summary(_ json: [String: Any]) -> [[String]] {
            ["reloaded", "unchanged", "removed", "restartRequired"].map { json[$0] as? [String] ?? ["?"] }
        }

        /// The stderr lines of SIGHUP's reloads so far.
        static func hangupLines(_ gw: GatewayProcess) -> [String] {
            gw.lines.filter { $0.hasPrefix("irisgw: reload (SIGHUP)") }
        }

        static func hangUp(_ gw: GatewayProcess, thenLines count: Int) async -> [String] {
            kill(gw.processID, SIGHUP)
            _ = await eventually(timeout: 10) { hangupLines(gw).count >= count }
            return hangupLines(gw)
        }

        /// Reloads by the API and by SIGHUP while calls go on: none fails; a profile added is
        /// usable at once and one removed is refused; a call in progress keeps its profile's
        /// transfer policy after the profile changed while a new call takes the new one; a
        /// broken profile refuses the whole reload, naming its file and key, and the old
        /// configuration goes on; a page token may not reload.
        @Test(.timeLimit(.minutes(2)))
        func reloadsUnderLoadWithoutFailingACall() async throws {
            let sim = try await CarrierSimProcess()
            defer { sim.stop() }
            var trunk = GatewayProcess.Profile(proxies: [sim.port])
            let gw = try await GatewayProcess(profiles: [trunk], config: "{ maxSessions: 50 }")
            defer { gw.stop() }
            let profiles = gw.directory.appendingPathComponent("profiles")
            func write(_ p: GatewayProcess.Profile) throws {
                try p.json5.write(
                    to: profiles.appendingPathComponent(p.name + ".json5"), atomically: true, encoding: .utf8)
            }
            let load = SteadyCalls(gw, at: 3)
            defer { load.halt() }
            #expect(await eventually(timeout: 15) { load.completed >= 1 }, "\(sim.lines.suffix(5))")
            // A call that started on the old profile: a refused REFER fails its transfer.
            let (before, recBefore) = try await GatewayTransferSimTests.echoingCall(gw, "+15550100025")
            defer { before.stop() }

            // The API: a profile added, one changed, a serve key live and one that needs a restart.
            var wholesale = GatewayProcess.Profile(name: "wholesale", proxies: [sim.port])
            wholesale.routes = [("+15550002000", "bob")]
            try write(wholesale)
            trunk.transfer = "fallback: \"bridge\""
            try write(trunk)
            try "{ maxSessions: 60, mediaThreads: 1 }".write(
                to: gw.directory.appendingPathComponent("serve.json5"), atomically: true, encoding: .utf8)
            let first = try await Self.reload(gw)
            #expect(first.status == 200, "\(first.json)")
            #expect(Self.summary(first.json) == [["trunk", "wholesale"], [], [], ["mediaThreads"]], "\(first.json)")

            // The call in progress keeps its policy (fail); a new call bridges.
            try await before.transfer(to: "+15550100001")
            #expect(
                await GatewayTransferSimTests.waitForTransfer(recBefore, "transfer:failed/405(refer app)"),
                "\(GatewayTransferSimTests.transfers(recBefore))")
            #expect(recBefore.ended == nil)
            let (after, recAfter) = try await GatewayTransferSimTests.echoingCall(gw, "+15550100025")
            defer { after.stop() }
            try await after.transfer(to: "+15550100001")
            #expect(
                await GatewayTransferSimTests.waitForTransfer(recAfter, "transfer:succeeded(bridge app)"),
                "\(GatewayTransferSimTests.transfers(recAfter))")
            try await before.close()
            try await after.close()

            // The new profile takes calls without a restart.
            let viaWholesale = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
            defer { viaWholesale.stop() }
            try await viaWholesale.createWithTN(
                targetTN: "+15550100001", sourceTN: "+15557654321", profile: "wholesale")
            try await viaWholesale.close()
            #expect(await viaWholesale.waitForEnd(timeout: 10))

            // SIGHUP: the same summary on stderr; nothing changed since.
            let sighup = await Self.hangUp(gw, thenLines: 1)
            #expect(
                sighup.last
                    == "irisgw: reload (SIGHUP): "
                    + #"{"reloaded":[],"removed":[],"restartRequired":["mediaThreads"],"unchanged":["trunk","wholesale"]}"#,
                "\(sighup)")

            // A broken profile refuses the whole reload, the trunk's change with it.
            trunk.maxConcurrentCalls = 90
            try write(trunk)
            let broken = profiles.appendingPathComponent("broken.json5")
            try
                #"{ name: "broken", outbound: { proxies: ["sip:127.0.0.1:5090"], fromDomain: "gw.test", maxConcurrentCalls: "ten" } }"#
                .write(to: broken, atomically: true, encoding: .utf8)
            let refused = try await Self.reload(gw)
            let error = refused.json["error"] as? [String: Any] ?? [:]
            #expect(refused.status == 422, "\(refused.json)")
            #expect(error["file"] as? String == broken.path && error["key"] as? String == "outbound.maxConcurrentCalls")
            #expect(error["code"] as? Int == IrisCode.incorrectParams)
            let refusedLines = await Self.hangUp(gw, thenLines: 2)
            #expect(
                refusedLines.last?.hasPrefix(
                    "irisgw: reload (SIGHUP) refused, the configuration in force stays: \(broken.path): outbound.maxConcurrentCalls: "
                ) == true, "\(refusedLines)")
            let completedBeforeFix = load.completed
            #expect(
                await eventually(timeout: 10) { load.completed > completedBeforeFix }, "calls stopped after a refusal")

            // A page token may not reload.
            let token = try await PageTokenScopeTests.mint(gw, routingId: "alice")
            #expect(try await Self.reload(gw, bearer: token).status == 403)

            // Fixed, and the wholesale profile removed: the trunk's change goes in now.
            try FileManager.default.removeItem(at: broken)
            try FileManager.default.removeItem(at: profiles.appendingPathComponent("wholesale.json5"))
            let last = try await Self.reload(gw)
            #expect(Self.summary(last.json) == [["trunk"], [], ["wholesale"], ["mediaThreads"]], "\(last.json)")
            let gone = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
            defer { gone.stop() }
            #expect(
                GatewayTrunkTests.refusal {
                    try gone.createWithTN(targetTN: "+15550100001", sourceTN: "+15557654321", profile: "wholesale")
                } == IrisCode.incorrectParams)

            let (completed, failed) = await load.stop()
            #expect(failed.isEmpty, "\(failed)")
            #expect(completed >= 3, "\(completed) calls")
        }
    }
}

extension GatewaySuites.GatewayReloadTests {
    /// A registrar on a UDP socket that grants every REGISTER what it asks and keeps what
    /// came: the address of record's user, the Call-ID and Expires of each. `stop()` in a
    /// `defer` (its loop ends within half a second).
    final class RecordingRegistrar: Sendable {
        struct Register: Sendable, Equatable {
            var user: String
            var callID: String
            var expires: Int
        }
        private let probe: UDPProbe
        private let seen = Mutex<[Register]>([])
        private let stopping = Mutex(false)
        var port: Int { probe.port }

        init() throws {
            probe = try UDPProbe()
            Task { [self] in
                while !stopping.withLock({ $0 }) {
                    guard let bytes = await probe.receive(timeout: 0.5) else { continue }
                    answer(bytes)
                }
            }
        }

        private func answer(_ bytes: [UInt8]) {
            guard let m = try? SIPMessage.parse(bytes), m.method == "REGISTER", let via = m.topVia,
                let user = (m[.to].flatMap { try? NameAddress.parse($0) })?.uri.user
            else { return }
            let expires = m.expires ?? 3600
            seen.withLock { $0.append(Register(user: user, callID: m.callID ?? "", expires: expires)) }
            var r = SIPMessage.response(to: m, status: 200, toTag: "registrar")
            if let contact = m[.contact] { r.addHeader(.contact, contact) }
            r.addHeader(.expires, String(expires))
            probe.send(r.serialize(), to: via.port ?? 5060)
        }

        /// What came for `user` so far.
        func registers(of user: String) -> [Register] { seen.withLock { $0.filter { $0.user == user } } }

        func stop() { stopping.withLock { $0 = true } }
    }

    /// A reload leaves an unchanged profile's registration alone, registers a changed one
    /// anew (a new REGISTER, no unregister: the binding never lapses) and unregisters a
    /// removed one (Expires: 0).
    @Test func registrationsFollowTheirProfiles() async throws {
        let registrar = try RecordingRegistrar()
        defer { registrar.stop() }
        var profiles: [GatewayProcess.Profile] = []
        for name in ["kept", "changed", "removed"] {
            var p = GatewayProcess.Profile(name: name, proxies: [registrar.port])
            p.register = true
            p.auth = (name, "REG_PASSWORD")
            p.hasInbound = false
            profiles.append(p)
        }
        let gw = try await GatewayProcess(profiles: profiles, environment: ["REG_PASSWORD": "s3cret"])
        defer { gw.stop() }
        #expect(
            await eventually(timeout: 10) {
                ["kept", "changed", "removed"].allSatisfy { registrar.registers(of: $0).count == 1 }
            })
        let directory = gw.directory.appendingPathComponent("profiles")
        profiles[1].maxConcurrentCalls = 5
        try profiles[1].json5.write(
            to: directory.appendingPathComponent("changed.json5"), atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("removed.json5"))
        let reload = try await Self.reload(gw)
        #expect(Self.summary(reload.json) == [["changed"], ["kept"], ["removed"], []], "\(reload.json)")
        #expect(
            await eventually(timeout: 10) {
                registrar.registers(of: "changed").count == 2 && registrar.registers(of: "removed").count == 2
            })
        let changed = registrar.registers(of: "changed")
        #expect(changed.count == 2 && changed[1].callID != changed[0].callID && changed[1].expires > 0, "\(changed)")
        #expect(registrar.registers(of: "removed").last?.expires == 0)
        #expect(registrar.registers(of: "kept").count == 1)
        let metrics = try await gw.connection().metricsText()
        #expect(!metrics.contains("profile=\"removed\""), "\(metrics)")
        // SIGINT unregisters the two left before the registrar goes.
        #expect(await gw.signal(SIGINT) == 0)
        #expect(
            await eventually(timeout: 5) {
                registrar.registers(of: "kept").last?.expires == 0
                    && registrar.registers(of: "changed").last?.expires == 0
            })
    }
}
