import Foundation
import IrisAPI
import IrisClient
import Media
import SIP
import TestSupport
import Testing

extension GatewaySuites {
    /// In-call verbs through the gateway: hold and unhold with the SDP directions on the wire,
    /// DTMF both ways, mute; and the call records afterwards.
    @Suite struct GatewayInCallTests {
        @Test func localHoldAndUnholdSendSendonlyThenSendrecv() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(acceptHoldAndResume: true))
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
                try await session.hold()
                #expect(await rec.waitForStatus(.hold), "\(rec.trace)\n\(sipp.report)")
                // A second hold while held is refused.
                await #expect(throws: IrisError.self) { try await session.hold() }
                try await session.unhold()
                #expect(
                    await rec.waitFor { $0.filter { $0.status == .connected }.count == 2 },
                    "\(rec.trace)\n\(sipp.report)")
                try await session.close()
            }
            let statuses = rec.events.filter { $0.event == .onSessionSIPStatus }.map {
                $0.status!.rawValue + ($0.by.map { "(\($0))" } ?? "")
            }
            #expect(
                statuses == ["Initializing", "Connecting", "Connected", "Hold(local)", "Connected", "Disconnected"],
                "\(rec.events)")
            // What the carrier received: a re-INVITE with a=sendonly, then one with a=sendrecv.
            let invites = sipp.messages.components(separatedBy: "-----------------------------------------------")
                .filter { $0.contains("message received") && $0.contains("INVITE sip:") }
            #expect(invites.count == 3, sipp.report)
            if invites.count == 3 {
                #expect(invites[1].contains("a=sendonly") && invites[2].contains("a=sendrecv"), sipp.report)
            }
            #expect(await sipp.waitForExit(timeout: 10) == 0, sipp.report)
        }

        @Test func dtmfFromThePSTNReachesTheApp() async throws {
            let xml = CarrierScenarios.answer(playAfterAnswer: "/usr/share/sip-tester/dtmf_2833_1.pcap")
            let (sipp, gw) = try await carrierAndGateway(xml)
            defer { gw.stop(); sipp.stop() }
            let (rec, _) = try await GatewayOutboundTests.call(gw) { session, rec in
                #expect(
                    await rec.waitFor { $0.contains { $0.event == .onSessionDTMF } }, "\(rec.trace)\n\(sipp.report)")
                try await session.close()
            }
            let digits = rec.events.filter { $0.event == .onSessionDTMF }
            #expect(digits.map(\.digit) == ["1"], "\(rec.events)")
            #expect((digits.first?.durationMs ?? 0) > 0)
        }

        @Test func dtmfFromTheAppReachesTheCarrierAsRFC4733() async throws {
            let media = try RTPSocketPeer()
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(mediaAddress: "127.0.0.1:\(media.address.port)"))
            defer { gw.stop(); sipp.stop() }
            _ = try await GatewayOutboundTests.call(gw) { session, rec in
                #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
                try await session.insertDTMFtone("123#", durationMs: 100)
                _ = await eventually(timeout: 5) {
                    media.drain()
                    return Self.digits(media.packets(payloadType: 101)) == "123#"
                }
                try await session.close()
            }
            #expect(Self.digits(media.packets(payloadType: 101)) == "123#")
            #expect(!media.packets(payloadType: 0).isEmpty, "no PCMU from the gateway")
        }

        static func digits(_ packets: [RTPSocketPeer.Received]) -> String {
            var receiver = DTMFReceiver(configuration: .init(clockRate: 8000))
            var out = ""
            for (i, p) in packets.enumerated() {
                guard let report = try? TelephoneEvent.parse(p.payload) else { continue }
                for case .ended(let d, _) in receiver.receive(
                    report, timestamp: p.timestamp, sequenceNumber: p.sequenceNumber, now: Double(i) * 0.02)
                {
                    out.append(d.character)
                }
            }
            return out
        }

        /// Iris hold: "neither of the users will be able to send or receive audio". The
        /// carrier echoes what it gets, so the app's tone stops coming back while held.
        @Test func holdSilencesTheCallBothWays() async throws {
            let (sipp, gw) = try await carrierAndGateway(
                CarrierScenarios.answer(acceptHoldAndResume: true), sippArguments: ["-rtp_echo"])
            defer { gw.stop(); sipp.stop() }
            _ = try await GatewayOutboundTests.call(gw, source: .tone(hz: 440, amplitude: 0.3)) { session, rec in
                #expect(await rec.waitForStatus(.connected))
                #expect(await eventually(timeout: 5) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) > 0.3 })
                try await session.hold()
                #expect(await rec.waitForStatus(.hold), "\(rec.trace)\n\(sipp.report)")
                #expect(await eventually(timeout: 5) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) < 0.05 })
                try await session.unhold()
                #expect(
                    await rec.waitFor { $0.filter { $0.status == .connected }.count == 2 },
                    "\(rec.trace)\n\(sipp.report)")
                #expect(await eventually(timeout: 5) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) > 0.3 })
                try await session.close()
            }
        }

        @Test func muteSilencesTheAppTowardTheCarrier() async throws {
            let (sipp, gw) = try await carrierAndGateway(CarrierScenarios.answer(), sippArguments: ["-rtp_echo"])
            defer { gw.stop(); sipp.stop() }
            _ = try await GatewayOutboundTests.call(gw, source: .tone(hz: 440, amplitude: 0.3)) { session, rec in
                #expect(await rec.waitForStatus(.connected))
                #expect(await eventually(timeout: 5) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) > 0.3 })
                try await session.mute()
                // The echo of silence comes back: the tone's energy goes.
                #expect(await eventually(timeout: 5) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) < 0.05 })
                #expect(try await session.connection.snapshot(roomId: session.roomId!).muted)
                try await session.unmute()
                #expect(await eventually(timeout: 5) { session.stream.leg.toneLevel(hz: 440, lastSeconds: 0.4) > 0.3 })
                try await session.close()
            }
        }
    }
}

extension GatewaySuites.GatewayInCallTests {
    /// A carrier that sends DTMF as tones in the audio (profile `dtmf: "inband"`): the
    /// gateway's detector reports the digits.
    @Test func inbandDigitsFromTheCarrierAreDetected() async throws {
        let media = try RTPSocketPeer()
        let xml = CarrierScenarios.answer(telephoneEvent: false, mediaAddress: "127.0.0.1:\(media.address.port)")
        let (sipp, gw) = try await carrierAndGateway(xml) { profile in profile.dtmf = "inband" }
        defer { gw.stop(); sipp.stop() }
        let (rec, _) = try await GatewaySuites.GatewayOutboundTests.call(gw) { session, rec in
            #expect(await rec.waitForStatus(.connected), "\(rec.trace)\n\(sipp.report)")
            #expect(
                await eventually(timeout: 5) {
                    media.drain(); return media.lastSource != nil
                })
            let to = try #require(media.lastSource)
            // "7" (852 + 1209 Hz) for 120 ms and "#" (941 + 1477 Hz), with silence around them.
            let digits: [(Double, Double)?] = [
                nil, nil, (852, 1209), (852, 1209), (852, 1209), (852, 1209), (852, 1209), (852, 1209),
                nil, nil, nil, nil, (941, 1477), (941, 1477), (941, 1477), (941, 1477), (941, 1477),
                (941, 1477), nil, nil, nil, nil, nil, nil
            ]
            await pacedFrames(digits.count) { n in
                let pcm: [Int16] = (0..<160).map { i in
                    guard let (low, high) = digits[n] else { return 0 }
                    let t = Double(n * 160 + i) / 8000
                    return Int16(5000 * sin(2 * .pi * low * t) + 5000 * sin(2 * .pi * high * t))
                }
                var ulaw: [UInt8] = []
                G711.encodeULaw(pcm, into: &ulaw)
                media.send(payloadType: 0, payload: ulaw, to: to)
                media.timestamp &+= 160
            }
            #expect(await rec.waitFor { $0.filter { $0.event == .onSessionDTMF }.count >= 2 }, "\(rec.trace)")
            try await session.close()
        }
        #expect(rec.events.filter { $0.event == .onSessionDTMF }.map(\.digit) == ["7", "#"], "\(rec.events)")
    }
}
