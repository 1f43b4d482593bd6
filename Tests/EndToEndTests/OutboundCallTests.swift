import Foundation
import SIP
import TestSupport
import Testing

/// SIPp plays the carrier (UAS); our `SIPUserAgent` places the calls.
@Suite(.enabled(if: SIPp.isInstalled, "needs SIPp (/usr/bin/sipp, Debian sip-tester)"))
struct OutboundCallTests {
    /// INVITE answered 180/200 by SIPp's built-in `uas`; we ACK, then hang up with BYE.
    @Test func answeredCallAndOurBye() async throws {
        let sipp = try SIPp(.builtIn("uas"))
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening(), "\(sipp.report)")
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(rec.events.contains(.provisional(180, sdp: false)))
        #expect(await agent.onLoop { call.remoteSDP != nil })
        await agent.onLoop { call.hangup() }
        #expect(await rec.waitForEnd() == .localHangup)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.received("ACK ") == 1 && sipp.received("BYE ") >= 1, "\(sipp.report)")
    }

    /// 486 Busy Here ends the call as rejected(486), and SIPp gets its ACK (the scenario ends
    /// only when the ACK arrives).
    @Test func busyHere() async throws {
        let sipp = try SIPp(.inline(name: "busy", xml: Scenarios.busy))
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening(), "\(sipp.report)")
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let rec = CallRecorder()
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd() == .rejected(status: 486), "\(rec.events)\n\(sipp.report)")
        #expect(rec.events.contains(.provisional(180, sdp: false)))
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// 401 with a Digest challenge: we ACK it and send the INVITE again with Authorization,
    /// which SIPp checks (`verifyauth`) before answering 200.
    @Test func digestChallengeThenAnswer() async throws {
        let sipp = try SIPp(.inline(name: "challenge401", xml: Scenarios.challenge401))
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening(), "\(sipp.report)")
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let rec = CallRecorder()
        let call = await agent.call(
            sipp, recorder: rec, credentials: DigestCredentials(username: "alice", password: "secret"))
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await agent.onLoop { call.invite.cseq?.sequence } == 2)
        #expect(await agent.onLoop { call.invite[.authorization] != nil })
        await agent.onLoop { call.hangup() }
        #expect(await rec.waitForEnd() == .localHangup)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// 183 Session Progress with SDP (early media), then 200: the provisional carries the
    /// answer, then the call connects.
    @Test func earlyMediaThenAnswer() async throws {
        let sipp = try SIPp(.inline(name: "early183", xml: Scenarios.earlyMedia))
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening(), "\(sipp.report)")
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        let events = rec.events
        #expect(
            events.firstIndex(of: .provisional(183, sdp: true)).map { $0 < events.firstIndex(of: .connected)! } == true,
            "\(events)")
        #expect(SDP.codecs(rec.messages.first?.sdp) == ["PCMU"])
        #expect(await agent.onLoop { call.state } == .confirmed)
        await agent.onLoop { call.hangup() }
        #expect(await rec.waitForEnd() == .localHangup)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// CANCEL while ringing: SIPp answers the CANCEL 200 and the INVITE 487; we ACK the 487
    /// and the call ends as canceled.
    @Test func cancelWhileRinging() async throws {
        let sipp = try SIPp(.inline(name: "cancel487", xml: Scenarios.cancelWhileRinging))
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening(), "\(sipp.report)")
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let rec = CallRecorder()
        rec.onProvisional = { call, r in if r.statusCode == 180 { call.cancel() } }
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd() == .canceled, "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.received("CANCEL ") >= 1 && sipp.received("ACK ") == 1, "\(sipp.report)")
    }

    /// SIPp drops its first 200 to the INVITE (`lost="100"`) and answers our BYE only after
    /// 1.2 s: the 200's retransmission connects the call, and our BYE is retransmitted
    /// (Timer E) until SIPp answers it.
    @Test func lostFinalResponsesAreRecovered() async throws {
        let sipp = try SIPp(.inline(name: "lost200", xml: Scenarios.lostResponses))
        defer { sipp.stop() }
        #expect(await sipp.waitUntilListening(), "\(sipp.report)")
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        await agent.onLoop { call.hangup() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.received("BYE ") >= 2, "our BYE was not retransmitted\n\(sipp.report)")
        #expect(rec.end == .localHangup)
        #expect(sipp.received("ACK ") >= 1)
    }

    /// Our first INVITE goes to a port nobody listens on yet (lost); osip retransmits it
    /// (Timer A) and SIPp, started meanwhile, answers the retransmission.
    @Test func lostInviteIsRetransmitted() async throws {
        let port = try freePort()
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let rec = CallRecorder()
        let peer = SIPPeer(transport: .udp, address: SocketAddress(host: "127.0.0.1", port: port))
        let call = await agent.call(
            uri: SIPURI(user: "service", host: "127.0.0.1", port: port), peer: peer, recorder: rec)
        let sipp = try SIPp(.builtIn("uas"), port: port)
        defer { sipp.stop() }
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        await agent.onLoop { call.hangup() }
        #expect(await rec.waitForEnd() == .localHangup)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }
}
