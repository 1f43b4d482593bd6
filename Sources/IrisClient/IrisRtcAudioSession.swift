import Foundation
import IrisAPI
import Synchronization
import WebClient

/// A PSTN session the Iris way: `createWithTN` dials a number, `join` answers an inbound
/// call's notification; `hold`, `unhold`, `merge`, `insertDTMFtone`, `transfer`, `close` act on it; the
/// delegate hears statuses and the end. Audio flows through the `IrisRtcStream`'s RTP leg.
///
/// Events are read from the gateway's WebSocket on a thread of the session's own, opened
/// before the session exists (outbound, by a routing id of its own) or replayed from the
/// first event (`join`), so none is missed.
public final class IrisRtcAudioSession: Sendable {
    public let connection: IrisRtcConnection
    public let stream: IrisRtcStream
    private let delegateBox: Mutex<(any IrisRtcAudioSessionDelegate)?>
    private let state = Mutex(State())
    private let endedSignal = DispatchSemaphore(value: 0)

    private struct State {
        var roomId: String?
        var traceId: String?
        var events: WebSocketClient?
        var ended: SessionEvent?
        var status: SessionStatus?
        var history: [SessionEvent] = []
    }

    public init(connection: IrisRtcConnection, stream: IrisRtcStream, delegate: (any IrisRtcAudioSessionDelegate)?) {
        self.connection = connection
        self.stream = stream
        delegateBox = Mutex(delegate)
    }

    public var roomId: String? { state.withLock { $0.roomId } }
    public var traceId: String? { state.withLock { $0.traceId } }
    public var status: SessionStatus? { state.withLock { $0.status } }
    /// Every event received so far, in order.
    public var events: [SessionEvent] { state.withLock { $0.history } }
    /// The `onSessionEnded` event, once it came.
    public var endedEvent: SessionEvent? { state.withLock { $0.ended } }

    /// Iris `createWithTN`: dials `targetTN` from `sourceTN` through `profile` (default:
    /// the gateway's). `callerName`, `privacy` (RFC 3323: `"id"`, `"id;critical"` ...) and
    /// `headers` (`X-` names, or names the profile allows) go into the INVITE as the trunk's
    /// policy says (docs/api.md). `opus` sets the gateway's Opus encoder toward us for this
    /// call (complexity, bitrate ...; over the profile's `media.opus`). `capture` asks the
    /// gateway to record the trunk leg's SIP and RTP (`connection.capture(roomId:)`). Returns the room id;
    /// events follow on the delegate.
    @discardableResult
    /// `agent`: the call's audio goes to a voice agent's WebSocket instead of this session's
    /// stream (which then stays idle); `recording` and `amd` ask for those services.
    public func createWithTN(
        targetTN: String, sourceTN: String, profile: String? = nil, notificationData: String? = nil,
        traceId: String? = nil, callerName: String? = nil, privacy: String? = nil,
        headers: [String: String]? = nil, opus: OpusOptions? = nil, capture: Bool = false,
        recording: RecordingOptions? = nil, amd: AMDOptions? = nil, agent: MediaWebSocket? = nil
    ) throws(IrisError) -> String {
        let routingId = "client-" + UUID().uuidString.lowercased()
        let ws = try connection.events(routingId: routingId)
        let request = CreateSessionRequest(
            targetTN: targetTN, sourceTN: sourceTN, notificationData: notificationData,
            profile: profile, routingId: routingId, traceId: traceId,
            media: agent.map { MediaBody(websocket: $0) } ?? MediaBody(sdp: stream.leg.sdpOffer()),
            callerName: callerName, privacy: privacy, headers: headers, opus: opus,
            capture: capture ? true : nil, recording: recording, amd: amd)
        let response: SessionResponse
        do {
            response = try connection.decode(SessionResponse.self, try connection.call("POST", "/v1/sessions", request))
        } catch {
            ws.close()
            throw error
        }
        try started(response, events: ws)
        return response.roomId
    }

    /// Iris `join`: answers the inbound call a notification announced.
    public func join(roomId: String, roomToken: String) throws(IrisError) {
        let ws = try connection.events(roomId: roomId, since: 1)
        let response: SessionResponse
        do {
            let body = JoinRequest(roomToken: roomToken, media: MediaBody(sdp: stream.leg.sdpOffer()))
            response = try connection.decode(
                SessionResponse.self,
                try connection.call("POST", "/v1/sessions/\(IrisRtcConnection.escape(roomId))/join", body))
        } catch {
            ws.close()
            throw error
        }
        try started(response, events: ws)
    }

    /// Iris `reject` of an inbound call (603, or 486 with `busy`).
    public static func reject(
        connection: IrisRtcConnection, roomId: String, roomToken: String, busy: Bool = false
    ) throws(IrisError) {
        try connection.call(
            "POST", "/v1/sessions/\(IrisRtcConnection.escape(roomId))/reject",
            RejectRequest(roomToken: roomToken, reason: busy ? .busy : .decline))
    }

    private func started(_ response: SessionResponse, events ws: WebSocketClient) throws(IrisError) {
        state.withLock {
            $0.roomId = response.roomId
            $0.traceId = response.traceId
            $0.events = ws
        }
        if let sdp = response.media?.sdp {
            do { try stream.leg.applyAnswer(sdp) } catch { throw .media("the gateway's SDP answer: \(error)") }
        }
        let thread = Thread { [self] in readEvents(ws) }
        thread.name = "iris-session-events"
        thread.start()
    }

    private func readEvents(_ ws: WebSocketClient) {
        let decoder = JSONDecoder()
        while true {
            let text: String?
            do {
                text = try ws.receive(timeout: 1)
            } catch {
                if error.isTimeout { continue }
                break
            }
            guard let text else { break }
            guard let event = try? decoder.decode(SessionEvent.self, from: Data(text.utf8)) else { continue }
            deliver(event)
            if event.event == .onSessionEnded { break }
        }
        ws.close()
        // A stream that ended without onSessionEnded still releases waiters.
        endedSignal.signal()
    }

    private func deliver(_ e: SessionEvent) {
        let delegate = delegateBox.withLock { $0 }
        state.withLock { s in
            s.history.append(e)
            if let st = e.status { s.status = st }
            if e.event == .onSessionEnded { s.ended = e }
        }
        delegate?.onEvent(self, event: e)
        switch e.event {
        case .onSessionCreated: delegate?.onSessionCreated(self, roomId: e.roomId, direction: e.direction ?? "")
        case .onSessionSIPStatus:
            delegate?.onSessionSIPStatus(
                self, status: e.status ?? .initializing, earlyMedia: e.earlyMedia ?? false, sip: e.sip)
        case .onSessionEarlyMedia: delegate?.onSessionEarlyMedia(self)
        case .onStreamQualityIndicator:
            delegate?.onStreamQualityIndicator(self, quality: e.quality ?? "", codec: e.codec ?? "")
        case .onSessionMerged: delegate?.onSessionMerged(self, heldRoomId: e.heldRoomId ?? "")
        case .onSessionDTMF: delegate?.onSessionDTMF(self, digit: e.digit ?? "", durationMs: e.durationMs ?? 0)
        case .onSessionError: delegate?.onSessionError(self, code: e.code ?? 0, message: e.message ?? "", sip: e.sip)
        case .onSessionEnded:
            delegate?.onSessionEnded(self, reason: e.reason ?? .failed, sip: e.sip, durationSec: e.durationSec ?? 0)
        case .onSessionTransfer:
            // An event without its `transfer` is not the contract's: `onEvent` still saw it.
            if let t = e.transfer { delegate?.onSessionTransfer(self, transfer: t, sip: e.sip, message: e.message) }
        case .onSessionTransferRequest:
            if let t = e.transfer { delegate?.onSessionTransferRequest(self, transfer: t) }
        case .onSessionAMD: if let a = e.amd { delegate?.onSessionAMD(self, amd: a) }
        case .onSessionBeep: if let b = e.beep { delegate?.onSessionBeep(self, beep: b) }
        case .onSessionStream: if let st = e.stream { delegate?.onSessionStream(self, stream: st) }
        case .onSessionRecording: if let r = e.recording { delegate?.onSessionRecording(self, recording: r) }
        case .onNotification, .onSessionEventsDropped: break
        }
    }

    private func verb(_ name: String, _ body: (some Encodable)? = Optional<MediaBody>.none) throws(IrisError) {
        guard let room = roomId else { throw .state("the session has not started") }
        try connection.call("POST", "/v1/sessions/\(IrisRtcConnection.escape(room))/\(name)", body)
    }

    public func hold() throws(IrisError) { try verb("hold") }
    public func unhold() throws(IrisError) { try verb("unhold") }
    /// Gateway-side mute: the carrier hears silence.
    public func mute() throws(IrisError) { try verb("mute") }
    public func unmute() throws(IrisError) { try verb("unmute") }
    /// Iris `merge`: a three-way call of this session, the held one and the app.
    public func merge(heldSession: IrisRtcAudioSession) throws(IrisError) {
        guard let held = heldSession.roomId else { throw .state("the held session has not started") }
        try verb("merge", MergeRequest(heldRoomId: held))
    }
    /// Iris `insertDTMFtone`: digits toward the PSTN side.
    public func insertDTMFtone(_ tones: String, durationMs: Int? = nil) throws(IrisError) {
        try verb("dtmf", DTMFRequest(tones: tones, durationMs: durationMs))
    }

    /// Blind transfer: the gateway hands the call on to `targetTN` (a REFER to the carrier,
    /// or a bridge: `transfer.method` says which). Progress comes as `onSessionTransfer`; a
    /// completed one ends the session `transferred`.
    public func transfer(to targetTN: String) throws(IrisError) {
        try verb("transfer", TransferRequest(targetTN: targetTN))
    }
    /// Attended transfer: this call replaces `other` (another session on the same trunk,
    /// typically the consultation call), so this call's caller talks to `other`'s party.
    public func transfer(replacing other: IrisRtcAudioSession) throws(IrisError) {
        guard let otherRoom = other.roomId else { throw .state("the other session has not started") }
        try verb("transfer", TransferRequest(replacesRoomId: otherRoom))
    }
    /// Lets the carrier's transfer (`onSessionTransferRequest`) go ahead.
    public func acceptTransfer() throws(IrisError) { try verb("acceptTransfer") }
    /// Refuses the carrier's transfer (`onSessionTransferRequest`); the call stays as it is.
    public func declineTransfer() throws(IrisError) { try verb("declineTransfer") }

    /// Starts, pauses, resumes or stops the call's recording (`RecordingRequest.action`).
    public func recording(_ request: RecordingRequest) throws(IrisError) { try verb("recording", request) }

    /// Forks the call's audio to a WebSocket; returns the stream (its id stops it).
    public func startStream(_ request: StreamRequest) throws(IrisError) -> StreamInfo {
        guard let room = roomId else { throw .state("the session has not started") }
        let bytes = try connection.call("POST", "/v1/sessions/\(IrisRtcConnection.escape(room))/streams", request)
        return try connection.decode(StreamInfo.self, bytes)
    }

    /// Stops a fork `startStream` began.
    public func stopStream(_ streamId: String) throws(IrisError) {
        guard let room = roomId else { throw .state("the session has not started") }
        _ = try connection.call(
            "DELETE", "/v1/sessions/\(IrisRtcConnection.escape(room))/streams/\(IrisRtcConnection.escape(streamId))")
    }

    /// Iris `close`: CANCEL while ringing, BYE once connected.
    public func close() throws(IrisError) {
        guard let room = roomId else { throw .state("the session has not started") }
        try connection.call("DELETE", "/v1/sessions/\(IrisRtcConnection.escape(room))")
    }

    /// Waits for `onSessionEnded` (or the event stream's end); false on timeout.
    public func waitForEnd(timeout: Double) -> Bool {
        if state.withLock({ $0.ended != nil }) { return true }
        guard endedSignal.wait(timeout: .now() + timeout) == .success else { return false }
        endedSignal.signal()  // later waiters pass too
        return true
    }

    /// Stops the media leg and the event stream.
    public func stop() {
        stream.stop()
        state.withLock { $0.events }?.close()
    }
}
