import Foundation
import SIP
import TestSupport
import Testing

/// SIPp places the calls (UAC); our `AnsweringEndpoint` answers them.
@Suite(.enabled(if: SIPp.isInstalled, "needs SIPp (/usr/bin/sipp, Debian sip-tester)"))
struct InboundCallTests {
    /// Five calls of SIPp's built-in `uac` (INVITE, 200, ACK, BYE from SIPp): all answered,
    /// all ended by the caller's BYE.
    @Test func answersSeveralCalls() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.builtIn("uac"), remote: agent.local, calls: 5, arguments: ["-r", "20"])
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 5 })
        let stats = await agent.stats(endpoint)
        #expect(stats.received == 5 && stats.connected == 5, "\(stats)")
        #expect(stats.endings == ["remoteHangup": 5], "\(stats)")
    }

    /// The same basic call over TCP (`-t t1`): SIPp connects, we answer on that connection.
    @Test func answersOverTCP() async throws {
        let agent = try TestAgent(transport: .tcp)
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.builtIn("uac"), remote: agent.local, transport: .tcp, calls: 2)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 2 })
        #expect(await agent.stats(endpoint).endings == ["remoteHangup": 2])
    }

    /// SIPp cancels while we ring (we would answer only after 5 s): 200 to the CANCEL, 487 to
    /// the INVITE, SIPp's ACK absorbed; the call ends as canceled.
    @Test(ConformanceCorpus.required) func callerCancelsWhileRinging() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering { $0.answerAfter = 5 }
        let sipp = try SIPp(.corpus("drachtio-srf/uac-cancel.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 1 })
        #expect(await agent.stats(endpoint).endings == ["canceled": 1])
        #expect(sipp.received("SIP/2.0 487") >= 1, "\(sipp.report)")
    }

    /// A re-INVITE with `a=sendonly` (hold) is answered `a=recvonly` (RFC 3264 §6.1); the
    /// scenario checks the 200's body with a regexp, then hangs up.
    @Test func holdIsAnsweredRecvonly() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.inline(name: "hold", xml: Scenarios.holdReinvite), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 1 })
        #expect(await agent.stats(endpoint).endings == ["remoteHangup": 1])
    }

    /// OPTIONS out of dialog gets 200 (pjproject uac-options.xml).
    @Test(ConformanceCorpus.required) func optionsGets200() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        _ = await agent.answering()
        let sipp = try SIPp(.corpus("pjproject/uac-options.xml"), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
    }

    /// SIPp's first ACK is dropped (and, `lost` being per message, its repeats too; the same
    /// ACK goes out again 700 ms later): meanwhile we retransmit the 200 (T1, doubling), and
    /// the late ACK confirms the call.
    @Test func lostACKIsRecoveredBy200Retransmission() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let endpoint = await agent.answering()
        let sipp = try SIPp(.inline(name: "lostack", xml: Scenarios.lostACK), remote: agent.local)
        defer { sipp.stop() }
        #expect(await sipp.waitForExit() == 0, "\(sipp.report)")
        #expect(await eventually(timeout: 5) { await agent.stats(endpoint).ended == 1 })
        let stats = await agent.stats(endpoint)
        #expect(stats.connected == 1 && stats.endings == ["remoteHangup": 1], "\(stats)")
        #expect(sipp.received("SIP/2.0 200") >= 3, "the 200 was not retransmitted\n\(sipp.report)")
    }
}
