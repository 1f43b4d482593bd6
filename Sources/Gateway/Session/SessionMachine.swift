import IrisAPI

/// The life of one Iris session as a plain value: it takes what happened (SIP, media, the
/// app, timers) and returns what to do (events to publish, SIP to send). No socket, no
/// clock: times come in with the inputs. `GatewaySession` feeds it and carries out its
/// actions; tests drive it directly.
///
/// The tables it implements are docs/events.md's "Outbound: SIP to events" and "Inbound: SIP to events".
public struct SessionMachine: Sendable {
    public enum Direction: String, Sendable { case outbound, inbound }

    public enum Input: Sendable, Equatable {
        /// Outbound: the first INVITE went out. Inbound: the INVITE was accepted for a route,
        /// and `notification` tells the routing id's subscribers about it.
        case started(notification: SessionEvent?)
        /// A 1xx other than 100.
        case provisional(SIPDetails, hasSDP: Bool)
        /// Outbound: 2xx (ACK sent). Inbound: the ACK to our 2xx.
        case answered(SIPDetails, codec: String, hd: Bool, at: Double)
        /// A final non-2xx to our INVITE; `proxiesLeft` tells whether failover is possible.
        case finalResponse(SIPDetails, proxiesLeft: Bool)
        /// No final response (Timer B) or transport failure toward the current proxy.
        case noResponse(proxiesLeft: Bool)
        /// DNS found no usable server for the current proxy (NXDOMAIN, no answer ...);
        /// `details` is the locally made status, its reason says what DNS said.
        case proxyUnresolvable(SIPDetails, proxiesLeft: Bool)
        /// The connection to the current target failed (a TLS handshake, a certificate, a
        /// refused connect); `details` is the locally made status, its reason says what failed.
        case transportFailed(SIPDetails, proxiesLeft: Bool)
        /// Outbound: the current target sent its first provisional response (100 included).
        case targetResponding
        case ringTimeout
        /// The app closed the session (`DELETE`).
        case close
        /// Inbound: the app rejected the call.
        case reject(busy: Bool)
        /// Inbound: the app joined; the 2xx goes out, `Connected` follows the ACK.
        case join
        /// The carrier hung up (BYE), with a Q.850 cause from its `Reason` when present.
        case remoteHangup(cause: Int?)
        /// Inbound: the carrier cancelled before we answered.
        case remoteCancel
        /// The carrier's re-INVITE or UPDATE put the call on hold (sendonly/inactive) or off it.
        case remoteHold(Bool)
        /// Our hold (or unhold) re-INVITE was accepted.
        case localHoldConfirmed(Bool)
        /// The app asked to hold or unhold.
        case localHold(Bool)
        /// Our hold (or unhold) re-INVITE was refused or could not be sent.
        case localHoldFailed(status: Int?)
        case mediaTimeout
        /// The app's WebRTC media failed (no ICE check, DTLS refused or stalled, consent
        /// lost): an error that says why, then as if the app had closed.
        case platformMediaFailed(String)
        case sessionExpired
        /// The SIP layer ended the call for a reason of its own (ACK never came, transport).
        case sipFailure(SIPDetails?)
        /// The cluster counted this node dead and another node ended the call for it.
        case nodeLost
        /// The carrier carried out the app's transfer: our leg is hung up, the session ends
        /// `transferred` (`details`: the final NOTIFY's status, when there was one).
        case transferred(SIPDetails?)
        /// The gateway bridged the call to the transfer target and the app left it: the app's
        /// media failures no longer matter, and the session ends `transferred` when the call does.
        case appLeft
        /// The codec on the trunk changed mid-call (re-INVITE).
        case codecChanged(String, hd: Bool)
        case dtmf(digit: String, durationMs: Int)
        case merged(heldRoomId: String)
        /// An event the session publishes as it is (a merge error); the machine only passes it on.
        case forward(SessionEvent)
    }

    public enum Action: Sendable, Equatable {
        /// Publish an event; `roomId`, `traceId`, `seq` and `at` are stamped by the publisher.
        case emit(SessionEvent)
        /// CANCEL our INVITE.
        case cancelInvite
        /// BYE.
        case hangup
        /// Send the INVITE to the next proxy (its ring timer not running until it responds).
        case tryNextProxy
        /// Outbound: start the ring timer (`ringTimeoutSec`), once per target, from its first
        /// provisional response.
        case startRingTimer
        /// Inbound: 180 Ringing and the ring timer.
        case ring
        /// Inbound: answer the INVITE with our SDP.
        case answerInvite
        /// Inbound: final non-2xx.
        case rejectInvite(status: Int)
        /// Send a hold (true) or unhold re-INVITE.
        case sendHold(Bool)
        /// The session is over: release media, complete the record.
        case finish(EndReason, SIPDetails?)
    }

    public let direction: Direction
    public let roomId: String
    public let traceId: String
    public private(set) var status: SessionStatus = .initializing
    public private(set) var earlyMedia = false
    public private(set) var ended: EndReason?
    /// The latest SIP details seen (a status's or the ending's).
    public private(set) var sip: SIPDetails?
    public private(set) var answeredAt: Double?
    public private(set) var codec: String?
    private var closeRequested = false
    private var ringTimedOut = false
    /// Outbound: the current target's ring timer was started.
    private var ringTimerStarted = false
    private var joined = false
    private var earlyMediaReported = false
    public private(set) var heldLocally = false
    /// The app left a bridged call (`.appLeft`).
    public private(set) var appLeft = false
    private var heldRemotely = false
    private var holdPending: Bool?

    public init(direction: Direction, roomId: String, traceId: String) {
        self.direction = direction
        self.roomId = roomId
        self.traceId = traceId
    }

    public var isEnded: Bool { ended != nil }
    /// The hold (true) or unhold re-INVITE waiting for its answer.
    public var pendingHold: Bool? { holdPending }
    public var isConnected: Bool { answeredAt != nil && ended == nil }

    /// Feeds one input at time `now` (seconds); returns the actions in order.
    public mutating func handle(_ input: Input, now: Double) -> [Action] {
        guard ended == nil else { return [] }
        switch input {
        case .started(let notification):
            var created = event(.onSessionCreated)
            created.direction = direction.rawValue
            var actions: [Action] = [.emit(created)]
            if let notification { actions.append(.emit(notification)) }
            actions.append(contentsOf: setStatus(.initializing, sip: nil, force: true))
            if direction == .inbound { actions.append(.ring) }
            return actions

        case .forward(let e):
            return [.emit(e)]

        case .provisional(let details, let hasSDP):
            guard direction == .outbound, answeredAt == nil else { return [] }
            // Late provisionals (a 180 after the 200 through a multi-worker proxy) are ignored above.
            var actions: [Action] = []
            let early = earlyMedia || hasSDP
            if status != .connecting || early != earlyMedia {
                earlyMedia = early
                actions += setStatus(.connecting, sip: details, force: true)
            }
            if hasSDP && !earlyMediaReported {
                earlyMediaReported = true
                actions.append(.emit(event(.onSessionEarlyMedia)))
            }
            return actions

        case .answered(let details, let codec, let hd, let at):
            guard answeredAt == nil else { return [] }
            answeredAt = at
            self.codec = codec
            if closeRequested || ringTimedOut {
                // CANCEL crossed the 2xx: the call was answered, so it must be hung up.
                return [.hangup]
                    + end(
                        closeRequested ? .canceled : .noAnswer, sip: details,
                        irisCode: ringTimedOut ? IrisCode.targetNoReply : nil, now: now)
            }
            earlyMedia = false
            return setStatus(.connected, sip: details, force: true) + [.emit(quality(codec: codec, hd: hd))]

        case .codecChanged(let codec, let hd):
            guard isConnected, codec != self.codec else { return [] }
            self.codec = codec
            return [.emit(quality(codec: codec, hd: hd))]

        case .finalResponse(let details, let proxiesLeft):
            guard answeredAt == nil else { return [] }
            let verdict = FinalResponseClass.classify(
                status: details.code, weCanceled: closeRequested, ringTimedOut: ringTimedOut)
            switch verdict.next {
            case .failover(let reason, let code):
                if proxiesLeft && !closeRequested && !ringTimedOut { return nextTarget() }
                return end(reason, sip: details, irisCode: code, now: now)
            case .end(let reason, let code):
                return end(reason, sip: details, irisCode: code, now: now)
            }

        case .noResponse(let proxiesLeft):
            guard answeredAt == nil else {
                return end(.failed, sip: nil, irisCode: IrisCode.remoteUnreachable, now: now)
            }
            if closeRequested { return end(.canceled, sip: nil, irisCode: nil, now: now) }
            if ringTimedOut { return end(.noAnswer, sip: nil, irisCode: IrisCode.targetNoReply, now: now) }
            if proxiesLeft { return nextTarget() }
            return end(
                .failed, sip: SIPDetails(code: 408, reason: "Request Timeout"), irisCode: IrisCode.remoteUnreachable,
                now: now)

        case .proxyUnresolvable(let details, let proxiesLeft), .transportFailed(let details, let proxiesLeft):
            guard answeredAt == nil else { return [] }
            if closeRequested { return end(.canceled, sip: nil, irisCode: nil, now: now) }
            if ringTimedOut { return end(.noAnswer, sip: nil, irisCode: IrisCode.targetNoReply, now: now) }
            if proxiesLeft { return nextTarget() }
            return end(
                .failed, sip: details, irisCode: IrisCode.remoteUnreachable, now: now,
                message: "remote unreachable: " + details.reason)

        case .targetResponding:
            guard direction == .outbound, answeredAt == nil, !closeRequested, !ringTimedOut, !ringTimerStarted else {
                return []
            }
            ringTimerStarted = true
            return [.startRingTimer]

        case .ringTimeout:
            guard answeredAt == nil, !closeRequested, !ringTimedOut else { return [] }
            ringTimedOut = true
            switch direction {
            case .outbound:
                return [.cancelInvite]
            case .inbound:
                guard !joined else { return [] }
                return [.rejectInvite(status: 480), .emit(cancelNotification())]
                    + end(
                        .noAnswer, sip: SIPDetails(code: 480, reason: "Temporarily Unavailable"), irisCode: nil,
                        now: now)
            }

        case .close:
            if answeredAt != nil { return [.hangup] + end(.completed, sip: nil, irisCode: nil, now: now) }
            switch direction {
            case .outbound:
                guard !closeRequested else { return [] }
                closeRequested = true
                return [.cancelInvite]
            case .inbound:
                // Closing a call nobody answered turns it away, like reject.
                if joined { return [.hangup] + end(.completed, sip: nil, irisCode: nil, now: now) }
                return [.rejectInvite(status: 603)]
                    + end(.rejected, sip: SIPDetails(code: 603, reason: "Decline"), irisCode: nil, now: now)
            }

        case .reject(let busy):
            guard direction == .inbound, !joined else { return [] }
            let details = busy ? SIPDetails(code: 486, reason: "Busy Here") : SIPDetails(code: 603, reason: "Decline")
            return [.rejectInvite(status: details.code)] + end(.rejected, sip: details, irisCode: nil, now: now)

        case .join:
            guard direction == .inbound, !joined else { return [] }
            joined = true
            return [.answerInvite] + setStatus(.connecting, sip: nil, force: true)

        case .remoteHangup(let cause):
            let details = SIPDetails(code: 200, reason: "BYE", cause: cause)
            return end(.completed, sip: details, irisCode: nil, now: now)

        case .remoteCancel:
            return [.emit(cancelNotification())]
                + end(.canceled, sip: SIPDetails(code: 487, reason: "Request Terminated"), irisCode: nil, now: now)

        case .remoteHold(let hold):
            guard isConnected, heldRemotely != hold else { return [] }
            heldRemotely = hold
            return holdStatus(by: hold ? "remote" : nil)

        case .localHold(let hold):
            guard isConnected, holdPending == nil, heldLocally != hold else { return [] }
            holdPending = hold
            return [.sendHold(hold)]

        case .localHoldConfirmed(let hold):
            guard isConnected, holdPending == hold else { return [] }
            holdPending = nil
            heldLocally = hold
            return holdStatus(by: hold ? "local" : nil)

        case .localHoldFailed(let status):
            guard let pending = holdPending else { return [] }
            holdPending = nil
            var e = event(.onSessionError)
            e.code = IrisCode.incorrectState
            e.message = (pending ? "hold" : "unhold") + " was refused by the carrier"
            if let status { e.sip = SIPDetails(code: status, reason: "") }
            return [.emit(e)]

        case .platformMediaFailed(let why):
            guard ended == nil, !appLeft else { return [] }
            var error = event(.onSessionError)
            error.code = IrisCode.participantLeft
            error.message = why
            return [.emit(error)] + handle(.close, now: now)

        case .mediaTimeout:
            guard answeredAt != nil else { return [] }
            var error = event(.onSessionError)
            error.code = IrisCode.remoteUnreachable
            error.message = "no RTP from the carrier"
            // Like an expired session timer, a SIP-level timeout: the record and the end
            // event say so with 408 rather than nothing.
            let details = SIPDetails(code: 408, reason: "RTP Timeout")
            error.sip = details
            return [.hangup, .emit(error)] + end(.mediaTimeout, sip: details, irisCode: nil, now: now)

        case .sessionExpired:
            return end(
                .failed, sip: SIPDetails(code: 408, reason: "Session Timer Expired"),
                irisCode: IrisCode.remoteUnreachable, now: now)

        case .sipFailure(let details):
            if answeredAt != nil { return end(.failed, sip: details, irisCode: IrisCode.remoteUnreachable, now: now) }
            if closeRequested { return end(.canceled, sip: details, irisCode: nil, now: now) }
            return end(.failed, sip: details, irisCode: IrisCode.remoteUnreachable, now: now)

        case .nodeLost:
            guard ended == nil else { return [] }
            // Answered: the carrier already has the survivor's BYE (ours meets a 481);
            // not yet: as if the app had closed.
            guard answeredAt != nil else { return handle(.close, now: now) }
            return [.hangup]
                + end(
                    .nodeLost, sip: SIPDetails(code: 503, reason: "node lost"), irisCode: IrisCode.remoteUnreachable,
                    now: now)

        case .transferred(let details):
            return [.hangup] + end(.transferred, sip: details, irisCode: nil, now: now)

        case .appLeft:
            guard isConnected else { return [] }
            appLeft = true
            return []

        case .dtmf(let digit, let ms):
            var e = event(.onSessionDTMF)
            e.digit = digit
            e.durationMs = ms
            return [.emit(e)]

        case .merged(let held):
            var e = event(.onSessionMerged)
            e.heldRoomId = held
            return [.emit(e)]
        }
    }

    /// The next target gets its own ring time, from its own first provisional response.
    private mutating func nextTarget() -> [Action] {
        ringTimerStarted = false
        return [.tryNextProxy]
    }

    /// Hold status after a change of either side's hold: `Hold` while either holds,
    /// `Connected` when neither does.
    private mutating func holdStatus(by: String?) -> [Action] {
        if heldLocally || heldRemotely {
            var e = event(.onSessionSIPStatus)
            e.status = .hold
            e.earlyMedia = false
            e.by = by ?? (heldRemotely ? "remote" : "local")
            status = .hold
            return [.emit(e)]
        }
        return setStatus(.connected, sip: nil, force: true)
    }

    private mutating func setStatus(_ s: SessionStatus, sip details: SIPDetails?, force: Bool) -> [Action] {
        guard force || s != status else { return [] }
        status = s
        if let details { sip = details }
        var e = event(.onSessionSIPStatus)
        e.status = s
        e.earlyMedia = earlyMedia
        e.sip = details
        return [.emit(e)]
    }

    private mutating func end(
        _ reason: EndReason, sip details: SIPDetails?, irisCode: Int?, now: Double,
        message: String? = nil
    ) -> [Action] {
        // A bridged call the app left ends as the transfer it was, whoever hangs up.
        let reason = appLeft ? .transferred : reason
        ended = reason
        if let details { sip = details }
        var actions = setStatus(.disconnected, sip: details, force: true)
        if let irisCode {
            var e = event(.onSessionError)
            e.code = irisCode
            e.message = message ?? Self.message(for: irisCode, reason: reason, sip: details)
            e.sip = details
            actions.append(.emit(e))
        }
        let duration = answeredAt.map { max(0, now - $0) } ?? 0
        var e = event(.onSessionEnded)
        e.reason = reason
        e.sip = details
        e.durationSec = (duration * 1000).rounded() / 1000
        actions.append(.emit(e))
        actions.append(.finish(reason, details))
        return actions
    }

    private func quality(codec: String, hd: Bool) -> SessionEvent {
        var e = event(.onStreamQualityIndicator)
        e.quality = hd ? "HD" : "NonHD"
        e.codec = codec
        return e
    }

    private func cancelNotification() -> SessionEvent {
        var e = event(.onNotification)
        e.type = "cancel"
        e.roomid = roomId
        e.traceid = traceId
        return e
    }

    private func event(_ name: SessionEvent.Name) -> SessionEvent {
        SessionEvent(event: name, roomId: roomId, traceId: traceId)
    }

    static func message(for code: Int, reason: EndReason, sip: SIPDetails? = nil) -> String {
        if let sip, sip.code == 488 || sip.code == 606 {
            return
                "the trunk accepts none of the offered media: no common codec or media security (\(sip.code) \(sip.reason))"
        }
        return switch code {
        case IrisCode.remoteDoesNotExist: "remote party does not exist"
        case IrisCode.targetNoReply: "target did not reply"
        case IrisCode.callForbidden: "call forbidden"
        case IrisCode.serviceUnavailable: "service unavailable"
        case IrisCode.remoteUnreachable: "remote unreachable"
        default: "session \(reason.rawValue)"
        }
    }
}
