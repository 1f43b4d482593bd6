import Foundation
import SDP
import SIP
import TestSupport

/// What a `SIPCall` told its delegate, in order.
enum CallEvent: Sendable, Equatable, CustomStringConvertible {
    case provisional(Int, sdp: Bool)
    case connected
    case answer
    case request(String)
    case offerCompleted(Int)
    /// A request sent with `SIPCall.request` (REFER, NOTIFY) got its final status.
    case requestCompleted(String, Int)
    case ended(SIPCallEnd)

    var description: String {
        switch self {
        case .provisional(let s, let sdp): "\(s)\(sdp ? "+sdp" : "")"
        case .connected: "connected"
        case .answer: "answer"
        case .request(let m): m
        case .offerCompleted(let s): "offer→\(s)"
        case .requestCompleted(let m, let s): "\(m)→\(s)"
        case .ended(let e): "ended(\(e))"
        }
    }
}

/// A `SIPCallDelegate` that records every callback under a lock and lets the test script the
/// application's side through optional hooks (run on the SIP loop). Tests await events with
/// `waitFor`, which polls with a timeout instead of sleeping.
final class CallRecorder: SIPCallDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [CallEvent] = []
    private var _messages: [SIPMessage] = []
    private(set) var call: SIPCall?

    /// Answers offers (re-INVITE, UPDATE, PRACK). Default: `SDP.answer(to:)`, and our last
    /// SDP for an offer-less re-INVITE.
    var answerFor: ((SIPCall, SessionDescription?, SIPMessage) -> SessionDescription?)?
    var onProvisional: ((SIPCall, SIPMessage) -> Void)?
    var onConnect: ((SIPCall, SIPMessage) -> Void)?
    var onEnd: ((SIPCall, SIPCallEnd) -> Void)?
    /// Answers a REFER or NOTIFY in the dialog (recorded as `.request`). Default: the
    /// agent's refusal (REFER 603, NOTIFY 481).
    var respondTo: ((SIPCall, SIPMessage) -> SIPRequestResponse)?

    init() {}

    /// Every event so far.
    var events: [CallEvent] { lock.withLock { _events } }

    /// The messages that came with the events (provisional responses, requests, the end).
    var messages: [SIPMessage] { lock.withLock { _messages } }

    /// How the call ended, once it has.
    var end: SIPCallEnd? {
        events.lazy.compactMap { if case .ended(let e) = $0 { e } else { nil } }.first
    }

    func waitFor(timeout: Double = 10, _ predicate: ([CallEvent]) -> Bool) async -> Bool {
        await eventually(timeout: timeout) { predicate(events) }
    }

    func waitFor(_ event: CallEvent, timeout: Double = 10) async -> Bool {
        await waitFor(timeout: timeout) { $0.contains(event) }
    }

    /// Waits for the end and returns it (nil on timeout).
    func waitForEnd(timeout: Double = 10) async -> SIPCallEnd? {
        _ = await eventually(timeout: timeout) { end != nil }
        return end
    }

    private func record(_ e: CallEvent, _ m: SIPMessage?, _ call: SIPCall) {
        lock.withLock {
            _events.append(e)
            if let m { _messages.append(m) }
            self.call = call
        }
    }

    func call(_ call: SIPCall, didReceiveProvisional response: SIPMessage) {
        record(.provisional(response.statusCode ?? 0, sdp: response.sdp != nil), response, call)
        onProvisional?(call, response)
    }

    func call(_ call: SIPCall, didConnect message: SIPMessage) {
        record(.connected, message, call)
        onConnect?(call, message)
    }

    func call(_ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage) -> SessionDescription? {
        record(.request(request.method), request, call)
        if let answerFor { return answerFor(call, offer, request) }
        guard let offer else { return call.localSDP }
        return SDP.answer(to: offer)
    }

    func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {
        record(.answer, message, call)
    }

    func call(_ call: SIPCall, didReceiveRequest request: SIPMessage) {
        record(.request(request.method), request, call)
    }

    func call(_ call: SIPCall, didCompleteOffer status: Int) {
        record(.offerCompleted(status), nil, call)
    }

    func call(_ call: SIPCall, responseTo request: SIPMessage) -> SIPRequestResponse {
        record(.request(request.method), request, call)
        return respondTo?(call, request) ?? SIPRequestResponse.refusal(for: request)
    }

    func call(_ call: SIPCall, didCompleteRequest method: String, cseq: UInt32, status: Int, response: SIPMessage?) {
        record(.requestCompleted(method, status), response, call)
    }

    func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        record(.ended(end), message, call)
        onEnd?(call, end)
    }
}

/// A `SIPUserAgentDelegate` for scripted UAS behaviour: each new call gets a `CallRecorder`
/// and is handed to `onCall` on the SIP loop.
final class ScriptedCallee: SIPUserAgentDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _recorders: [CallRecorder] = []
    let onCall: (SIPCall, CallRecorder) -> Void

    init(onCall: @escaping (SIPCall, CallRecorder) -> Void) {
        self.onCall = onCall
    }

    var recorders: [CallRecorder] { lock.withLock { _recorders } }

    func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) {
        let recorder = CallRecorder()
        lock.withLock { _recorders.append(recorder) }
        call.delegate = recorder
        onCall(call, recorder)
    }
}

/// Values collected from another thread (the SIP loop), read by the test under a lock.
final class Collected<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Value] = []

    init() {}

    func append(_ v: Value) { lock.withLock { items.append(v) } }
    var values: [Value] { lock.withLock { items } }
}
