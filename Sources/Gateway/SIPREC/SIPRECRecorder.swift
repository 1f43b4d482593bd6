import Foundation
import IOCore
import Media
import SDP
import SIP

/// One SIPREC recording session (RFC 7866) for one call: an INVITE to the recording server
/// with `Require: siprec`, a `+sip.src` Contact and a multipart body (two `a=sendonly` PCMU
/// streams labelled 1 and 2, and the RFC 7865 metadata); on 200 each 20 ms frame of the call
/// goes out as RTP on its stream. `update` sends new metadata in a re-INVITE, `stop` sends
/// the stop times, then BYE.
///
/// Attach it to the call with `MediaCall.addAudioSink` (`mediaAudio` runs on the media
/// thread and only encodes and sends). Everything else is on the SIP agent's loop: create it,
/// `start`, `update` and `stop` there (asserted in debug builds); `onEvent` is called there.
/// Whatever happens to the recording session is reported, never passed on to the call.
/// Keep a strong reference while it runs (its SIP call holds it weakly).
public final class SIPRECRecorder: MediaAudioSink, SIPCallDelegate, Sendable {
    /// Where the recording session stands.
    public enum Phase: Sendable, Equatable {
        case idle
        /// Looking the recording server up in DNS.
        case locating
        /// INVITE sent, no 2xx yet.
        case inviting
        /// Confirmed: the streams flow.
        case recording
        /// Over (`.ended` was reported).
        case ended
    }

    private struct LoopState {
        var phase = Phase.idle
        var call: SIPCall?
        var metadata: SIPRECMetadataState
        var offer: SessionDescription?
        var updateWanted = false
        var stopWanted = false
        var finalSent = false
        var timer: EventLoop.Timer?
        var onEvent: (@Sendable (SIPRECEvent) -> Void)?
    }

    public let settings: SIPRECSettings
    private let ua: SIPUserAgent
    private let rtp: SIPRECRTPSender
    private let loopState: LoopBoundBox<LoopState>

    /// A recorder for the call whose Call-ID is `sipSessionID` (RFC 7865 `sipSessionID`), with
    /// its `participants`; opens the two RTP sockets (throws when they cannot be bound).
    /// `onEvent` hears what happens, on the loop.
    public init(
        ua: SIPUserAgent, settings: SIPRECSettings, sipSessionID: String, participants: [SIPRECParticipant],
        onEvent: (@Sendable (SIPRECEvent) -> Void)? = nil
    ) throws {
        self.ua = ua
        self.settings = settings
        rtp = try SIPRECRTPSender(bindHost: settings.rtpBindHost)
        let state = LoopState(
            metadata: SIPRECMetadataState(sipSessionID: sipSessionID, participants: participants, now: Self.now()),
            onEvent: onEvent)
        loopState = LoopBoundBox(state, loop: ua.loop)
    }

    /// Where the session stands.
    public var phase: Phase { loopState.value.phase }
    /// The recording session's SIP call, once the INVITE went.
    public var call: SIPCall? { loopState.value.call }
    /// Our RTP ports, by stream (label 1, label 2).
    public var ports: [Int] { rtp.ports }
    /// RTP packets sent on each stream (label 1, label 2); any thread.
    public var packetsSent: [Int] { rtp.packetsSent }

    // MARK: Commands (on the loop)

    /// Locates the recording server and sends the INVITE.
    public func start() {
        ua.loop.assertInLoop()
        guard phase == .idle else { return }
        loopState.value.phase = .locating
        let done = ua.locate(SIPDestination(settings.srs), preferred: settings.transport) { [weak self] in
            self?.located($0)
        }
        if let done { located(done) }
    }

    /// New participants (a hold, a transfer, someone joining): sent in a re-INVITE now, or
    /// when the one in flight (or the INVITE) is answered.
    public func update(participants: [SIPRECParticipant]) {
        ua.loop.assertInLoop()
        guard phase != .ended, !loopState.value.stopWanted else { return }
        loopState.value.metadata.update(participants, now: Self.now())
        loopState.value.updateWanted = true
        advance()
    }

    /// Ends the recording: the streams stop, a last metadata update carries the stop times
    /// (BYE follows its answer, or `stopTimeout`), then BYE. Before the answer: CANCEL.
    public func stop() {
        ua.loop.assertInLoop()
        guard !loopState.value.stopWanted else { return }
        loopState.value.stopWanted = true
        rtp.stop()
        switch phase {
        case .idle, .locating: end(.stopped)
        case .inviting: call?.hangup()
        case .recording: advance()
        case .ended: break
        }
    }

    // MARK: Media thread

    public func mediaAudio(inbound: UnsafeBufferPointer<Int16>, outbound: UnsafeBufferPointer<Int16>, sampleRate: Int) {
        rtp.send(inbound: inbound, outbound: outbound, sampleRate: sampleRate)
    }

    // MARK: Steps

    private func located(_ result: SIPUserAgent.LocateResult) {
        guard phase == .locating else { return }
        switch result {
        case .failure(let error): end(.unreachable(error.description))
        case .success(let targets):
            guard let peer = targets.lazy.compactMap(\.peer).first else {
                end(.unreachable("no usable target for \(settings.srs)"))
                return
            }
            invite(peer)
        }
    }

    private func invite(_ target: SIPPeer) {
        var peer = target
        if peer.transport == .tls { peer.tls = SIPTLSTarget(serverName: settings.srs.host) }
        let local = ua.localAddress(toward: peer)
        let host = SocketAddress.isWildcard(settings.rtpBindHost) ? local.host : settings.rtpBindHost
        let offer = SIPRECStreams.offer(
            host: host, ports: rtp.ports, sessionID: String(UInt32.random(in: 1...UInt32.max)))
        var policy = ua.configuration.callPolicy
        policy.failoverTimeout = settings.answerTimeout
        let state = loopState.value
        let call = ua.invite(
            requestURI: settings.srs, from: NameAddress(uri: SIPURI(user: settings.fromUser, host: local.host)),
            to: NameAddress(uri: settings.srs), peer: peer, sdp: offer, parts: [state.metadata.part],
            headers: [
                SIPHeader(.require, "siprec"), SIPHeader(.accept, "application/sdp, \(RecordingMetadata.contentType)"),
                SIPHeader(.userAgent, ua.configuration.userAgent)
            ],
            contactParameters: [SIPParameter("+sip.src")], policy: policy, delegate: self)
        loopState.value.offer = offer
        loopState.value.call = call
        loopState.value.phase = .inviting
        loopState.value.updateWanted = false
        schedule(after: settings.answerTimeout) { [weak self] in
            guard let self, self.phase == .inviting else { return }
            self.end(.timeout)
            self.call?.hangup()
        }
    }

    /// Sends what is due when no offer is in flight: the final metadata and BYE once stopping,
    /// else pending new metadata.
    private func advance() {
        guard phase == .recording, let call, !call.isTerminated, !call.hasPendingOffer else { return }
        let offer = call.localSDP ?? loopState.value.offer
        if loopState.value.stopWanted {
            if !loopState.value.finalSent, let offer {
                loopState.value.finalSent = true
                loopState.value.metadata.stop(now: Self.now())
                if call.reinvite(sdp: offer, parts: [loopState.value.metadata.part]) {
                    schedule(after: settings.stopTimeout) { [weak self] in self?.call?.hangup() }
                    return
                }
            }
            call.hangup()
            return
        }
        guard loopState.value.updateWanted, let offer else { return }
        loopState.value.updateWanted = false
        call.reinvite(sdp: offer, parts: [loopState.value.metadata.part])
    }

    /// Reports the end once; the streams stop.
    private func end(_ reason: SIPRECEndReason) {
        guard phase != .ended else { return }
        loopState.value.phase = .ended
        rtp.stop()
        ua.loop.cancel(loopState.value.timer)
        loopState.value.timer = nil
        report(.ended(reason))
    }

    private func report(_ event: SIPRECEvent) { loopState.value.onEvent?(event) }

    private func schedule(after seconds: Double, _ work: @escaping () -> Void) {
        ua.loop.cancel(loopState.value.timer)
        loopState.value.timer = ua.loop.schedule(after: seconds) { [weak self] in
            self?.loopState.value.timer = nil
            work()
        }
    }

    /// Applies the recording server's SDP (an answer, or its offer in a re-INVITE).
    private func apply(_ sdp: SessionDescription?) throws(SIPRECEndReason) -> Int {
        let targets = try SIPRECStreams.destinations(in: sdp)
        if !loopState.value.stopWanted { rtp.send(to: targets) }
        return targets.compactMap { $0 }.count
    }

    /// RFC 7865 times: xs:dateTime in UTC.
    static func now() -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date())
    }

    // MARK: SIPCallDelegate (the recording session's call)

    public func call(_ call: SIPCall, didConnect message: SIPMessage) {
        guard call === self.call, phase == .inviting else { return }
        ua.loop.cancel(loopState.value.timer)
        loopState.value.timer = nil
        loopState.value.phase = .recording
        if loopState.value.stopWanted {
            advance()
            return
        }
        do {
            let streams = try apply(message.sdp)
            report(.recording(streams: streams))
            advance()
        } catch {
            end(error)
            call.hangup()
        }
    }

    public func call(_ call: SIPCall, didReceiveAnswer answer: SessionDescription, in message: SIPMessage) {
        // A re-INVITE's answer may move the streams; an unusable one leaves them as they were.
        guard call === self.call, phase == .recording, !message.isRequest else { return }
        _ = try? apply(answer)
    }

    public func call(
        _ call: SIPCall, answerFor offer: SessionDescription?, in request: SIPMessage
    ) -> SessionDescription? {
        // The recording server's own re-INVITE: follow where it wants the streams; we keep
        // offering what we send (sendonly). An offer we cannot use is answered the same.
        if call === self.call, phase == .recording, let offer { _ = try? apply(offer) }
        return call.localSDP
    }

    public func call(_ call: SIPCall, didCompleteOffer status: Int) {
        guard call === self.call else { return }
        if !(200...299).contains(status), !loopState.value.stopWanted { report(.updateRefused(status: status)) }
        if loopState.value.stopWanted, loopState.value.finalSent {
            call.hangup()
            return
        }
        advance()
    }

    public func call(_ call: SIPCall, didEnd end: SIPCallEnd, message: SIPMessage?) {
        guard call === self.call else { return }
        if loopState.value.stopWanted {
            self.end(.stopped)
            return
        }
        switch end {
        case .rejected(let status): self.end(.refused(status: status))
        case .timeout, .noProvisional: self.end(.timeout)
        case .remoteHangup: self.end(.remoteHangup)
        case .transportError: self.end(.unreachable("transport error toward \(call.peer)"))
        case .canceled, .localHangup: self.end(.stopped)
        case .ackTimeout, .sessionExpired: self.end(.failed("\(end)"))
        }
    }
}
