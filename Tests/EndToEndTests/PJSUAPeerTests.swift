import Foundation
import SIP
import TestSupport
import Testing

/// pjsua2 (PJSIP) peers in transfers, peer to peer and against our own `SIPUserAgent` (the
/// test plays the side the gateway will take): a blind transfer between pjsua peers with
/// the tone checked at the target; a pjsua "carrier" taking our REFER (blind, and with
/// `?Replaces=`) whose Refer-To names the carrier itself, routed to a pjsua target; a REFER
/// and an INVITE with Replaces from pjsua to our agent.
@Suite(
    .enabled(if: PJSUAPeer.isInstalled, "needs pjsua2 in .build/pyenv (`make deps` installs pjsua2-python)"),
    .timeLimit(.minutes(2)))
struct PJSUAPeerTests {
    /// The number a transfer goes to, and the one our agent calls from.
    static let target = "+15557770000"
    static let gatewayNumber = "+15550001000"

    /// pjsua A calls pjsua B and transfers it to pjsua C (REFER): B calls C, C hears B's
    /// 1 kHz, A gets NOTIFYs up to 200 and hangs up, B's first call ends.
    @Test func blindTransferBetweenPJSUAPeers() async throws {
        let c = try await PJSUAPeer(.init(user: "c", record: true))
        defer { c.stop() }
        let b = try await PJSUAPeer(.init(user: "b", tone: 1000))
        defer { b.stop() }
        let a = try await PJSUAPeer(.init(user: "a", autoAnswer: false))
        defer { a.stop() }

        a.send("call \(b.uri())")
        #expect(await a.waitFor(call: 0, state: "CONFIRMED") != nil, a.report)
        a.send("refer 0 \(c.uri())")

        let refer = await b.waitFor { $0.event == "refer-received" }
        #expect(refer?.referTo?.contains(c.uri()) == true, b.report)
        #expect(refer?.referredBy?.contains("sip:a@127.0.0.1") == true, b.report)
        let placed = try #require(await b.waitFor { $0.event == "transfer-call" }, b.report)
        #expect(placed.referCall == 0)
        #expect(await b.waitFor(call: try #require(placed.call), state: "CONFIRMED") != nil, b.report)
        #expect(await c.waitFor(call: 0, state: "CONFIRMED") != nil, c.report)
        #expect(await c.hears(call: 0, hz: 1000), c.report)

        let final = await a.waitFor { $0.event == "transfer-status" && $0.final == true }
        #expect(final?.status == 200, a.report)
        #expect(await a.waitFor(call: 0, state: "DISCONNECTED") != nil, a.report)
        #expect(await b.waitFor(call: 0, state: "DISCONNECTED") != nil, b.report)
    }

    /// Our agent and a pjsua "carrier" in a call (placed by either: `carrierCalls`); our
    /// agent REFERs the carrier to a number at the carrier's own address (as the gateway's
    /// Refer-To names its trunk's proxy); `--target` routes the carrier's new call to pjsua
    /// C, which hears the carrier's tone. Our agent gets the REFER's 202 and NOTIFYs of the
    /// `refer` event up to a final 200.
    @Test(arguments: [false, true])
    func carrierTakesREFERFromSIPUserAgentAndCallsTheTarget(carrierCalls: Bool) async throws {
        let c = try await PJSUAPeer(.init(user: "c", record: true))
        defer { c.stop() }
        let carrier = try await PJSUAPeer(.init(user: "carrier", tone: 1000, target: c.address))
        defer { carrier.stop() }
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let (call, recorder): (SIPCall, CallRecorder)
        if carrierCalls {
            let callee = await agent.answeringTransfers()
            carrier.send("call sip:\(Self.gatewayNumber)@127.0.0.1:\(agent.local.address.port)")
            (call, recorder) = try #require(await callee.connected(), carrier.report)
        } else {
            (call, recorder) = try await Self.call(carrier, from: agent)
        }

        let referTo = SIPURI(user: Self.target, host: "127.0.0.1", port: carrier.port)
        let referredBy = Self.referredBy(agent)
        let cseq = try #require(await agent.onLoop { call.refer(to: referTo, referredBy: referredBy) })
        #expect(await recorder.waitFor(.requestCompleted("REFER", 202)), "\(recorder.events)")

        let refer = await carrier.waitFor { $0.event == "refer-received" }
        #expect(refer?.referTo?.contains("\(Self.target)@127.0.0.1:\(carrier.port)") == true, carrier.report)
        #expect(refer?.referredBy?.contains(Self.gatewayNumber) == true, carrier.report)
        let incoming = await c.waitFor { $0.event == "incoming" }
        #expect(incoming?.from?.contains("sip:carrier@127.0.0.1") == true, c.report)
        #expect(await c.waitFor(call: 0, state: "CONFIRMED") != nil, c.report)
        #expect(await c.hears(call: 0, hz: 1000), c.report)

        #expect(await Self.finalNotify(recorder, id: cseq) == 200, "\(recorder.events)")
        await agent.onLoop { call.hangup() }
        #expect(await recorder.waitForEnd() != nil)
        #expect(await carrier.waitFor(call: 0, state: "DISCONNECTED") != nil, carrier.report)
    }

    /// Attended: our agent has a call with the carrier and one with C, and REFERs the
    /// carrier to `<number at the carrier>?Replaces=<our dialog with C>`. The carrier's
    /// INVITE (routed to C by `--target`) carries Replaces; C takes it in place of our call,
    /// which C ends with BYE, and hears the carrier's tone on the new one.
    @Test func carrierTakesREFERWithReplacesAndCReplacesOurCall() async throws {
        let c = try await PJSUAPeer(.init(user: "c", record: true))
        defer { c.stop() }
        let carrier = try await PJSUAPeer(.init(user: "carrier", tone: 1000, target: c.address))
        defer { carrier.stop() }
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let (toCarrier, carrierRecorder) = try await Self.call(carrier, from: agent)
        let (toC, cRecorder) = try await Self.call(c, from: agent)
        let dialog = try #require(await agent.onLoop { toC.currentDialog })

        var uri = SIPURI(user: Self.target, host: "127.0.0.1", port: carrier.port)
        uri.headers = Replaces(naming: dialog).uriHeader
        let referTo = uri
        let referredBy = Self.referredBy(agent)
        let cseq = try #require(await agent.onLoop { toCarrier.refer(to: referTo, referredBy: referredBy) })
        #expect(await carrierRecorder.waitFor(.requestCompleted("REFER", 202)), "\(carrierRecorder.events)")

        let refer = await carrier.waitFor { $0.event == "refer-received" }
        #expect(refer?.referTo?.contains(Replaces(naming: dialog).uriHeader) == true, carrier.report)
        let replaced = await c.waitFor { $0.event == "replaced" }
        #expect(replaced?.call == 0, c.report)
        let newCall = try #require(replaced?.newCall, c.report)
        #expect(await c.waitFor(call: newCall, state: "CONFIRMED") != nil, c.report)
        #expect(await c.hears(call: newCall, hz: 1000), c.report)
        #expect(await cRecorder.waitForEnd() == .remoteHangup, "\(cRecorder.events)")

        #expect(await Self.finalNotify(carrierRecorder, id: cseq) == 200, "\(carrierRecorder.events)")
        await agent.onLoop { toCarrier.hangup() }
        #expect(await carrierRecorder.waitForEnd() != nil)
    }

    /// pjsua (a PBX) REFERs our agent: the REFER has Refer-To and Referred-By; our 202 and
    /// NOTIFYs (100, then 200) reach pjsua as transfer progress, and on the final 200 it
    /// hangs up (BYE).
    @Test func pjsuaREFERsSIPUserAgent() async throws {
        let pbx = try await PJSUAPeer(.init(user: "pbx", autoAnswer: false))
        defer { pbx.stop() }
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let callee = await agent.answeringTransfers()
        pbx.send("call sip:\(Self.gatewayNumber)@127.0.0.1:\(agent.local.address.port)")
        #expect(await pbx.waitFor(call: 0, state: "CONFIRMED") != nil, pbx.report)
        let (call, recorder) = try #require(await callee.connected(), pbx.report)

        let target = "sip:\(Self.target)@127.0.0.1"
        pbx.send("refer 0 \(target)")
        #expect(await recorder.waitFor(.request("REFER")), "\(recorder.events)")
        let refer = try #require(recorder.messages.first { $0.method == "REFER" })
        #expect(refer.referTo?.uri.user == Self.target && refer.referTo?.uri.host == "127.0.0.1", "\(refer)")
        #expect(refer.referredBy?.uri.user == "pbx", "\(refer)")
        let id = try #require(refer.cseq?.sequence)
        #expect(await pbx.waitFor { $0.event == "transfer-status" && $0.status == 100 } != nil, pbx.report)

        for (status, reason) in [(100, "Trying"), (200, "OK")] {
            let frag = SIPFrag(status: status, reason: reason)
            #expect(await agent.onLoop { call.notifyRefer(id: id, progress: frag) } != nil)
            #expect(
                await pbx.waitFor { $0.event == "transfer-status" && $0.status == status && $0.reason == reason }
                    != nil, pbx.report)
        }
        let final = await pbx.waitFor { $0.event == "transfer-status" && $0.final == true }
        #expect(final?.status == 200, pbx.report)
        #expect(await recorder.waitFor(.requestCompleted("NOTIFY", 200)), "\(recorder.events)")
        #expect(await recorder.waitForEnd() == .remoteHangup, "\(recorder.events)")
        #expect(await pbx.waitFor(call: 0, state: "DISCONNECTED") != nil, pbx.report)
    }

    /// pjsua calls our agent, then places a second call whose INVITE carries `Replaces:`
    /// naming the first dialog: `ua.call(replacedBy:)` finds the first call; our agent
    /// takes the new call and hangs up the old one (RFC 3891 §3).
    @Test func pjsuaINVITEWithReplacesNamesTheFirstDialog() async throws {
        let phone = try await PJSUAPeer(.init(user: "phone", autoAnswer: false))
        defer { phone.stop() }
        let agent = try TestAgent()
        defer { agent.shutdown() }
        let replacedCalls = Collected<String>()
        let ua = agent.ua
        let callee = await agent.answeringTransfers { call, _ in
            guard let replaces = call.invite.replaces, let old = ua.call(replacedBy: replaces) else { return }
            replacedCalls.append(old.callID)
            old.hangup()
        }
        let uri = "sip:\(Self.gatewayNumber)@127.0.0.1:\(agent.local.address.port)"
        phone.send("call \(uri)")
        #expect(await phone.waitFor(call: 0, state: "CONFIRMED") != nil, phone.report)
        let (first, firstRecorder) = try #require(await callee.connected(), phone.report)

        phone.send("replace 0 \(uri)")
        let dialog = await phone.waitFor { $0.event == "dialog" }
        #expect(dialog?.callId == first.callID, phone.report)
        #expect(await phone.waitFor(call: 1, state: "CONFIRMED") != nil, phone.report)
        let (second, _) = try #require(await callee.connected(1), phone.report)
        let invite = await agent.onLoop { second.invite }
        let replaces = try #require(invite.replaces, "\(invite)")
        #expect(replaces.callID == first.callID)
        #expect(await agent.onLoop { first.currentDialog.map { $0.localTag == replaces.toTag } } == true)
        #expect(await agent.onLoop { first.currentDialog?.remoteTag } == replaces.fromTag)
        #expect(replacedCalls.values == [first.callID])
        #expect(await phone.waitFor(call: 0, state: "DISCONNECTED") != nil, phone.report)
        #expect(await firstRecorder.waitForEnd() == .localHangup)
    }

    // MARK: Helpers

    /// Our agent's call to `peer` (which answers), once connected.
    static func call(_ peer: PJSUAPeer, from agent: TestAgent) async throws -> (SIPCall, CallRecorder) {
        let recorder = CallRecorder()
        recorder.respondTo = CallRecorder.takingTransfers
        let call = await agent.call(
            uri: try SIPURI.parse(peer.uri()), peer: peer.peer, recorder: recorder,
            sdp: SDP.offer(port: UInt16(try freePort())))
        #expect(await recorder.waitFor(.connected), "\(recorder.events)\n\(peer.report)")
        return (call, recorder)
    }

    static func referredBy(_ agent: TestAgent) -> NameAddress {
        NameAddress(uri: SIPURI(user: gatewayNumber, host: "127.0.0.1", port: agent.local.address.port))
    }

    /// The sipfrag status of the NOTIFY that ends the REFER's subscription (nil if none
    /// within 10 s); every NOTIFY before it must be of the REFER's `refer` event.
    static func finalNotify(_ recorder: CallRecorder, id: UInt32) async -> Int? {
        let all = await recorder.referNotifies()
        #expect(all.allSatisfy { $0.isReferNotify(id: id) }, "\(all)")
        return all.last(where: { $0.subscriptionState?.value == .terminated })?.sipfragStatus
    }
}
