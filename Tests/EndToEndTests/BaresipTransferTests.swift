import Foundation
import SIP
import TestSupport
import Testing

/// baresip 1.0.0 (Debian 12) in transfers against our own `SIPUserAgent` (the test plays the
/// side the gateway will take). baresip takes a REFER by itself: it answers 202, calls the
/// Refer-To at once ("menu: transferring call ID to '<URI>'") and reports that call's progress
/// in NOTIFYs (`Event: refer;id=<REFER's CSeq>`, sipfrag 100 then the final status). Its
/// `/transfer URI` sends a REFER (Refer-To only, no Referred-By) and hangs up once a NOTIFY
/// says 200.
@Suite(.enabled(if: Baresip.isInstalled, "needs baresip (Debian baresip) with its ausine and aubridge modules"))
struct BaresipTransferTests {
    static let target = "+15557770000"
    static let gatewayNumber = "+15550001000"

    /// baresip calls agent A; A REFERs it to a number at agent B: baresip calls B (the
    /// INVITE's Request-URI is the Refer-To), and A gets NOTIFYs up to a final 200.
    @Test func baresipTakesREFERAndCallsTheTarget() async throws {
        let a = try TestAgent()
        defer { a.shutdown() }
        let b = try TestAgent()
        defer { b.shutdown() }
        let first = await a.answeringTransfers()
        let second = await b.answeringTransfers()
        let phone = try await Baresip(
            account: .init(), dial: "sip:\(Self.gatewayNumber)@127.0.0.1:\(a.local.address.port)", timeout: 30)
        defer { phone.stop() }
        #expect(await phone.waitFor("Call established"), phone.report)
        let (call, recorder) = try #require(await first.connected(), phone.report)

        let referTo = SIPURI(user: Self.target, host: "127.0.0.1", port: b.local.address.port)
        let referredBy = NameAddress(uri: SIPURI(user: Self.gatewayNumber, host: "127.0.0.1"))
        let cseq = try #require(await a.onLoop { call.refer(to: referTo, referredBy: referredBy) })
        #expect(await recorder.waitFor(.requestCompleted("REFER", 202)), "\(recorder.events)\n\(phone.report)")
        #expect(await phone.waitFor("transferring call"), phone.report)
        #expect(phone.transferLines.contains { $0.contains("to '<\(referTo)>'") }, phone.report)

        let (targetCall, targetRecorder) = try #require(await second.connected(), phone.report)
        let invite = await b.onLoop { targetCall.invite }
        #expect(invite.requestURI?.user == Self.target, "\(invite)")

        let notifies = await recorder.referNotifies()
        #expect(notifies.allSatisfy { $0.isReferNotify(id: cseq) }, "\(notifies)")
        #expect(notifies.compactMap(\.sipfragStatus) == [100, 200], "\(notifies)")
        #expect(notifies.last?.subscriptionState?.value == .terminated, "\(notifies)")

        await a.onLoop { call.hangup() }
        #expect(await recorder.waitForEnd() == .localHangup)
        // baresip left with a call whose far end is gone spins resending BYE (libre 1.0).
        await b.onLoop { targetCall.hangup() }
        #expect(await targetRecorder.waitForEnd() == .localHangup)
        #expect(await phone.waitFor("\(referTo): session closed"), phone.report)
    }

    /// baresip's `/transfer URI` sends REFER in its call with our agent; our 202 and NOTIFYs
    /// (100, 200) are taken (200 to each), and on the final 200 baresip hangs up.
    @Test func baresipSendsREFER() async throws {
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let callee = await agent.answeringTransfers()
        let phone = try await Baresip(
            account: .init(), dial: "sip:\(Self.gatewayNumber)@127.0.0.1:\(agent.local.address.port)", timeout: 30)
        defer { phone.stop() }
        #expect(await phone.waitFor("Call established"), phone.report)
        let (call, recorder) = try #require(await callee.connected(), phone.report)

        phone.transfer(to: "sip:\(Self.target)@127.0.0.1")
        #expect(await recorder.waitFor(.request("REFER")), "\(recorder.events)\n\(phone.report)")
        let refer = try #require(recorder.messages.first { $0.method == "REFER" })
        #expect(refer.referTo?.uri.user == Self.target && refer.referTo?.uri.host == "127.0.0.1", "\(refer)")
        #expect(phone.transferLines.contains { $0.contains("transferring call to sip:\(Self.target)@127.0.0.1") })
        let id = try #require(refer.cseq?.sequence)

        for (status, reason) in [(100, "Trying"), (200, "OK")] {
            let frag = SIPFrag(status: status, reason: reason)
            #expect(await agent.onLoop { call.notifyRefer(id: id, progress: frag) } != nil)
        }
        #expect(
            await recorder.waitFor { $0.filter { $0 == .requestCompleted("NOTIFY", 200) }.count == 2 },
            "\(recorder.events)\n\(phone.report)")
        #expect(await recorder.waitForEnd() == .remoteHangup, "\(recorder.events)\n\(phone.report)")
    }
}
