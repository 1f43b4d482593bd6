import IOCore

// The controlled side of ICE as an ICE-lite agent (RFC 8445 §2.5, §6.1.1, §7.3) with consent
// freshness (RFC 7675), as a plain state machine: no socket, no clock. The media engine
// hands it each STUN datagram with its source and the time, sends what it returns, and
// calls `tick` and `checkTimeout` from its timer.
//
// A lite agent sends no checks: it answers the browser's (the full, controlling agent's)
// Binding requests, and the pair the browser nominates (USE-CANDIDATE) is where media goes.
//
//   request ─► FINGERPRINT? ─no─► drop
//                 │ yes
//              Binding request? ─no─► drop (responses, indications); other method ─► 400
//                 │ yes
//              USERNAME and MESSAGE-INTEGRITY? ─no─► 400
//              USERNAME = "ourUfrag:theirUfrag"? ─no─► 401
//              MESSAGE-INTEGRITY with our pwd? ─no─► 401
//              unknown comprehension-required attributes? ─yes─► 420
//              ICE-CONTROLLED (the peer claims our role)? ─yes─► 487
//                 │
//              success (XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY, FINGERPRINT);
//              USE-CANDIDATE from a new address ─► nominated(source);
//              from the selected address ─► consent refreshed

/// The controlled ICE-lite agent of one media stream (RFC 8445 §2.5, RFC 7675 consent).
///
/// Times are seconds on any monotonic clock the caller chooses (the same one for every
/// call). Created when the browser's offer (with its `ice-ufrag`/`ice-pwd`) arrives; the
/// local credentials go into our answer.
public struct ICELiteAgent: Sendable {
    /// Timeouts; the defaults are the RFCs'.
    public struct Configuration: Sendable, Hashable {
        /// Consent expires when no authenticated check arrived from the selected address for
        /// this long (RFC 7675 §5.1: 30 s).
        public var consentTimeout: Double
        /// `checkTimeout` fires when no valid check at all arrived this long after start (a
        /// peer that never connects).
        public var checkTimeout: Double
        /// SOFTWARE in our responses (RFC 8489 §14.14), or nil for none.
        public var software: String?

        /// Consent 30 s, first check within 30 s, no SOFTWARE.
        public init(consentTimeout: Double = 30, checkTimeout: Double = 30, software: String? = nil) {
            self.consentTimeout = consentTimeout
            self.checkTimeout = checkTimeout
            self.software = software
        }
    }

    /// Why a datagram got no answer.
    public enum DropReason: Sendable, Hashable {
        /// The bytes do not parse as STUN (the error says how).
        case malformed(STUNParseError)
        /// No FINGERPRINT (ICE requires it on every check, RFC 8445 §7.2.2).
        case missingFingerprint
        /// FINGERPRINT does not match (not STUN, or damaged).
        case badFingerprint
        /// A response or indication (a lite agent sends no requests; Binding indications
        /// are keepalives).
        case notARequest
        /// The source address cannot go into XOR-MAPPED-ADDRESS (not a numeric IP; a socket
        /// never reports one).
        case unusableSource
    }

    /// What the agent did with a datagram.
    public enum Outcome: Sendable, Hashable {
        /// A valid check, answered with a success response.
        case answered
        /// An error response with this code.
        case rejected(STUNErrorCode)
        /// Dropped without an answer.
        case dropped(DropReason)
    }

    /// The agent's reaction to one datagram: what to send where, and whether the selected
    /// pair changed.
    public struct Reaction: Sendable, Hashable {
        /// What happened (for logs and counters).
        public var outcome: Outcome
        /// The STUN response to send to `destination` (nil when dropped).
        public var response: [UInt8]?
        /// The datagram's source: where the response goes.
        public var destination: SocketAddress
        /// Set when this request nominated a new pair (USE-CANDIDATE from an address other
        /// than the selected one): media goes to this address from now on.
        public var nominated: SocketAddress?
    }

    /// Where the agent is.
    public enum State: Sendable, Hashable {
        /// No valid check yet.
        case waiting
        /// Valid checks arrived, nothing nominated yet.
        case checking
        /// A pair is nominated and consent is fresh: send media to the address.
        case connected(SocketAddress)
        /// Consent expired (RFC 7675): media must stop. A new nomination reconnects.
        case consentExpired
        /// `checkTimeout` fired: no valid check within the configured time.
        case timedOut
    }

    /// Our credentials (the answer's `a=ice-ufrag`/`a=ice-pwd`); checks are signed with `pwd`.
    public let local: ICECredentials
    /// The browser's credentials (from its offer); its ufrag is the USERNAME's second half.
    public let remote: ICECredentials
    /// The timeouts.
    public let configuration: Configuration
    /// Where the agent is.
    public private(set) var state: State = .waiting

    /// The selected (nominated) address, while consent is fresh.
    public var selected: SocketAddress? {
        if case .connected(let address) = state { address } else { nil }
    }

    private let startedAt: Double
    private var sawValidCheck = false
    private var lastConsentAt: Double = 0
    private let expectedUsername: [UInt8]
    private let integrityKey: [UInt8]

    /// An agent started at `now` with our and the peer's credentials.
    public init(
        local: ICECredentials, remote: ICECredentials, now: Double,
        configuration: Configuration = Configuration()
    ) {
        self.local = local
        self.remote = remote
        self.configuration = configuration
        self.startedAt = now
        // A check sent to us names us first (RFC 8445 §7.2.2): "ourUfrag:theirUfrag".
        self.expectedUsername = Array((local.ufrag + ":" + remote.ufrag).utf8)
        self.integrityKey = Array(local.pwd.utf8)
    }

    // MARK: - Input: a STUN datagram

    /// Handles one datagram that demultiplexed as STUN (`PacketKind.stun`), received from
    /// `source` at `now`.
    public mutating func receive(_ datagram: [UInt8], from source: SocketAddress, now: Double) -> Reaction {
        func drop(_ reason: DropReason) -> Reaction {
            Reaction(outcome: .dropped(reason), response: nil, destination: source, nominated: nil)
        }
        let request: STUNMessage
        do {
            request = try STUNMessage.parse(datagram)
        } catch {
            return drop(.malformed(error))
        }
        switch STUNMessage.verifyFingerprint(datagram) {
        case .valid: break
        case .invalid: return drop(.badFingerprint)
        case .absent: return drop(.missingFingerprint)
        }
        guard request.type.messageClass == .request else { return drop(.notARequest) }
        guard request.type.method == .binding else {
            return reject(request, .badRequest, to: source, signed: false)
        }
        // RFC 8489 §9.1.3: USERNAME and MESSAGE-INTEGRITY are both required.
        guard let username = request.username, request.hasMessageIntegrity else {
            return reject(request, .badRequest, to: source, signed: false)
        }
        guard Array(username.utf8) == expectedUsername else {
            return reject(request, .unauthorized, to: source, signed: false)
        }
        guard STUNMessage.verifyMessageIntegrity(datagram, key: integrityKey) == .valid else {
            return reject(request, .unauthorized, to: source, signed: false)
        }
        // Authenticated from here on: errors are signed (RFC 8489 §9.1.4).
        let unknown = request.unknownComprehensionRequired
        if !unknown.isEmpty {
            return reject(
                request, .unknownAttribute, to: source, signed: true,
                extra: [.unknownAttributes(unknown)])
        }
        // RFC 8445 §7.3.1.1: we are controlled; a peer that says it is controlled too gets
        // 487 and we keep our role (a lite agent never takes the controlling role).
        if request.iceControlled != nil {
            return reject(request, .roleConflict, to: source, signed: true)
        }

        var attributes: [STUNAttribute] = []
        if let software = configuration.software { attributes.append(.software(software)) }
        attributes.append(.xorMappedAddress(source))
        let response = STUNMessage(
            type: .bindingSuccessResponse, transactionID: request.transactionID,
            attributes: attributes)
        guard let bytes = try? response.serialized(integrityKey: integrityKey, fingerprint: true) else {
            return drop(.unusableSource)
        }

        sawValidCheck = true
        var nominated: SocketAddress?
        if request.useCandidate, selected != source {
            state = .connected(source)
            nominated = source
            lastConsentAt = now
        } else if selected == source {
            lastConsentAt = now
        } else if state == .waiting {
            state = .checking
        }

        return Reaction(outcome: .answered, response: bytes, destination: source, nominated: nominated)
    }

    private func reject(
        _ request: STUNMessage, _ error: STUNErrorCode, to source: SocketAddress, signed: Bool,
        extra: [STUNAttribute] = []
    ) -> Reaction {
        var attributes: [STUNAttribute] = []
        if let software = configuration.software { attributes.append(.software(software)) }
        attributes.append(.errorCode(error))
        attributes += extra
        let response = STUNMessage(
            type: STUNMessageType(method: request.type.method, messageClass: .errorResponse),
            transactionID: request.transactionID, attributes: attributes)
        let bytes = try? response.serialized(integrityKey: signed ? integrityKey : nil, fingerprint: true)
        return Reaction(outcome: .rejected(error), response: bytes, destination: source, nominated: nil)
    }

    // MARK: - Input: time

    /// What a timer tick found.
    public enum TimerEvent: Sendable, Hashable {
        /// No authenticated check from the selected address for `consentTimeout` (RFC 7675
        /// §5.1): stop sending media to it.
        case consentExpired(SocketAddress)
    }

    /// Call at least once a second or so: reports consent expiry once, and drops the
    /// selected pair when it does.
    public mutating func tick(now: Double) -> TimerEvent? {
        guard case .connected(let address) = state, now - lastConsentAt >= configuration.consentTimeout else {
            return nil
        }
        state = .consentExpired
        return .consentExpired(address)
    }

    /// True (once) when no valid check at all arrived within `checkTimeout` after start: the
    /// peer never connected. The agent then stays `.timedOut`.
    public mutating func checkTimeout(now: Double) -> Bool {
        guard !sawValidCheck, state != .timedOut, now - startedAt >= configuration.checkTimeout else { return false }
        state = .timedOut
        return true
    }
}
