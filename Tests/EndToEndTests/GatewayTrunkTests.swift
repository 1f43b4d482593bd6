import Foundation
import IrisAPI
import IrisClient
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// Trunk behaviours: digest auth, RTP supervision, SIP INFO DTMF, the toll-fraud limits,
    /// capacity and draining.
    @Suite struct GatewayTrunkTests {
        /// The Iris code a refused request threw (nil when it did not throw).
        static func refusal(_ work: () throws -> Void) -> Int? {
            do {
                try work()
                return nil
            } catch let e as IrisError {
                return e.irisCode
            } catch {
                return nil
            }
        }

        @Test func challengeIsAnsweredWithTheProfilesCredentials() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                Scenarios.challenge401, environment: ["TRUNK_PASSWORD": "secret"]
            ) {
                $0.auth = ("alice", "TRUNK_PASSWORD")
            }
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
                try await session.close()
            }
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func wrongCredentialsEndFailed() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                Scenarios.challenge401, environment: ["TRUNK_PASSWORD": "wrong"]
            ) {
                $0.auth = ("alice", "TRUNK_PASSWORD")
            }
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw)
            // SIPp answers bad credentials with 403.
            #expect(
                rec.trace == ["onSessionCreated", "Initializing", "Disconnected", "error:-417", "ended:failed"],
                "\(rec.events)")
        }

        @Test func aCarrierThatSendsNoRTPIsHungUpAsMediaTimeout() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer()) { profile in
                profile.rtpTimeoutSec = 5  // the profile's smallest
            }
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw, timeout: 15)
            #expect(
                rec.trace == [
                    "onSessionCreated", "Initializing", "Connecting", "Connected", "onStreamQualityIndicator",
                    "error:-412", "Disconnected", "ended:media-timeout"
                ], "\(rec.events)")
            #expect(sipp.received("BYE ") == 1, sipp.report)
            #expect(rec.ended?.sip?.code == 408 && rec.ended?.sip?.reason == "RTP Timeout", "\(rec.events)")
            // The record says why, with a code, like every other ending.
            let record = try #require(try await gw.recordsAfterStop().first)
            #expect(
                record.endReason == "media-timeout" && record.sipCode == 408 && record.sipReason == "RTP Timeout",
                "\(record)")
        }

        @Test func sipInfoDigitsReachTheApp() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(infoDigit: "5"))
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw) { session, rec in
                #expect(
                    await rec.waitFor { $0.contains { $0.event == .onSessionDTMF } }, "\(rec.trace)\n\(sipp.report)")
                try await session.close()
            }
            let dtmf = rec.events.first { $0.event == .onSessionDTMF }
            #expect(dtmf?.digit == "5" && dtmf?.durationMs == 160, "\(rec.events)")
        }

        @Test func concurrencyLimitRefusesBeforeDialling() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.ringUntilCancel) { profile in
                profile.maxConcurrentCalls = 1
            }
            defer { gw.stop(); sipp.stop() }
            let (first, _) = try await placedSession(gw, status: .connecting)
            defer { first.stop() }
            let second = IrisRtcAudioSession(
                connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
            defer { second.stop() }
            #expect(
                Self.refusal { try second.createWithTN(targetTN: "+15551230002", sourceTN: "+15557654321") } == -503)
            #expect(sipp.received("INVITE ") == 1)
            try await first.close()
            #expect(await first.waitForEnd(timeout: 10))
        }

        @Test func callsPerSecondLimitRefusesTheBurst() async throws {
            let sipp = try await SIPp.listening(
                .inline(name: "carrier", xml: CarrierScenarios.reject("486 Busy Here")), calls: 5, timeout: 30)
            defer { sipp.stop() }
            var profile = GatewayProcess.Profile(proxies: [sipp.port])
            profile.callsPerSecond = 2
            let gw = try await GatewayProcess(profiles: [profile])
            defer { gw.stop() }
            var refused = 0, placed: [IrisRtcAudioSession] = []
            for i in 0..<5 {
                let s = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
                switch Self.refusal({ try s.createWithTN(targetTN: "+1555123000\(i)", sourceTN: "+15557654321") }) {
                case nil:
                    placed.append(s)
                case let code:
                    #expect(code == -503)
                    refused += 1
                    s.stop()
                }
            }
            // The five requests take well under a second: two pass, three are refused.
            #expect(placed.count == 2 && refused == 3)
            for s in placed {
                #expect(await s.waitForEnd(timeout: 10))
                s.stop()
            }
        }

        @Test func overCapacityInboundGets503WithRetryAfter() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.ringUntilCancel, gatewayArguments: ["--max-sessions", "1"])
            defer { gw.stop(); sipp.stop() }
            let (first, _) = try await placedSession(gw, status: .connecting)
            defer { first.stop() }
            let caller = try GatewayInboundTests.caller(gw, CallerScenarios.rejected(503, ring: false))
            defer { caller.stop() }
            #expect(await caller.waitForExit(timeout: 10) == 0, caller.report)
            #expect(caller.messages.contains("Retry-After: 30"), caller.report)
            try await first.close()
            #expect(await first.waitForEnd(timeout: 10))
        }

        @Test func sigtermDrainsThenEndsCalls() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer())
            defer { gw.stop(); sipp.stop() }
            let (session, rec) = try await placedSession(gw)
            defer { session.stop() }
            let connection = try gw.connection()
            let exit = Task.detached { await gw.signal(SIGTERM, timeout: 15) }
            // While draining (the harness gives 2 s): new calls are refused, the live one goes on.
            // The drain flag is set just after the line: wait until /healthz says so.
            #expect(await gw.waitForOutput(containing: "draining", timeout: 5), "\(gw.printed)")
            let health = try HTTPClient(baseURL: gw.apiURL)
            #expect(
                await eventually(timeout: 5) {
                    (try? await health.request(method: "GET", path: "/healthz", timeout: 2)).map {
                        String(decoding: $0.body, as: UTF8.self)
                    }?
                    .contains("draining") == true
                })
            let late = IrisRtcAudioSession(connection: connection, stream: try IrisRtcStream(), delegate: nil)
            defer { late.stop() }
            #expect(Self.refusal { try late.createWithTN(targetTN: "+15551230002", sourceTN: "+15557654321") } == -503)
            #expect(rec.ended == nil)
            #expect(await exit.value == 0)
            #expect(rec.ended?.reason == .completed, "\(rec.events)")
            #expect(sipp.received("BYE ") == 1, sipp.report)
        }
    }
}

extension GatewaySuites.GatewayTrunkTests {
    /// `register: {enabled: true}`: the gateway registers with the trunk's first proxy
    /// (digest from the profile's credentials), refreshes, reports it in `/metrics`, and
    /// unregisters when it stops.
    @Test func profileRegistrationRegistersRefreshesAndUnregisters() async throws {
        let sipp = try await SIPp.listening(
            .inline(name: "registrar", xml: RegistrationAndAuthTests.registrar), timeout: 30)
        defer { sipp.stop() }
        var profile = GatewayProcess.Profile(proxies: [sipp.port])
        profile.register = true
        profile.auth = ("gw", "REG_PASSWORD")
        let gw = try await GatewayProcess(profiles: [profile], environment: ["REG_PASSWORD": "s3cret"])
        defer { gw.stop() }
        #expect(await eventually(timeout: 10) { sipp.received("REGISTER ") >= 3 }, sipp.report)
        let api = try HTTPClient(baseURL: gw.apiURL, defaultHeaders: ["Authorization": "Bearer " + gw.apiKey])
        let metrics = String(decoding: try await api.request(method: "GET", path: "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("irisgw_trunk_registered{profile=\"trunk\"} 1"), "\(metrics)")
        // Stopping unregisters (Expires: 0), which ends the registrar's scenario.
        #expect(await gw.signal(SIGINT) == 0)
        #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
    }
}

extension GatewaySuites.GatewayTrunkTests {
    /// Outbound calls carry their own trunk's session-timer setting: the INVITE through a
    /// profile with `sessionTimerSec: 0` has no Session-Expires, the default profile's has.
    @Test func sessionTimerFollowsTheTrunkOfTheCall() async throws {
        let sipp = try await SIPp.listening(
            .inline(name: "carrier", xml: CarrierScenarios.reject("486 Busy Here")), calls: 2, timeout: 30)
        defer { sipp.stop() }
        var timers = GatewayProcess.Profile(name: "a-timers", proxies: [sipp.port])
        timers.routes = [("+15550001000", "alice")]
        var none = GatewayProcess.Profile(name: "b-no-timers", proxies: [sipp.port])
        none.sessionTimerSec = 0
        none.routes = [("+15550002000", "bob")]
        let gw = try await GatewayProcess(profiles: [timers, none])
        defer { gw.stop() }
        for profile in ["b-no-timers", "a-timers"] {
            let s = IrisRtcAudioSession(connection: try gw.connection(), stream: try IrisRtcStream(), delegate: nil)
            try await s.createWithTN(targetTN: "+15551230001", sourceTN: "+15557654321", profile: profile)
            #expect(await s.waitForEnd(timeout: 10))
            s.stop()
        }
        let invites = sipp.messages.components(separatedBy: "-----------------------------------------------")
            .filter { $0.contains("message received") && $0.contains("INVITE sip:") }
        #expect(invites.count == 2, sipp.report)
        if invites.count == 2 {
            #expect(!invites[0].contains("Session-Expires") && !invites[0].contains("timer"), "\(invites[0])")
            #expect(invites[1].contains("Session-Expires: 1800"), "\(invites[1])")
        }
    }
}
