import CarrierSim
import Foundation
import SDP
import SIP
import TestSupport
import Testing

/// The "gateway" side of a transfer test: records the REFERs and NOTIFYs the simulator sends
/// in the call (answered as `respond` says) and the outcomes of the ones the test sends, on
/// top of the usual `CallRecorder` events.
final class TransferRecorder: SIPCallDelegate, @unchecked Sendable {
    let base = CallRecorder()
    private let lock = NSLock()
    private var _log: [String] = []
    private var _received: [SIPMessage] = []
    private var _completed: [(method: String, cseq: UInt32, status: Int, response: SIPMessage?)] = []
    private var subscriptionEnded = false

    /// What happened, in order: `got NOTIFY 100 active`, `REFER 2 completed 202` ...
    var log: [String] { lock.withLock { _log } }
    /// The REFERs and NOTIFYs the simulator sent, in order.
    var received: [SIPMessage] { lock.withLock { _received } }
    var completed: [(method: String, cseq: UInt32, status: Int, response: SIPMessage?)] {
        lock.withLock { _completed }
    }
    /// The sipfrag status of each NOTIFY received, in order.
    var notified: [Int] {
        received.filter { $0.method == "NOTIFY" }.map { (try? SIPFrag.parse($0.body).status) ?? 0 }
    }

    func call(_ call: SIPCall, responseTo request: SIPMessage) -> SIPRequestResponse {
        lock.withLock {
            _received.append(request)
            let response: SIPRequestResponse
            if request.method == "REFER" {
                response = SIPRequestResponse(status: 202, reason: "Accepted")
            } else if subscriptionEnded {
                // As a notifier's subscriber: none left once a terminated NOTIFY came (RFC 6665).
                response = SIPRequestResponse(status: 481, reason: "Subscription Does Not Exist")
            } else {
                subscriptionEnded = request.subscriptionState?.value == .terminated
                response = SIPRequestResponse(status: 200)
            }
            let frag = (try? SIPFrag.parse(request.body)).map { " \($0.status)" } ?? ""
            let state = request.subscriptionState.map { " \($0.serialize())" } ?? ""
            _log.append("got \(request.method)\(frag)\(state) -> \(response.status)")
            return response
        }
    }

    func call(_ call: SIPCall, didCompleteRequest method: String, cseq: UInt32, status: Int, response: SIPMessage?) {
        lock.withLock {
            _completed.append((method, cseq, status, response))
            _log.append("\(method) completed \(status)")
        }
    }

    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {
        base.call(call, didReceiveProvisional: response)
    }
    func call(_ call: SIPCall, didConnect message: SIPMessage) { base.call(call, didConnect: message) }
    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        base.call(call, answerFor: offer, in: request)
    }
    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {
        base.call(call, didReceiveAnswer: answer, in: message)
    }
    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        base.call(call, didEnd: end, message: message)
    }
}

/// The test's agent as the gateway a replaces-call number calls back: answers each new call
/// (with `answer`'s SDP, or rejects it with `rejectStatus`) and remembers which call its
/// `Replaces` named.
final class ReplacingCallTaker: SIPUserAgentDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _invites: [SIPMessage] = []
    private var _replaced: [SIPCall?] = []
    let recorder = TransferRecorder()
    let answer: SessionDescription
    let rejectStatus: Int?
    private(set) var newCall: SIPCall?

    init(answer: SessionDescription, rejectStatus: Int? = nil) {
        self.answer = answer
        self.rejectStatus = rejectStatus
    }

    var invites: [SIPMessage] { lock.withLock { _invites } }
    /// For each INVITE, the call its Replaces named (`SIPUserAgent.call(replacedBy:)`).
    var replaced: [SIPCall?] { lock.withLock { _replaced } }

    func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) {
        let named = call.invite.replaces.flatMap { ua.call(replacedBy: $0) }
        lock.withLock {
            _invites.append(call.invite)
            _replaced.append(named)
            newCall = call
        }
        call.delegate = recorder
        if let rejectStatus {
            call.reject(status: rejectStatus, reason: "Call/Transaction Does Not Exist")
            return
        }
        call.answer(sdp: answer)
        // The replaced call ends (RFC 3891 §3: BYE to the old dialog).
        named?.hangup()
    }
}

extension SimulatorCallSuites {
    /// The transfer numbers (024-031) over real sockets: the project's `SIPUserAgent` plays the
    /// gateway, sending REFER in the simulator's calls and taking its REFER and Replaces.
    @Suite struct TransferTests {
        /// Calls `number` and waits for the answer.
        static func connect(
            _ h: SimHarness, _ number: String, _ rec: TransferRecorder, headers: [SIPHeader] = []
        ) async throws -> SIPCall {
            let ua = h.caller
            let uri = SIPURI(user: number, host: h.simPeer.address.host, port: h.simPeer.address.port)
            let from = NameAddress(
                uri: SIPURI(user: "+15557654321", host: h.callerLocal.address.host, port: h.callerLocal.address.port))
            let peer = h.simPeer
            let offer = TestSDP.offer(port: rec.base.mediaPort)
            let call = await ua.loop.run {
                ua.invite(
                    requestURI: uri, from: from, to: NameAddress(uri: uri), peer: peer, sdp: offer, headers: headers,
                    delegate: rec)
            }
            try #require(await rec.base.waitFor(.connected), "\(rec.base.events)")
            return call
        }

        /// Sends REFER to `target` from the gateway's side; returns its CSeq.
        static func refer(_ h: SimHarness, _ call: SIPCall, to target: String) async throws -> UInt32 {
            let host = h.simPeer.address.host
            let cseq = await h.onCaller {
                call.refer(
                    to: SIPURI(user: target, host: host),
                    referredBy: NameAddress(uri: SIPURI(user: "+15557654321", host: "gw.example.com")))
            }
            return try #require(cseq)
        }

        /// The REFER's final status, once it came.
        static func referStatus(_ rec: TransferRecorder, cseq: UInt32) async -> SIPMessage? {
            _ = await eventually(timeout: 10) { rec.completed.contains { $0.method == "REFER" } }
            let done = rec.completed.first { $0.method == "REFER" && $0.cseq == cseq }
            return done?.response
        }

        @Test(arguments: [
            ("+15550100001", [100, 180, 200]), ("+15550100002", [100, 180, 486]), ("+15550100006", [100, 180, 603]),
            ("+15550100003", [100, 180])
        ])
        func acceptReportsTheTargetsOutcome(_ target: String, _ expected: [Int]) async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = TransferRecorder()
            let call = try await Self.connect(h, "+15550100024", rec)
            let cseq = try await Self.refer(h, call, to: target)
            let response = try #require(await Self.referStatus(rec, cseq: cseq))
            #expect(response.statusCode == 202)
            #expect(await eventually(timeout: 10) { rec.notified.count >= expected.count }, "\(rec.log)")
            let notifies = rec.received.filter { $0.method == "NOTIFY" }
            #expect(rec.notified.prefix(expected.count) == expected[...], "\(rec.log)")
            for n in notifies {
                #expect(n.event == EventHeader(package: "refer", id: String(cseq)))
                #expect(n[.contentType] == SIPFrag.contentType)
            }
            let states = notifies.map { $0.subscriptionState?.value }
            let final = expected.last.map { $0 >= 200 } ?? false
            #expect(
                states == Array(repeating: .active, count: final ? 2 : expected.count) + (final ? [.terminated] : []))
            if !final {
                // Rings for ever: no final NOTIFY comes (the window is the behaviour, not a wait).
                #expect(!(await eventually(timeout: 1) { rec.notified.count > expected.count }), "\(rec.log)")
            }
            let steps = h.simulator.transfers(for: "+15550100024")
            guard case .referReceived(let referTo, let referredBy, 202) = steps.first else {
                Issue.record("\(steps)")
                return
            }
            #expect(referTo?.contains("sip:\(target)@") == true)
            #expect(referredBy == "<sip:+15557654321@gw.example.com>")
            // The transferor leaves after success (RFC 5589); the simulator answers the BYE.
            await h.onCaller { call.hangup() }
            #expect(await rec.base.waitForEnd() == .localHangup)
            #expect(await eventually(timeout: 5) { h.simulator.reports.count == 1 })
            let report = try #require(h.simulator.reports.first)
            #expect(report.outcome.hasPrefix("completed, caller hung up"), "\(report)")
            #expect(
                h.simulator.transfers(for: "+15550100024").dropFirst()
                    == expected.map { .notifySent(sipfrag: $0, response: 200) }[...])
        }

        @Test(arguments: [("+15550100025", 405), ("+15550100026", 603)])
        func refusedREFER(_ number: String, _ status: Int) async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = TransferRecorder()
            let call = try await Self.connect(h, number, rec)
            let cseq = try await Self.refer(h, call, to: "+15550100001")
            let response = try #require(await Self.referStatus(rec, cseq: cseq))
            #expect(response.statusCode == status)
            if status == 405 {
                let allow = response.values(.allow).joined(separator: ",")
                #expect(allow.contains("INVITE") && !allow.contains("REFER"), "\(allow)")
            }
            #expect(await h.onCaller { call.state } == .confirmed)
            #expect(
                h.simulator.transfers(for: number).map {
                    if case .referReceived(_, _, let s) = $0 { s } else { 0 }
                } == [status])
            #expect(rec.received.isEmpty)
        }

        @Test func failedTransferKeepsTheCall() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let rec = TransferRecorder()
            rec.base.mediaPort = probe.port
            let call = try await Self.connect(h, "+15550100027", rec)
            let cseq = try await Self.refer(h, call, to: "+15550100001")
            #expect(try #require(await Self.referStatus(rec, cseq: cseq)).statusCode == 202)
            #expect(await eventually(timeout: 10) { rec.notified.count >= 2 }, "\(rec.log)")
            #expect(rec.notified == [100, 486])
            #expect(rec.received.last?.subscriptionState?.value == .terminated)
            // The call goes on, still echoing.
            #expect(await h.onCaller { call.state } == .confirmed)
            let sdp = try #require(await h.remoteSDP(call))
            let target = SocketAddress(host: "127.0.0.1", port: Int(try #require(sdp.media.first).port))
            let payload = pcmuTone(hz: 440, frame: 0)
            probe.send(payloadType: 0, payload: payload, to: target)
            #expect(await probe.receive(for: 5) { !$0.isEmpty }.first?.payload == payload)
            #expect(h.simulator.activeCalls == 1 && h.simulator.reports.isEmpty)
        }

        @Test func oddNotifyOrder() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = TransferRecorder()
            let call = try await Self.connect(h, "+15550100028", rec)
            let cseq = try await Self.refer(h, call, to: "+15550100001")
            #expect(await eventually(timeout: 10) { rec.notified.count >= 5 }, "\(rec.log)")
            #expect(
                rec.log == [
                    "got NOTIFY 100 active;expires=60 -> 200", "REFER completed 202",
                    "got NOTIFY 180 active;expires=60 -> 200", "got NOTIFY 180 active;expires=60 -> 200",
                    "got NOTIFY 200 terminated;reason=noresource -> 200",
                    "got NOTIFY 200 terminated;reason=noresource -> 481"
                ])
            #expect(rec.received.allSatisfy { $0.event?.id == String(cseq) })
            #expect(
                await eventually(timeout: 5) {
                    h.simulator.transfers(for: "+15550100028").last == .notifySent(sipfrag: 200, response: 481)
                })
            #expect(
                h.simulator.transfers(for: "+15550100028").dropFirst().map {
                    if case .notifySent(let frag, let response) = $0 { "\(frag) \(response)" } else { "\($0)" }
                } == ["100 200", "180 200", "180 200", "200 200", "200 481"])
        }

        @Test func noNotifyAfterThe202() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = TransferRecorder()
            let call = try await Self.connect(h, "+15550100029", rec)
            let cseq = try await Self.refer(h, call, to: "+15550100001")
            #expect(try #require(await Self.referStatus(rec, cseq: cseq)).statusCode == 202)
            // Ten NOTIFY intervals (scaled 0.05 s): none comes.
            #expect(!(await eventually(timeout: 1) { !rec.received.isEmpty }), "\(rec.log)")
            #expect(h.simulator.transfers(for: "+15550100029").count == 1)
        }

        @Test func refersCallerThenLeavesOnSuccess() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = TransferRecorder()
            let call = try await Self.connect(h, "+15550100030", rec)
            #expect(await eventually(timeout: 10) { rec.received.contains { $0.method == "REFER" } })
            let refer = try #require(rec.received.first)
            let contact = try #require(await h.onCaller { call.currentDialog?.localContact })
            #expect(refer[.referTo] == "<sip:+15550100001@\(contact.host):\(contact.port ?? 5060)>")
            #expect(refer[.referredBy] == "<sip:+15550100030@sim>")
            let id = try #require(refer.cseq?.sequence)
            // The gateway's NOTIFYs: 100, then 200 (the target answered).
            _ = await h.onCaller { call.notifyRefer(id: id, progress: SIPFrag(status: 100, reason: "Trying")) }
            #expect(await eventually(timeout: 5) { rec.completed.contains { $0.method == "NOTIFY" } })
            #expect(await h.onCaller { call.state } == .confirmed)
            _ = await h.onCaller { call.notifyRefer(id: id, progress: SIPFrag(status: 200, reason: "OK")) }
            #expect(await rec.base.waitForEnd() == .remoteHangup)
            #expect(rec.completed.filter { $0.method == "NOTIFY" }.map(\.status) == [200, 200])
            #expect(
                await eventually(timeout: 5) {
                    h.simulator.transfers(for: "+15550100030").contains {
                        if case .referSent(_, 202) = $0 { true } else { false }
                    }
                })
            let steps = h.simulator.transfers(for: "+15550100030")
            #expect(steps.contains(.notifyReceived(sipfrag: 100, status: 200)))
            #expect(steps.contains(.notifyReceived(sipfrag: 200, status: 200)))
        }

        @Test func refersCallerKeepsTheCallWhenTheTransferFails() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let rec = TransferRecorder()
            let call = try await Self.connect(
                h, "+15550100030", rec, headers: [SIPHeader("X-Sim-Refer-To", "+15550109999")])
            #expect(await eventually(timeout: 10) { rec.received.contains { $0.method == "REFER" } })
            let refer = try #require(rec.received.first)
            #expect(refer.referTo?.uri.user == "+15550109999")
            let id = try #require(refer.cseq?.sequence)
            _ = await h.onCaller { call.notifyRefer(id: id, progress: SIPFrag(status: 486, reason: "Busy Here")) }
            #expect(await eventually(timeout: 5) { rec.completed.contains { $0.method == "NOTIFY" } })
            #expect(rec.completed.first { $0.method == "NOTIFY" }?.status == 200)
            // A NOTIFY after the subscription ended, or for another REFER: 481.
            _ = await h.onCaller { call.notifyRefer(id: id &+ 1, progress: SIPFrag(status: 200, reason: "OK")) }
            #expect(await eventually(timeout: 5) { rec.completed.filter { $0.method == "NOTIFY" }.count == 2 })
            #expect(rec.completed.filter { $0.method == "NOTIFY" }.map(\.status) == [200, 481])
            #expect(await h.onCaller { call.state } == .confirmed)
            #expect(h.simulator.activeCalls == 1)
        }

        @Test func replacesCallNamesTheFirstDialog() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let probe = try RTPProbe()
            let taker = ReplacingCallTaker(answer: TestSDP.offer(codecs: [.pcmu], port: probe.port))
            await h.onCaller { [ua = h.caller] in ua.delegate = taker }
            let rec = TransferRecorder()
            let first = try await Self.connect(h, "+15550100031", rec)
            #expect(await eventually(timeout: 10) { taker.invites.count == 1 })
            let invite = try #require(taker.invites.first)
            let dialog = try #require(await h.onCaller { first.currentDialog })
            let replaces = try #require(invite.replaces)
            #expect(replaces == Replaces(callID: first.callID, toTag: dialog.localTag, fromTag: dialog.remoteTag ?? ""))
            #expect(taker.replaced.first.flatMap { $0 } === first)
            #expect(invite.callID != first.callID && invite.from?.tag != dialog.remoteTag)
            // The old dialog gets our BYE; the new call echoes on its own leg.
            #expect(await rec.base.waitForEnd() == .localHangup)
            #expect(await taker.recorder.base.waitFor(.connected), "\(taker.recorder.base.events)")
            let newCall = try #require(taker.newCall)
            let sdp = try #require(await h.onCaller { newCall.remoteSDP })
            let oldSDP = try #require(await h.remoteSDP(first))
            #expect(sdp.media.first?.port != oldSDP.media.first?.port)
            let target = SocketAddress(host: "127.0.0.1", port: Int(try #require(sdp.media.first).port))
            let payload = pcmuTone(hz: 440, frame: 3)
            #expect(
                await eventually(timeout: 5) {
                    probe.send(payloadType: 0, payload: payload, to: target)
                    return await probe.receive(for: 0.2) { !$0.isEmpty }.contains { $0.payload == payload }
                })
            #expect(
                await eventually(timeout: 5) {
                    h.simulator.transfers(for: "+15550100031")
                        == [.replacingInvite(replaces: replaces.serialize(), status: 200)]
                })
            #expect(await eventually(timeout: 5) { h.simulator.reports.count == 1 })
            #expect(h.simulator.reports.first?.outcome.hasPrefix("completed, caller hung up") == true)
            await h.onCaller { newCall.hangup() }
            #expect(await eventually(timeout: 5) { h.simulator.reports.count == 2 })
            #expect(h.simulator.reports.last?.outcome.hasPrefix("replacing \(first.callID): ") == true)
        }

        @Test func refusedReplacesKeepsTheOldCall() async throws {
            let h = try SimHarness()
            defer { h.stop() }
            let taker = ReplacingCallTaker(answer: TestSDP.offer(), rejectStatus: 481)
            await h.onCaller { [ua = h.caller] in ua.delegate = taker }
            let rec = TransferRecorder()
            let first = try await Self.connect(h, "+15550100031", rec)
            #expect(await eventually(timeout: 10) { h.simulator.reports.count == 1 })
            #expect(h.simulator.reports.first?.outcome.hasPrefix("replacing \(first.callID): rejected 481") == true)
            let steps = h.simulator.transfers(for: "+15550100031")
            #expect(steps.count == 1)
            if case .replacingInvite(_, let status) = steps.first { #expect(status == 481) }
            #expect(await h.onCaller { first.state } == .confirmed)
            #expect(h.simulator.activeCalls == 1)
        }
    }
}
