import Foundation
import TestSupport
import Testing

@testable import SIP

/// Manifest scenarios with `dut_role` uac: SIPp (the scenario) is the callee, our agent
/// places the call, and the test plays the application (cancels, holds, hangs up) where the
/// scenario expects it. See docs/conformance.md for the table.
@Suite(.enabled(if: SIPp.isInstalled, "needs SIPp (/usr/bin/sipp, Debian sip-tester)"), ConformanceCorpus.required)
struct ConformanceOutboundTests {
    /// Starts SIPp as the callee of `agent` and waits until it listens. SIPp is given the
    /// agent's address as its remote, which scenarios use for their own in-dialog requests
    /// (`[remote_ip]`, `[remote_port]`).
    private func callee(
        _ scenario: SIPp.Scenario, of agent: TestAgent, timeout: Double = 20,
        arguments: [String] = []
    ) async throws -> SIPp {
        try await SIPp.listening(scenario, remote: agent.local, timeout: timeout, arguments: arguments)
    }

    /// We cancel while it rings; SIPp answers the CANCEL but never sends 487. The INVITE
    /// client transaction must end on its own 64*T1 after the CANCEL (RFC 3261 §9.1); T1 is
    /// 50 ms here so that takes 3.2 s.
    @Test func pjprojectCancelWithoutFinalResponse() async throws {
        let agent = try TestAgent(t1: 0.05)
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-cancel-no-final.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        rec.onProvisional = { call, r in if r.statusCode == 180 { call.cancel() } }
        _ = await agent.call(sipp, recorder: rec)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await rec.waitForEnd(timeout: 10) == .canceled, "\(rec.events)")
        #expect(await eventually(timeout: 2) { await agent.onLoop { agent.ua.transactions.count } == 0 })
    }

    /// A 183 whose SDP answer has a codec we never offered (EVS): the application cancels;
    /// 200/CANCEL, 487, our ACK.
    @Test func pjprojectEarlyAnswerWithWrongCodecIsCanceled() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-answer-183-wrong-codec.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let offered = SDP.codecs(SDP.offer())
        rec.onProvisional = { call, r in
            if let sdp = r.sdp, !SDP.codecs(sdp).contains(where: offered.contains) { call.cancel() }
        }
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd() == .canceled, "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(rec.events.contains(.provisional(183, sdp: true)))
    }

    /// A 183 with SDP but no To tag (malformed): no early dialog, no provisional reported, no
    /// crash; the call is still `calling`.
    @Test func pjprojectProvisionalWithoutToTagIsIgnored() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-answer-183-without-to-tag.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.counters.received >= 1 })
        #expect(rec.events.isEmpty, "\(rec.events)")
        #expect(await agent.onLoop { call.state } == .calling)
        #expect(await agent.onLoop { call.dialog == nil })
    }

    /// BYE from the callee inside the early dialog (after 180): 200 to it, the call ends as a
    /// remote hangup.
    @Test func pjprojectEarlyBye() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-early-bye.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd() == .remoteHangup, "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// Forked early dialogs with reliable 180s: each in-order RSeq per To tag is PRACKed
    /// (UA_1 1000, UA_2 2000 and 2001, UA_1 1001), the jump to 2004 is not; 603 is ACKed.
    /// The scenario builds each 180's To as `[last_To:];tag=UA_x`; after SIPp received our
    /// PRACK, `[last_To:]` already has a tag, so "Ringing2" says `tag=UA_1;tag=UA_2`. We read
    /// the first tag (pjsua evidently the last), see RSeq 2000 on UA_1 and do not PRACK it, so
    /// the original stalls. The corrected copy keeps the INVITE's To and adds one tag.
    /// Takes about 10 s (the scenario pauses 2 s five times).
    @Test(arguments: [false, true])
    func pjprojectForked100rel(corrected: Bool) async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let file = "pjproject/uas-forked-100rel.xml"
        let scenario =
            corrected
            ? try SIPp.patched(
                file,
                [
                    (
                        #"assign_to="4"/>"#,
                        #"assign_to="4"/><ereg regexp=".*" search_in="hdr" header="To:" assign_to="invite_to"/>"#
                    ),
                    ("[last_To:];tag=UA_", "To:[$invite_to];tag=UA_")
                ]) : .corpus(file)
        let sipp = try await callee(scenario, of: agent, timeout: 30)
        defer { sipp.stop() }
        let rec = CallRecorder()
        _ = await agent.call(sipp, recorder: rec)
        if corrected {
            #expect(await rec.waitForEnd(timeout: 20) == .rejected(status: 603), "\(rec.events)\n\(sipp.report)")
            #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
            #expect(sipp.received("PRACK ") == 4, "\(sipp.report)")
            #expect(
                sipp.lines.contains("RAck: 2001 1 INVITE") && sipp.lines.contains("RAck: 1001 1 INVITE"),
                "\(sipp.report)")
            #expect(!sipp.lines.contains("RAck: 2004 1 INVITE"))
        } else {
            let doubleTag = "To: <sip:service@127.0.0.1:\(sipp.port)>;tag=UA_1;tag=UA_2"
            #expect(await eventually(timeout: 5) { sipp.lines.contains(doubleTag) }, "\(sipp.report)")
            // SIPp now retransmits "Ringing2" waiting for a PRACK we do not send.
            #expect(await sipp.waitForExit(timeout: 1) == nil)
            #expect(sipp.received("PRACK ") == 1, "\(sipp.report)")
        }
    }

    /// REGISTER through our `RegistrationClient`, challenged by a 401 whose `WWW-Authenticate`
    /// has no nonce (`digest realm="test",stale=true`; RFC 7616 §3.3 requires one). Like
    /// pjsua, we answer it anyway (with an empty nonce) and the second REGISTER gets 200.
    @Test func pjprojectRegisterWithChallengeWithoutNonce() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-auth.xml"), of: agent)
        defer { sipp.stop() }
        let states = Collected<RegistrationMachine.State>()
        let config = RegistrationClient.Configuration(
            registrar: SIPURI(host: "127.0.0.1", port: sipp.port), peer: sipp.peer,
            addressOfRecord: NameAddress(uri: SIPURI(user: "a", host: "127.0.0.1")),
            credentials: DigestCredentials(username: "a", password: "secret"))
        let ua = agent.ua
        let client = await ua.loop.run { () -> LoopBound<RegistrationClient> in
            let c = ua.registration(config)
            c.onStateChange = { states.append($0) }
            c.start()
            return LoopBound(c, loop: ua.loop)
        }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(
            await eventually(timeout: 5) {
                states.values.contains { if case .registered = $0 { true } else { false } }
            },
            "\(states.values)\n\(sipp.report)")
        #expect(await ua.loop.run { client.value.lastStatus } == 200)
        #expect(sipp.received("REGISTER ") == 2, "\(sipp.report)")
        #expect(sipp.messages.contains("Authorization: Digest"), "\(sipp.report)")
    }

    /// 100 and 180, then 401: we ACK it and send the INVITE again with Authorization; the
    /// scenario ends that attempt with 500, which we ACK too.
    @Test func pjprojectChallengeAfterRinging() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-inv_401_retry_after_100.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(
            sipp, recorder: rec, credentials: DigestCredentials(username: "alice", password: "secret"))
        #expect(await rec.waitForEnd() == .rejected(status: 500), "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await agent.onLoop { call.invite[.authorization] != nil })
        #expect(sipp.received("INVITE ") == 2 && sipp.received("ACK ") == 2, "\(sipp.report)")
    }

    /// SIPp answers (a 200 without To tag, which RFC 2543 allowed), then holds us with a
    /// re-INVITE `a=sendonly` (answered `recvonly`); once SIPp has ACKed, the application
    /// holds too, and SIPp answers our re-INVITE `a=inactive`.
    @Test func pjprojectDoubleHold() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-reinv-with-less-media.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await rec.waitFor(.request("INVITE")), "\(rec.events)\n\(sipp.report)")
        #expect(await SDP.codecs(agent.onLoop { call.localSDP }) == ["PCMU"])
        #expect(await agent.onLoop { call.localSDP?.direction(ofMedia: 0) } == .recvonly)
        // RFC 3261 §14.1: no re-INVITE of ours while theirs is unfinished (until its ACK).
        #expect(await eventually(timeout: 5) { sipp.lines.contains("Cseq: 2 ACK") })
        _ = await eventually(timeout: 1) { await agent.onLoop { call.retransmitting == nil } }
        #expect(await agent.onLoop { call.reinvite(sdp: SDP.offer(direction: .sendonly, version: 2)) })
        #expect(await rec.waitFor(.offerCompleted(200)), "\(rec.events)\n\(sipp.report)")
        #expect(await agent.onLoop { call.remoteSDP?.direction(ofMedia: 0) } == .inactive)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        await agent.onLoop { call.hangup() }
    }

    /// Glare: while our UPDATE (with an offer) is pending, SIPp sends a re-INVITE with an
    /// offer; we answer 491 (RFC 3311 §5.2), then SIPp answers our UPDATE (`SIPCall.update`).
    @Test func pjprojectOfferGlareGets491() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-reinv-glare.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await agent.onLoop { call.update(sdp: SDP.offer(version: 2)) })
        #expect(await rec.waitFor(.offerCompleted(200), timeout: 10), "\(rec.events)\n\(sipp.report)")
        // One 491, or more when SIPp retransmitted its UPDATE before our answer (load).
        #expect(sipp.received("SIP/2.0 491") >= 1, "\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await agent.onLoop { call.state } == .confirmed)
        await agent.onLoop { call.hangup() }
    }

    /// Session timer, refresher us (`Session-Expires: 90;refresher=uac`), peer without UPDATE:
    /// we refresh at half the interval (45 s) with a re-INVITE carrying our SDP.
    /// SLOW: about 50 s.
    @Test func pjprojectSessionRefreshByReinvite() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-timer-reinvite.xml"), of: agent, timeout: 70)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit(timeout: 65) == 0, "\(sipp.report)")
        #expect(sipp.received("INVITE ") == 2 && sipp.received("ACK ") == 2, "\(sipp.report)")
        #expect(rec.events.contains(.offerCompleted(200)))
        await agent.onLoop { call.hangup() }
    }

    /// Session timer with UPDATE allowed: at 45 s we refresh with an SDP-less UPDATE, which
    /// SIPp refuses with 400. The scenario then expects a second UPDATE carrying SDP (what
    /// pjsua does); our `SessionTimer` instead switches the dialog to re-INVITE with SDP for
    /// good and refreshes at once (its documented rule; RFC 4028 allows either method), so
    /// SIPp, waiting for UPDATE, aborts on our INVITE. The test checks our side of that.
    /// SLOW: about 45 s.
    @Test func pjprojectSessionRefreshByUpdate() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-timer-update.xml"), of: agent, timeout: 70)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit(timeout: 65) != 0, "\(sipp.report)")
        #expect(sipp.received("UPDATE ") == 1, "\(sipp.report)")
        #expect(sipp.received("INVITE ") == 2 && sipp.lines.contains("CSeq: 3 INVITE"), "\(sipp.report)")
        #expect(await agent.onLoop { call.state } == .confirmed)
        await agent.onLoop { call.hangup() }
    }

    /// 422 with Min-SE 5400: we retry with Session-Expires 5400; the 200 then carries 3600
    /// (below that Min-SE); we still ACK and the call is up.
    @Test func pjproject422ThenSmallerSessionExpires() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("pjproject/uas-422-then-200-bad-se.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await agent.onLoop { call.invite[.sessionExpires] }?.hasPrefix("5400") == true)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        await agent.onLoop { call.hangup() }
    }

    /// Asterisk's duplicate hold: SIPp answers, holds twice (re-INVITE with `a=sendonly`, or
    /// `a=inactive`), then unholds with an SDP-less re-INVITE (we offer sendrecv in the 200;
    /// its ACK brings no answer) and hangs up.
    @Test(arguments: [
        "asterisk-testsuite/hold__phone_B_duplicate_hold.xml",
        "asterisk-testsuite/hold_inactive__phone_B_duplicate_hold.xml"
    ])
    func asteriskDuplicateHold(_ file: String) async throws {
        let inject = SIPp.corpus.appendingPathComponent("asterisk-testsuite/hold_inject.csv").path
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus(file), of: agent, arguments: ["-inf", inject])
        defer { sipp.stop() }
        let rec = CallRecorder()
        var version: UInt64 = 1
        rec.answerFor = { call, offer, _ in
            version += 1
            guard let offer else { return SDP.offer(version: version) }
            return SDP.answer(to: offer)
        }
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd(timeout: 15) == .remoteHangup, "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        let hold = file.contains("inactive") ? "a=inactive" : "a=recvonly"
        #expect(sipp.received("SIP/2.0 200") >= 3, "\(sipp.report)")
        #expect(sipp.lines.contains(hold), "\(sipp.report)")
        #expect(rec.events.filter { $0 == .request("INVITE") }.count == 3)
    }

    /// 183 with `Require: 100rel`, RSeq 3000: we PRACK it (RAck 3000 1 INVITE); 200, ACK; BYE
    /// from SIPp. SIPp 3.6.1 does not move past a `<send retrans>` until it receives
    /// something, and nothing follows the 200 to our PRACK, so the scenario would stall
    /// there: the copy run here sends that 200 without `retrans`.
    @Test func asteriskOutgoing100rel() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let noRetrans = (
            "<send retrans=\"500\">\n    <![CDATA[\n\n      SIP/2.0 200 OK\n      [last_Via:]",
            "<send>\n    <![CDATA[\n\n      SIP/2.0 200 OK\n      [last_Via:]"
        )
        let sipp = try await callee(
            SIPp.patched("asterisk-testsuite/rel100_outgoing__check_100rel.xml", [noRetrans]), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd() == .remoteHangup, "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.lines.contains("RAck: 3000 1 INVITE"), "\(sipp.report)")
    }

    /// 180 then 486 Busy Here (Reason Q.850 cause 17): rejected(486), ACK sent.
    @Test func asteriskBusy() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("asterisk-testsuite/bob_is_busy__receive-ipv4-udp.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd() == .rejected(status: 486), "\(rec.events)\n\(sipp.report)")
        #expect(rec.messages.last?.q850Cause == 17)
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// CANCEL/200 race: we cancel as soon as the 100 arrives; SIPp answers the CANCEL yet
    /// sends 200 to the INVITE. We ACK that 200 and end the call with BYE (RFC 3261 §9.1).
    @Test func asteriskCancelRacesWith200() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("asterisk-testsuite/call_canceled__call_cancel_valid_sdp.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        await agent.onLoop { call.cancel() }
        #expect(await rec.waitForEnd() == .canceled, "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.received("ACK ") == 1 && sipp.received("BYE ") >= 1, "\(sipp.report)")
    }

    /// Early media: 183 with SDP from one To tag, then 200 from another (a fork): we ACK the
    /// 200's dialog and our BYE goes there.
    @Test func asteriskEarlyMediaThenForked200() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("asterisk-testsuite/early_media__ua1_invite_recv.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(rec.events.first == .provisional(183, sdp: true))
        #expect(await agent.onLoop { call.dialog?.remoteTag?.contains("SIPpForkTag01") } == true)
        await agent.onLoop { call.hangup() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// 180 then CANCEL from us: 200/CANCEL, 487, ACK.
    @Test func drachtioCancel() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("drachtio-srf/uas-cancel.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        rec.onProvisional = { call, _ in call.cancel() }
        _ = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitForEnd() == .canceled, "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// A reliable 180 (RSeq 1, no Contact): we PRACK it; 200/PRACK, 200/INVITE, ACK; our BYE.
    @Test func drachtioPRACK() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("drachtio-srf/uas-prack.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        await agent.onLoop { call.hangup() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.lines.contains("RAck: 1 1 INVITE"), "\(sipp.report)")
    }

    /// 407 to the INVITE: ACK, INVITE again with Proxy-Authorization; 180, 200, ACK; our BYE
    /// (drachtio uas-auth). In uas-bye-with-auth the BYE is challenged too, and we send it
    /// again with Proxy-Authorization: allowed because this is a call we placed with
    /// credentials for this peer.
    @Test(arguments: ["drachtio-srf/uas-auth.xml", "drachtio-srf/uas-bye-with-auth.xml"])
    func drachtioProxyAuth(_ file: String) async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus(file), of: agent, timeout: 15)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(
            sipp, recorder: rec, credentials: DigestCredentials(username: "alice", password: "secret"))
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await agent.onLoop { call.invite[.proxyAuthorization] != nil })
        await agent.onLoop { call.hangup() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        let byes = file.contains("bye") ? 2 : 1
        #expect(sipp.received("BYE ") == byes, "\(sipp.report)")
    }

    /// FreeSWITCH's 407 then 180/200 (the second attempt's responses use a new To tag).
    @Test func freeswitchProxyAuth() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("freeswitch/uas_407.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(
            sipp, recorder: rec, credentials: DigestCredentials(username: "alice", password: "secret"))
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        await agent.onLoop { call.hangup() }
        #expect(rec.end == .localHangup)
    }

    /// SIPp's documented `uas` scenario, from its file: 180, 200, ACK, our BYE.
    @Test func sippUAS() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let sipp = try await callee(.corpus("sipp/uas.xml"), of: agent)
        defer { sipp.stop() }
        let rec = CallRecorder()
        let call = await agent.call(sipp, recorder: rec)
        #expect(await rec.waitFor(.connected), "\(rec.events)\n\(sipp.report)")
        await agent.onLoop { call.hangup() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }
}
