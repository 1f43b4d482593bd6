import Foundation
import SDP
import SIP
import TestSupport
import Testing

/// Manifest scenarios with `dut_role` uas: SIPp (the scenario) calls, we answer. The test
/// plays the application where the scenario expects one (answer late, hang up, accept an
/// offer in PRACK or UPDATE). See docs/conformance.md for the table.
@Suite(.enabled(if: SIPp.isInstalled, "needs SIPp (/usr/bin/sipp, Debian sip-tester)"), ConformanceCorpus.required)
struct ConformanceInboundTests {
    /// Delayed offer: INVITE without SDP; we offer in the 200, SIPp answers in the ACK; then
    /// we hang up.
    @Test func pjprojectInviteWithoutSDP() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let loop = agent.ua.loop
        let callee = await agent.scripted { call, rec in
            #expect(call.remoteSDP == nil)
            rec.onConnect = { call, _ in loop.schedule(after: 0.1) { call.hangup() } }
            call.answer(sdp: SDP.offer())
        }
        let sipp = try SIPp(.corpus("pjproject/uac-inv-without-sdp.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        let rec = try #require(callee.recorders.first)
        #expect(await rec.waitForEnd() == .localHangup, "\(rec.events)")
        #expect(rec.events.contains(.answer), "the SDP answer in the ACK was not reported: \(rec.events)")
    }

    /// Two Require header fields (timer, toto): 420 Bad Extension listing `toto` only.
    @Test func pjprojectMultipleRequire() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.corpus("pjproject/uac-inv-multiple-require.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.lines.contains("Unsupported: toto"), "\(sipp.report)")
        #expect(await agent.stats(endpoint).received == 0)
    }

    /// A late retransmission of the INVITE (same branch, now with our To tag) after the ACK
    /// gets the 200 again and opens no second call; then a real re-INVITE and BYE.
    @Test func pjprojectRetransmissionAfterACK() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.corpus("pjproject/uac-inv-retrans-after-ack.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 1 })
        let stats = await agent.stats(endpoint)
        #expect(stats.received == 1 && stats.endings == ["remoteHangup": 1], "\(stats)")
    }

    /// An offer with only EVS: 488 Not Acceptable Here, and SIPp's ACK is absorbed.
    @Test func pjprojectWrongCodecIs488() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.corpus("pjproject/uac-183-wrong-codec.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await agent.stats(endpoint).endings == ["rejected(status: 488)": 1])
    }

    /// 100rel: we send a reliable 183 with our answer; the PRACK carries a new offer, which
    /// we answer in the 200 to the PRACK; then 200 to the INVITE, ACK, BYE from SIPp.
    @Test func pjprojectPRACKWithOffer() async throws {
        let agent = try TestAgent(prack: .required)
        defer { agent.shutdown() }
        let loop = agent.ua.loop
        let callee = await agent.scripted { call, rec in
            rec.answerFor = { call, offer, request in
                guard request.method == "PRACK", let offer else { return nil }
                loop.execute { call.answer(sdp: nil) }
                return SDP.answer(to: offer)
            }
            call.ring(sdp: call.remoteSDP.flatMap { SDP.answer(to: $0) })
        }
        let sipp = try SIPp(.corpus("pjproject/uac-prack-sdp-offer.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        let rec = try #require(callee.recorders.first)
        #expect(await rec.waitForEnd() == .remoteHangup, "\(rec.events)")
        #expect(rec.events.contains(.request("PRACK")))
    }

    /// 100rel: the PRACK's offer has only EVS. As pjsua does, the application answers it with
    /// the stream rejected (port 0, RFC 3264 §6) in the 200 to the PRACK, then fails the
    /// INVITE with 488.
    @Test func pjprojectPRACKWithUnacceptableOffer() async throws {
        let agent = try TestAgent(prack: .required)
        defer { agent.shutdown() }
        let loop = agent.ua.loop
        let callee = await agent.scripted { call, rec in
            rec.answerFor = { call, offer, request in
                guard request.method == "PRACK", let offer else { return nil }
                if let answer = SDP.answer(to: offer) { return answer }
                loop.execute { call.reject(status: 488) }
                var refused = SDP.offer()
                refused.media = offer.media.map { m in
                    MediaDescription(media: m.media, port: 0, proto: m.proto, formats: m.formats)
                }
                return refused
            }
            call.ring(sdp: call.remoteSDP.flatMap { SDP.answer(to: $0) })
        }
        let sipp = try SIPp(.corpus("pjproject/uac-prack-sdp-decline.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        let rec = try #require(callee.recorders.first)
        #expect(await rec.waitForEnd() == .rejected(status: 488), "\(rec.events)")
    }

    /// Early-dialog UPDATE (RFC 3311) with a new offer after the reliable 183 and its PRACK:
    /// answered in the 200 to the UPDATE; then 200 to the INVITE, ACK, BYE from SIPp.
    /// The scenario's BYE has a fixed `CSeq: 2` below its UPDATE's CSeq 3, which RFC 3261
    /// §12.2.2 makes us refuse with 500; the corrected copy uses `[cseq]` (4).
    @Test(arguments: [false, true])
    func pjprojectEarlyUpdateWithOffer(corrected: Bool) async throws {
        let agent = try TestAgent(prack: .required)
        defer { agent.shutdown() }
        let loop = agent.ua.loop
        let callee = await agent.scripted { call, rec in
            rec.answerFor = { call, offer, request in
                guard request.method == "UPDATE", let offer else { return nil }
                loop.execute { call.answer(sdp: nil) }
                return SDP.answer(to: offer)
            }
            call.ring(sdp: call.remoteSDP.flatMap { SDP.answer(to: $0) })
        }
        let file = "pjproject/uac-upd-sdp-offer.xml"
        let scenario = corrected ? try SIPp.patched(file, [("CSeq: 2 BYE", "CSeq: [cseq] BYE")]) : .corpus(file)
        let sipp = try SIPp(scenario, remote: agent.local)
        defer { sipp.stop() }
        let code = await sipp.waitForExit()
        let rec = try #require(callee.recorders.first)
        #expect(rec.events.contains(.request("UPDATE")))
        if corrected {
            #expect(code == 0, "\(sipp.report)")
            #expect(await rec.waitForEnd() == .remoteHangup, "\(rec.events)")
        } else {
            #expect(code != 0)
            #expect(sipp.received("SIP/2.0 500 CSeq Out Of Order") >= 1, "\(sipp.report)")
        }
    }

    /// `Require: 100rel`: our 183 (with the answer) is sent reliably, SIPp PRACKs it, and our
    /// 200 to the INVITE waits for that PRACK (RFC 3262 §3); then we hang up.
    @Test func asteriskIncomingRequire100rel() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let callee = await agent.scripted { call, rec in
            rec.onConnect = { call, _ in call.hangup() }
            let answer = call.remoteSDP.flatMap { SDP.answer(to: $0) }
            call.ring(sdp: answer)
            call.answer(sdp: nil)
        }
        let sipp = try SIPp(
            .corpus("asterisk-testsuite/rel100_incoming_require__check_100rel.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        let rec = try #require(callee.recorders.first)
        #expect(await rec.waitForEnd() == .localHangup, "\(rec.events)")
    }

    /// Session-Expires 120 below our Min-SE (600 here): 422 with Min-SE, ACK absorbed.
    @Test func asteriskSessionTimerBelowMinSE() async throws {
        let agent = try TestAgent(sessionTimer: SessionTimerPolicy(minSE: 600))
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.corpus("asterisk-testsuite/session-timer-minse.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(sipp.lines.contains("Min-SE: 600"), "\(sipp.report)")
        #expect(await agent.stats(endpoint).received == 0)
    }

    /// `Supported: 100rel` with our policy `required`: a reliable 180, SIPp's PRACK gets 200
    /// (even after our 200 to the INVITE went out: RFC 3262 §3), then ACK and BYE from SIPp.
    /// The scenario's PRACK carries `RAck: 42 1 INVITE INVITE` (its regexp keeps the whole
    /// match "1 INVITE"), a malformed RAck we answer 400; the corrected copy keeps the number.
    @Test(arguments: [false, true])
    func drachtioUACPRACK(corrected: Bool) async throws {
        let agent = try TestAgent(prack: .required)
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let file = "drachtio-srf/uac-prack.xml"
        let scenario =
            corrected ? try SIPp.patched(file, [(#"regexp="([0-9]+) INVITE""#, #"regexp="[0-9]+""#)]) : .corpus(file)
        let sipp = try SIPp(scenario, remote: agent.local)
        defer { sipp.stop() }
        let code = await sipp.waitForExit()
        if corrected {
            #expect(code == 0, "\(sipp.report)")
            #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 1 })
            #expect(await agent.stats(endpoint).endings == ["remoteHangup": 1])
        } else {
            #expect(code != 0)
            #expect(sipp.received("SIP/2.0 400 Bad Request (RAck: malformed RAck)") >= 1, "\(sipp.report)")
        }
    }

    /// Digest leak: SIPp challenges the BYE of a call it placed to us. We must not answer
    /// the challenge (the caller would get a digest computed with our trunk password), so the
    /// scenario, waiting for a second BYE, never completes.
    @Test func freeswitchDigestLeakIsRefused() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering { $0.hangupAfter = 0.1 }
        let sipp = try SIPp(.corpus("freeswitch/uac_digest_leak.xml"), remote: agent.local, timeout: 10)
        defer { sipp.stop() }
        #expect(
            await eventually(timeout: 5) {
                sipp.received("BYE ") == 1 && sipp.messages.contains("407 Proxy Authentication Required")
            },
            "\(sipp.report)")
        // An answer to the challenge would follow the 407 at once; give it 1 s.
        #expect(await sipp.waitForExit(timeout: 1) == nil, "SIPp got the second BYE it fishes for\n\(sipp.report)")
        #expect(sipp.received("BYE ") == 1, "\(sipp.report)")
        #expect(!sipp.messages.contains("Proxy-Authorization"), "\(sipp.report)")
        #expect(await agent.stats(endpoint).endings == ["localHangup": 1])
    }

    /// SIPp's documented `uac` scenario, from its file.
    @Test func sippUAC() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.corpus("sipp/uac.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 1 })
        #expect(await agent.stats(endpoint).endings == ["remoteHangup": 1])
    }

    /// `uac_pcap`: a call during which SIPp plays G.711 A-law RTP and an RFC 2833 DTMF from
    /// pcap files toward the port in our SDP (nothing listens: we are signalling only). The
    /// signalling must complete around it.
    @Test func sippUACWithPcapMedia() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(
            .corpus("sipp/uac_pcap.xml"), remote: agent.local, timeout: 30,
            workingDirectory: SIPp.corpus.appendingPathComponent("sipp"))
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 1 })
        #expect(await agent.stats(endpoint).endings == ["remoteHangup": 1])
    }
}
