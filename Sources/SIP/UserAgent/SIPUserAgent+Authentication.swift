// Digest authentication of callers (RFC 3261 §22.2): who must authenticate, the cheap
// stateless challenge for sources the agent does not otherwise trust, and the count of
// failures that bans a password guesser. Nothing here logs, and no password or
// Authorization value leaves this file.

/// Which callers must authenticate, decided per source by the agent's owner (a gateway's
/// trunks; SIP knows nothing of them).
public struct InboundDigestPolicy: Sendable {
    /// The protection space of our challenges.
    public var realm: String
    /// The algorithms to challenge an INVITE from this source with, strongest first; empty
    /// when the source need not authenticate (its address is enough, or it may not call).
    public var algorithms: @Sendable (SocketAddress) -> [DigestAlgorithm]
    /// The password of `username` and the algorithms it may answer with, when that user may
    /// call from `source`; nil for an unknown user (a failure like a wrong password).
    public var credentials:
        @Sendable (_ username: String, _ source: SocketAddress) -> (password: String, algorithms: [DigestAlgorithm])?

    public init(
        realm: String, algorithms: @escaping @Sendable (SocketAddress) -> [DigestAlgorithm],
        credentials: @escaping @Sendable (String, SocketAddress) -> (password: String, algorithms: [DigestAlgorithm])?
    ) {
        self.realm = realm
        self.algorithms = algorithms
        self.credentials = credentials
    }

    /// The fixed configuration's: every source, the same users.
    init(_ fixed: SIPUserAgentConfiguration.InboundAuthentication) {
        let algorithms = fixed.algorithms, users = fixed.users
        self.init(
            realm: fixed.realm, algorithms: { _ in algorithms },
            credentials: { user, _ in users[user].map { ($0, DigestAlgorithm.allCases) } })
    }
}

/// What the digest check made of an INVITE.
enum DigestCheck: Equatable {
    /// The source need not authenticate.
    case notRequired
    /// Valid credentials of this user.
    case authenticated(String)
    /// Answer 401 with these challenges (stale: a correct answer to an old nonce).
    /// `failed` when the request carried credentials of our realm that were wrong.
    case challenge([SIPHeader], failed: Bool)
}

extension SIPUserAgent {
    /// The policy in force: the owner's, else the fixed configuration's.
    var digestPolicy: InboundDigestPolicy? {
        inboundDigest ?? configuration.inboundAuthentication.map(InboundDigestPolicy.init)
    }

    /// Checks an INVITE's credentials for its source. Credentials for other realms are not
    /// ours to judge and are skipped; a wrong answer, an unknown user or an algorithm the user
    /// may not use count as failed.
    func checkDigest(_ m: SIPMessage, from source: SocketAddress, now: Double) -> DigestCheck {
        guard let policy = digestPolicy, let server = digestServer else { return .notRequired }
        let offered = policy.algorithms(source)
        guard !offered.isEmpty else { return .notRequired }
        var stale = false, failed = false
        for auth in m.digestAuthorizations where auth.realm == policy.realm {
            guard let (password, allowed) = policy.credentials(auth.username, source), allowed.contains(auth.algorithm)
            else {
                failed = true
                continue
            }
            switch server.verify(auth, method: m.method, password: password, now: now, body: m.body) {
            case .valid: return .authenticated(auth.username)
            case .stale: stale = true
            case .invalid: failed = true
            }
        }
        let challenges = offered.map {
            SIPHeader(.wwwAuthenticate, server.challenge(now: now, stale: stale && !failed, algorithm: $0).serialize())
        }
        return .challenge(challenges, failed: failed)
    }

    /// Counts a check's outcome for `host`: a failure toward the ban of an untrusted source.
    /// Returns false when the source is now banned: send nothing.
    func account(_ check: DigestCheck, host: String, trusted: Bool, now: Double) -> Bool {
        switch check {
        case .notRequired:
            return true
        case .authenticated:
            authFailures.succeeded(host)
            return true
        case .challenge(_, let failed):
            guard failed else {
                refuse(.authRequired)
                return true
            }
            refuse(.authFailed)
            // A trunk's address is never banned: a spoofed datagram with bad credentials
            // must not be able to cut a carrier off.
            if !trusted, authFailures.failed(host, now: now) {
                sources.ban(host, now: now)
                refuse(.authBanned)
                return false
            }
            return true
        }
    }

    /// An INVITE from a source the agent does not trust, outside our calls: when some policy
    /// lets that source authenticate, it is challenged here, statelessly (no transaction, no
    /// call: a flood of unauthenticated INVITEs costs a hash and a datagram each, at the
    /// untrusted rate, which bans a flooder). Valid credentials let it through to the
    /// transaction layer. Returns nil when the source may not authenticate (drop it as
    /// before), else whether the request goes on. The 401 goes to `peer` (a proxy in front
    /// of `source`, or `source` itself).
    func admitAuthenticating(
        _ request: SIPMessage, from source: SIPPeer, replyTo peer: SIPPeer, now: Double
    ) -> Bool? {
        guard let policy = digestPolicy, !policy.algorithms(source.address).isEmpty else { return nil }
        let host = source.address.host
        switch request.method {
        case "INVITE": break
        case "ACK":
            // The ACK of our stateless 401: nothing to do, but it counts toward the rate.
            _ = sources.admit(host, trusted: false, now: now)
            return false
        default:
            return nil
        }
        if sources.admit(host, trusted: false, now: now) != .admit {
            refuse(.rateLimited)
            return false
        }
        let check = checkDigest(request, from: source.address, now: now)
        guard account(check, host: host, trusted: false, now: now) else { return false }
        guard case .challenge(let challenges, _) = check else {
            // Authenticated: the bound on server transactions holds as for any request (an
            // untrusted source gets no 503).
            if transactions.serverCount >= defence.maxServerTransactions,
                !transactions.hasTransaction(for: request)
            {
                refuse(.transactionsFull)
                return false
            }
            return true
        }
        var r = SIPMessage.response(to: request, status: 401, toTag: SIPIdentifiers.tag())
        r.headers.append(contentsOf: challenges)
        r.addHeader(.server, configuration.userAgent)
        sendStateless(r, to: peer)
        return false
    }
}
