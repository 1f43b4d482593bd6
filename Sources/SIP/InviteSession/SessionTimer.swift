// RFC 4028 session timers: the two header values, the negotiation rules for each role, and
// the running timer of an established dialog.

// MARK: - Header values

/// Why a `Session-Expires` or `Min-SE` header value could not be parsed.
/// A request carrying one is answered 400 Bad Request (``statusCode``).
public enum SessionTimerHeaderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value has no delta-seconds.
    case missingDeltaSeconds(header: String)
    /// The delta-seconds is not `1*DIGIT`.
    case invalidDeltaSeconds(header: String, text: String)
    /// The refresher parameter is neither `uac` nor `uas`.
    case invalidRefresher(text: String)
    /// A parameter is empty, nameless or has an unterminated quoted string.
    case malformedParameter(header: String, text: String)

    /// The SIP status with which to reject a request carrying the bad header.
    public var statusCode: Int { 400 }

    /// A message naming the header and the offending text.
    public var description: String {
        switch self {
        case .missingDeltaSeconds(let header):
            return "\(header): missing delta-seconds"
        case let .invalidDeltaSeconds(header, text):
            return "\(header): delta-seconds must be digits, got \"\(text)\""
        case .invalidRefresher(let text):
            return "Session-Expires: refresher must be uac or uas, got \"\(text)\""
        case let .malformedParameter(header, text):
            return "\(header): malformed parameter \"\(text)\""
        }
    }
}

/// The value of a `Session-Expires` header field (RFC 4028 §4): the session interval and
/// which side refreshes. Unknown generic parameters are accepted and dropped.
public struct SessionExpires: Sendable, Equatable, CustomStringConvertible {
    /// The side of the transaction that sends refreshes (RFC 4028 `refresher-param`).
    public enum Refresher: String, Sendable, Equatable {
        /// The side that sent the request.
        case uac
        /// The side that answers it.
        case uas
    }

    /// The session interval in seconds.
    public var deltaSeconds: Int
    /// Who refreshes; nil when the parameter is absent (left for the UAS to choose).
    public var refresher: Refresher?

    /// Creates a value.
    public init(deltaSeconds: Int, refresher: Refresher? = nil) {
        self.deltaSeconds = deltaSeconds
        self.refresher = refresher
    }

    /// Parses the header value (what follows the colon).
    ///
    /// RFC 4028 §4:
    /// ```
    /// Session-Expires  =  ("Session-Expires" / "x") HCOLON delta-seconds
    ///                     *(SEMI se-params)
    /// se-params        =  refresher-param / generic-param
    /// refresher-param  =  "refresher" EQUAL  ("uas" / "uac")
    /// delta-seconds    =  1*DIGIT                       ; RFC 3261
    /// ```
    /// Parameter names and the refresher value are compared case-insensitively. A
    /// delta-seconds above 2^32−1 is taken as 2^32−1, as RFC 3261 does for `Expires`.
    public static func parse(
        _ text: some StringProtocol
    ) throws(SessionTimerHeaderError)
        -> SessionExpires
    {
        let header = "Session-Expires"
        let (seconds, params) = try HeaderValueScanner.split(String(text), header: header)
        var value = SessionExpires(deltaSeconds: seconds)
        for (name, paramValue) in params where name == "refresher" {
            guard let v = paramValue, let r = Refresher(rawValue: v.lowercased()) else {
                throw .invalidRefresher(text: paramValue ?? "")
            }
            value.refresher = r
        }
        return value
    }

    /// The header value as sent: `1800` or `1800;refresher=uac`.
    public func serialize() -> String {
        guard let refresher else { return String(deltaSeconds) }
        return "\(deltaSeconds);refresher=\(refresher.rawValue)"
    }

    /// Same as ``serialize()``.
    public var description: String { serialize() }
}

/// The value of a `Min-SE` header field (RFC 4028 §5): the smallest session interval the
/// sender accepts. Unknown generic parameters are accepted and dropped.
public struct MinSE: Sendable, Equatable, CustomStringConvertible {
    /// The floor every `Min-SE` must respect (RFC 4028 §4: at least 90 seconds).
    public static let absoluteMinimum = 90

    /// The minimum session interval in seconds.
    public var deltaSeconds: Int

    /// Creates a value.
    public init(deltaSeconds: Int) {
        self.deltaSeconds = deltaSeconds
    }

    /// Parses the header value (what follows the colon).
    ///
    /// RFC 4028 §5:
    /// ```
    /// Min-SE  =  "Min-SE" HCOLON delta-seconds *(SEMI generic-param)
    /// ```
    public static func parse(_ text: some StringProtocol) throws(SessionTimerHeaderError) -> MinSE {
        let (seconds, _) = try HeaderValueScanner.split(String(text), header: "Min-SE")
        return MinSE(deltaSeconds: seconds)
    }

    /// The header value as sent, e.g. `90`.
    public func serialize() -> String { String(deltaSeconds) }

    /// Same as ``serialize()``.
    public var description: String { serialize() }
}

/// Splits `delta-seconds *(SEMI param)` into the number and lower-cased parameter names with
/// their raw values, honouring quoted strings and the LWS that SEMI and EQUAL allow.
private enum HeaderValueScanner {
    static func split(
        _ text: String, header: String
    ) throws(SessionTimerHeaderError)
        -> (Int, [(String, String?)])
    {
        var parts: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for ch in text {
            if inQuotes {
                current.append(ch)
                if escaped {
                    escaped = false
                } else if ch == "\\" {
                    escaped = true
                } else if ch == "\"" {
                    inQuotes = false
                }
            } else if ch == ";" {
                parts.append(current)
                current = ""
            } else {
                if ch == "\"" { inQuotes = true }
                current.append(ch)
            }
        }
        if inQuotes { throw .malformedParameter(header: header, text: trimmed(current)) }
        parts.append(current)

        let digits = trimmed(parts[0])
        guard !digits.isEmpty else { throw .missingDeltaSeconds(header: header) }
        var seconds = 0
        for ch in digits {
            guard let d = ch.wholeNumberValue, ch.isASCII else {
                throw .invalidDeltaSeconds(header: header, text: digits)
            }
            seconds = min(seconds * 10 + d, 4_294_967_295)
        }

        var params: [(String, String?)] = []
        for raw in parts.dropFirst() {
            let part = trimmed(raw)
            guard !part.isEmpty else { throw .malformedParameter(header: header, text: part) }
            if let eq = part.firstIndex(of: "=") {
                let name = trimmed(String(part[..<eq]))
                let value = trimmed(String(part[part.index(after: eq)...]))
                guard !name.isEmpty, !value.isEmpty else {
                    throw .malformedParameter(header: header, text: part)
                }
                params.append((name.lowercased(), value))
            } else {
                params.append((part.lowercased(), nil))
            }
        }
        return (seconds, params)
    }

    private static func trimmed(_ s: String) -> String {
        let ws: Set<Character> = [" ", "\t", "\r", "\n", "\r\n"]
        var sub = Substring(s)
        while let f = sub.first, ws.contains(f) { sub = sub.dropFirst() }
        while let l = sub.last, ws.contains(l) { sub = sub.dropLast() }
        return String(sub)
    }
}

// MARK: - Negotiation

/// Our session-timer preferences, used in both roles.
public struct SessionTimerPolicy: Sendable, Equatable {
    /// The session interval we ask for (UAC) or offer (UAS), in seconds. Default 1800, the
    /// value RFC 4028 recommends. Never below ``minSE``.
    public var sessionExpires: Int
    /// The smallest interval we accept, in seconds. Default 90; never below 90.
    public var minSE: Int
    /// The `refresher` we put in our INVITE. Default nil: RFC 4028 §7.1 recommends leaving the
    /// choice to the UAS.
    public var requestedRefresher: SessionExpires.Refresher?
    /// As UAS, who refreshes when the request leaves it open. Default `.uas` (we do): if we
    /// refresh, a peer that never refreshes cannot get its call torn down by our timer.
    public var refresherWhenChoosing: SessionExpires.Refresher
    /// Run a timer with ourselves as refresher even when the peer does not negotiate one
    /// (a 2xx without `Session-Expires`, or a request without `Supported: timer`). Refreshes
    /// are ordinary re-INVITE/UPDATE, so they are safe; the peer is told nothing. Default false.
    public var refreshWithoutPeerSupport: Bool

    /// Creates a policy; every argument has the documented default.
    public init(
        sessionExpires: Int = 1800,
        minSE: Int = 90,
        requestedRefresher: SessionExpires.Refresher? = nil,
        refresherWhenChoosing: SessionExpires.Refresher = .uas,
        refreshWithoutPeerSupport: Bool = false
    ) {
        self.minSE = max(MinSE.absoluteMinimum, minSE)
        self.sessionExpires = max(sessionExpires, self.minSE)
        self.requestedRefresher = requestedRefresher
        self.refresherWhenChoosing = refresherWhenChoosing
        self.refreshWithoutPeerSupport = refreshWithoutPeerSupport
    }

    /// As UAS, decides how to answer a dialog-creating or refreshing INVITE/UPDATE
    /// (RFC 4028 §9).
    ///
    /// - Session-Expires below our ``minSE``: 422 with our Min-SE (a proxy that inserted the
    ///   header for a UAC without timer support is the one to retry).
    /// - Session-Expires acceptable: answered with `min(theirs, ours)`, never below the
    ///   request's Min-SE, our Min-SE or 90 s, and never above theirs (§9: the UAS may reduce
    ///   the interval but not increase it).
    /// - No Session-Expires but `Supported: timer`: we ask for our own interval.
    /// - Refresher: the request's choice if the UAC supports timers and made one, else
    ///   ``refresherWhenChoosing``; always `uas` when the UAC does not support timers, and
    ///   then the answer carries no `Require: timer`.
    ///
    /// - Parameters:
    ///   - sessionExpires: the request's `Session-Expires`, if any.
    ///   - minSE: the request's `Min-SE`, if any.
    ///   - supportsTimer: the request lists `timer` in `Supported` (or `Require`).
    public func answer(
        sessionExpires: SessionExpires?, minSE: MinSE?, supportsTimer: Bool
    )
        -> SessionTimerAnswer
    {
        let floor = max(self.minSE, minSE?.deltaSeconds ?? 0, MinSE.absoluteMinimum)
        let interval: Int
        if let requested = sessionExpires {
            if requested.deltaSeconds < self.minSE {
                return .reject(minSE: MinSE(deltaSeconds: self.minSE))
            }
            interval = min(requested.deltaSeconds, max(self.sessionExpires, floor))
        } else if supportsTimer || refreshWithoutPeerSupport {
            interval = max(self.sessionExpires, floor)
        } else {
            return .accept(sessionExpires: nil, requireTimer: false, negotiated: nil)
        }

        let refresher: SessionExpires.Refresher
        if supportsTimer {
            refresher = sessionExpires?.refresher ?? refresherWhenChoosing
        } else {
            refresher = .uas
        }
        return .accept(
            sessionExpires: SessionExpires(deltaSeconds: interval, refresher: refresher),
            requireTimer: supportsTimer,
            negotiated: SessionTimer.Negotiated(interval: interval, weRefresh: refresher == .uas))
    }
}

/// How a UAS answers a request, from ``SessionTimerPolicy/answer(sessionExpires:minSE:supportsTimer:)``.
public enum SessionTimerAnswer: Sendable, Equatable {
    /// Reject with 422 Session Interval Too Small carrying this `Min-SE`.
    case reject(minSE: MinSE)
    /// Accept. Put `sessionExpires` (when not nil) in the 2xx, and `Require: timer` when
    /// `requireTimer`; start or restart the running timer with `negotiated` (nil: no timer).
    case accept(sessionExpires: SessionExpires?, requireTimer: Bool, negotiated: SessionTimer.Negotiated?)
}

/// The UAC side of negotiating a session timer on an initial INVITE (RFC 4028 §7).
///
/// Put ``supportedTimer``, ``sessionExpires`` and ``minSE`` in the INVITE; feed a 422 to
/// ``handle422(minSE:)``; resolve the 2xx with ``resolve(sessionExpires:requireTimer:)``.
public struct SessionTimerOffer: Sendable, Equatable {
    /// What to do after a 422 Session Interval Too Small.
    public enum RetryDecision: Sendable, Equatable {
        /// Resend the INVITE with these headers.
        case retry(sessionExpires: SessionExpires, minSE: MinSE)
        /// Stop: the 422 gave no larger Min-SE, or we already retried once.
        case giveUp
    }

    /// The preferences this offer was built from.
    public let policy: SessionTimerPolicy
    /// The `Session-Expires` to send.
    public private(set) var sessionExpires: SessionExpires
    /// The `Min-SE` to send.
    public private(set) var minSE: MinSE
    /// Whether a 422 has already been answered with a retry.
    public private(set) var retriedAfter422 = false

    /// Always true: a UAC that wants timers lists `timer` in `Supported` (RFC 4028 §7.1).
    public var supportedTimer: Bool { true }

    /// Builds the first offer from `policy`.
    public init(policy: SessionTimerPolicy = SessionTimerPolicy()) {
        self.policy = policy
        self.sessionExpires = SessionExpires(
            deltaSeconds: policy.sessionExpires, refresher: policy.requestedRefresher)
        self.minSE = MinSE(deltaSeconds: policy.minSE)
    }

    /// Handles a 422 carrying `minSE` (nil when the header was missing or unparsable).
    ///
    /// RFC 4028 §7.3: the retry's Min-SE is the largest seen and its Session-Expires is at
    /// least that. Retries once; a 422 that does not raise the interval ends the attempt.
    public mutating func handle422(minSE received: Int?) -> RetryDecision {
        guard !retriedAfter422, let received, received > sessionExpires.deltaSeconds else {
            return .giveUp
        }
        retriedAfter422 = true
        minSE = MinSE(deltaSeconds: max(minSE.deltaSeconds, received))
        sessionExpires.deltaSeconds = received
        return .retry(sessionExpires: sessionExpires, minSE: minSE)
    }

    /// Resolves the 2xx to our INVITE into the running timer's terms (RFC 4028 §7.2);
    /// nil means no session timer.
    ///
    /// - With `Session-Expires`, its interval holds and `refresher=uac` makes us the
    ///   refresher. If the refresher parameter is missing, or says `uas` while the answer
    ///   lacks `Require: timer` (so the UAS never confirmed it understands timers), we refresh:
    ///   an unneeded refresh costs one transaction, a missed one would end a live call.
    /// - Without `Session-Expires` there is no session expiration, unless the policy's
    ///   ``SessionTimerPolicy/refreshWithoutPeerSupport`` makes us refresh at our own interval.
    public func resolve(
        sessionExpires response: SessionExpires?, requireTimer: Bool
    )
        -> SessionTimer.Negotiated?
    {
        SessionTimer.resolveAsUAC(
            response: response, requireTimer: requireTimer,
            requestedInterval: sessionExpires.deltaSeconds,
            refreshWithoutPeerSupport: policy.refreshWithoutPeerSupport)
    }
}

// MARK: - Running timer

/// The session timer of an established dialog (RFC 4028 §§7.4, 10), as a plain state machine.
///
/// - The refresher sends a refresh at half the interval after the last refresh.
/// - Either side sends BYE at `interval − min(32, interval/3)` after the last refresh if no
///   refresh has succeeded since (RFC 4028 §10 sets this for the non-refresher; the refresher
///   uses the same deadline so a failing refresher does not outlive the session either).
/// - A refresh received (and answered 2xx by us) or sent and answered 2xx restarts both.
/// - Refresh method: UPDATE without SDP when the peer allows UPDATE, else re-INVITE with SDP.
///   A 400 to an SDP-less UPDATE, or 405/501 to an UPDATE, switches this dialog to
///   re-INVITE with SDP for good and retries at once.
/// - 422 to our refresh: retry once at once with the peer's larger Min-SE as the interval.
/// - 491: retry after the RFC 3261 §14.1 glare delay (``GlareRetry``).
/// - 408, 481 or a timeout: send BYE (RFC 4028 §10, RFC 3261 §12.2.1.2).
/// - Any other failure: the session goes on under the old deadline; retry half-way to it,
///   at most twice per interval, while at least 2 s remain.
public struct SessionTimer: Sendable {
    /// Agreed terms: the session interval and whether we send the refreshes.
    public struct Negotiated: Sendable, Equatable {
        /// The session interval in seconds.
        public var interval: Int
        /// True when this side is the refresher.
        public var weRefresh: Bool

        /// Creates terms.
        public init(interval: Int, weRefresh: Bool) {
            self.interval = interval
            self.weRefresh = weRefresh
        }
    }

    /// The request that carries a refresh.
    public enum RefreshMethod: String, Sendable, Equatable {
        /// UPDATE (RFC 3311).
        case update = "UPDATE"
        /// re-INVITE.
        case reInvite = "INVITE"
    }

    /// A refresh for the endpoint to send.
    public struct Refresh: Sendable, Equatable {
        /// The method to use.
        public var method: RefreshMethod
        /// Whether to carry the current session description as an offer (unchanged version).
        public var withSDP: Bool
        /// The `Session-Expires` to send (we are the UAC of the refresh, and its refresher).
        public var sessionExpires: SessionExpires
        /// The `Min-SE` to send.
        public var minSE: MinSE
    }

    /// Why the machine asks for a BYE.
    public enum ByeReason: Sendable, Equatable {
        /// No refresh arrived before the deadline.
        case sessionExpired
        /// Our refresh got this status (408 also stands for a transaction timeout).
        case refreshFailed(status: Int)
    }

    /// Where the timer stands.
    public enum State: Sendable, Equatable {
        /// Not started.
        case idle
        /// Timing the session.
        case active
        /// The dialog runs without a session timer (none negotiated, or turned off by a
        /// refresh answered without `Session-Expires`). A later refresh may turn it on.
        case inactive
        /// We asked for a BYE; the timer is finished.
        case ended(ByeReason)
        /// Stopped by the endpoint (the dialog ended otherwise).
        case stopped
    }

    /// What the endpoint tells the machine.
    public enum Event: Sendable, Equatable {
        /// The dialog is established with these terms (nil: no timer).
        case start(now: Double, negotiated: Negotiated?)
        /// The timer last asked for with `.schedule(at:)` fired.
        case timerFired(now: Double)
        /// The peer refreshed and we answered 2xx, with these terms (from
        /// ``SessionTimerPolicy/answer(sessionExpires:minSE:supportsTimer:)``; nil: no timer).
        case refreshReceived(now: Double, negotiated: Negotiated?)
        /// A final response to our refresh, with its `Session-Expires`, whether it had
        /// `Require: timer`, and a 422's `Min-SE`. 1xx are ignored.
        case refreshResponse(
            now: Double, status: Int, sessionExpires: SessionExpires? = nil,
            requireTimer: Bool = false, minSE: Int? = nil)
        /// Our refresh transaction timed out (Timer B or F).
        case refreshTimeout(now: Double)
        /// Our refresh could not be sent; handled as a 503 (RFC 3261 §8.1.3.1).
        case refreshTransportError(now: Double)
        /// The dialog ended; stop timing.
        case stop
    }

    /// What the machine asks the endpoint to do, in order.
    public enum Action: Sendable, Equatable {
        /// Send this refresh in the dialog.
        case sendRefresh(Refresh)
        /// End the dialog with BYE.
        case sendBye(ByeReason)
        /// Arm the machine's single timer for this monotonic time, replacing any earlier one.
        case schedule(at: Double)
        /// Disarm the timer.
        case cancelTimer
    }

    /// Our preferences (for Min-SE and for resolving answers to our refreshes).
    public let policy: SessionTimerPolicy
    /// Whether the peer allows UPDATE (its `Allow` header). The endpoint may update it.
    public var peerAllowsUpdate: Bool
    /// Whether we generated the dialog's Call-ID (decides the 491 retry range).
    public let ownsCallID: Bool
    /// The current state.
    public private(set) var state: State = .idle
    /// The terms in force, if a timer runs.
    public private(set) var negotiated: Negotiated?
    /// When the last refresh succeeded (or the dialog started).
    public private(set) var lastRefreshAt: Double?
    /// When we will send the next refresh, if we are to send one.
    public private(set) var refreshAt: Double?
    /// When we will send BYE unless a refresh succeeds first.
    public private(set) var expiresAt: Double?
    /// Our outstanding refresh, if any.
    public private(set) var refreshInFlight: Refresh?
    /// True once the peer refused an UPDATE refresh: re-INVITE from then on.
    public private(set) var useReInvite = false
    /// When the armed timer is due, if one is armed.
    public private(set) var timerDeadline: Double?

    private var learnedMinSE: Int
    private var retried422 = false
    private var failureRetries = 0
    private let random: @Sendable (ClosedRange<Int>) -> Int

    /// Creates an idle timer for one dialog.
    /// - Parameter random: picks an integer in a range, for the 491 retry delay.
    public init(
        policy: SessionTimerPolicy = SessionTimerPolicy(),
        peerAllowsUpdate: Bool,
        ownsCallID: Bool,
        random: @escaping @Sendable (ClosedRange<Int>) -> Int = { Int.random(in: $0) }
    ) {
        self.policy = policy
        self.peerAllowsUpdate = peerAllowsUpdate
        self.ownsCallID = ownsCallID
        self.learnedMinSE = policy.minSE
        self.random = random
    }

    /// Seconds after the last refresh at which the refresher refreshes: half the interval.
    public static func refreshOffset(interval: Int) -> Double { Double(interval) / 2 }

    /// Seconds after the last refresh at which the session is given up:
    /// `interval − min(32, interval/3)` (RFC 4028 §10).
    public static func expiryOffset(interval: Int) -> Double {
        let i = Double(interval)
        return i - min(32, i / 3)
    }

    /// Feeds one event; returns the actions to carry out, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case let .start(now, terms):
            guard state == .idle else { return [] }
            return restart(now: now, terms: terms)
        case .timerFired(let now):
            return timerFired(now: now)
        case let .refreshReceived(now, terms):
            guard state == .active || state == .inactive else { return [] }
            return restart(now: now, terms: terms)
        case let .refreshResponse(now, status, sessionExpires, requireTimer, minSE):
            return refreshResponse(
                now: now, status: status, sessionExpires: sessionExpires,
                requireTimer: requireTimer, minSE: minSE)
        case .refreshTimeout:
            guard state == .active, refreshInFlight != nil else { return [] }
            refreshInFlight = nil
            return end(.refreshFailed(status: 408))
        case .refreshTransportError(let now):
            return refreshResponse(
                now: now, status: 503, sessionExpires: nil, requireTimer: false, minSE: nil)
        case .stop:
            switch state {
            case .ended, .stopped: return []
            default: return finish(.stopped)
            }
        }
    }

    /// The UAC rule of RFC 4028 §7.2, shared by the initial INVITE and our refreshes.
    static func resolveAsUAC(
        response: SessionExpires?, requireTimer: Bool, requestedInterval: Int,
        refreshWithoutPeerSupport: Bool
    ) -> Negotiated? {
        guard let response else {
            return refreshWithoutPeerSupport
                ? Negotiated(interval: requestedInterval, weRefresh: true) : nil
        }
        guard response.deltaSeconds > 0 else { return nil }
        let peerRefreshes = response.refresher == .uas && requireTimer
        return Negotiated(interval: response.deltaSeconds, weRefresh: !peerRefreshes)
    }

    // MARK: - Event handlers

    private mutating func timerFired(now: Double) -> [Action] {
        guard state == .active, let deadline = timerDeadline, now + 0.001 >= deadline else {
            return []
        }
        timerDeadline = nil
        if let e = expiresAt, now + 0.001 >= e {
            refreshInFlight = nil
            return end(.sessionExpired)
        }
        var actions: [Action] = []
        if let r = refreshAt, refreshInFlight == nil, now + 0.001 >= r {
            refreshAt = nil
            actions += sendRefresh()
        }
        return actions + rearm()
    }

    private mutating func refreshResponse(
        now: Double, status: Int, sessionExpires: SessionExpires?, requireTimer: Bool, minSE: Int?
    ) -> [Action] {
        guard state == .active, let sent = refreshInFlight, status >= 200 else { return [] }
        refreshInFlight = nil
        switch status {
        case 200..<300:
            let terms = Self.resolveAsUAC(
                response: sessionExpires, requireTimer: requireTimer,
                requestedInterval: sent.sessionExpires.deltaSeconds,
                refreshWithoutPeerSupport: policy.refreshWithoutPeerSupport)
            return restart(now: now, terms: terms)
        case 422:
            guard !retried422, let m = minSE, m > sent.sessionExpires.deltaSeconds else {
                return otherFailure(now: now)
            }
            retried422 = true
            learnedMinSE = max(learnedMinSE, m)
            negotiated?.interval = m
            return sendRefresh(method: sent.method, withSDP: sent.withSDP) + rearm()
        case 400 where sent.method == .update && !sent.withSDP,
            405 where sent.method == .update,
            501 where sent.method == .update:
            useReInvite = true
            return sendRefresh(method: .reInvite, withSDP: true) + rearm()
        case 408, 481:
            return end(.refreshFailed(status: status))
        case 491:
            refreshAt = GlareRetry.retryAt(now: now, ownsCallID: ownsCallID, random: random)
            return rearm()
        default:
            return otherFailure(now: now)
        }
    }

    // MARK: - Steps

    private mutating func restart(now: Double, terms: Negotiated?) -> [Action] {
        guard let terms, terms.interval > 0 else {
            negotiated = nil
            lastRefreshAt = nil
            refreshAt = nil
            expiresAt = nil
            state = .inactive
            return rearm()
        }
        state = .active
        negotiated = terms
        lastRefreshAt = now
        expiresAt = now + Self.expiryOffset(interval: terms.interval)
        refreshAt = terms.weRefresh ? now + Self.refreshOffset(interval: terms.interval) : nil
        retried422 = false
        failureRetries = 0
        return rearm()
    }

    private mutating func otherFailure(now: Double) -> [Action] {
        if failureRetries < 2, let e = expiresAt, e - now >= 2 {
            failureRetries += 1
            refreshAt = now + (e - now) / 2
        }
        return rearm()
    }

    private mutating func sendRefresh() -> [Action] {
        let update = peerAllowsUpdate && !useReInvite
        return sendRefresh(method: update ? .update : .reInvite, withSDP: !update)
    }

    private mutating func sendRefresh(method: RefreshMethod, withSDP: Bool) -> [Action] {
        let interval = negotiated?.interval ?? policy.sessionExpires
        let refresh = Refresh(
            method: method, withSDP: withSDP,
            sessionExpires: SessionExpires(deltaSeconds: interval, refresher: .uac),
            minSE: MinSE(deltaSeconds: learnedMinSE))
        refreshInFlight = refresh
        return [.sendRefresh(refresh)]
    }

    private mutating func end(_ reason: ByeReason) -> [Action] {
        [.sendBye(reason)] + finish(.ended(reason))
    }

    private mutating func finish(_ final: State) -> [Action] {
        state = final
        refreshAt = nil
        expiresAt = nil
        refreshInFlight = nil
        return rearm()
    }

    /// Arms the timer for the earliest pending deadline, or disarms it when there is none.
    private mutating func rearm() -> [Action] {
        var next = expiresAt
        if let r = refreshAt, refreshInFlight == nil { next = min(next ?? r, r) }
        guard next != timerDeadline else { return [] }
        timerDeadline = next
        if let next { return [.schedule(at: next)] }
        return [.cancelTimer]
    }
}
