import Crypto

/// The client side of digest authentication: answers 401/407 challenges (RFC 3261 §22.2-22.3).
///
/// A plain value that remembers, per realm, the last nonce and how many requests used it, so
/// `nc` counts 00000001, 00000002, ... while the server keeps its nonce and restarts at
/// 00000001 when the nonce changes. No clock, no I/O.
public struct DigestClient: Sendable {
    /// Realm -> the nonce last answered in it and its count.
    private var nonceCounts: [String: (nonce: String, count: UInt32)] = [:]
    /// Bounds the memory a hostile peer can make us spend by inventing realms.
    private static let maximumRealms = 32

    /// Creates a client with no nonce history.
    public init() {}

    /// Builds credentials for one of `challenges` (the `WWW-Authenticate` or
    /// `Proxy-Authenticate` values of one response, for one realm).
    ///
    /// - Choice of challenge: the strongest hash (SHA-256 over MD5, RFC 8760 §2.4); among equal
    ///   strengths the first, since servers list them in order of preference.
    /// - Protection: `auth` when offered, else `auth-int` (hashing `body`), else none (the
    ///   RFC 2069 response, without `cnonce` or `nc`, except that the `-sess` algorithms
    ///   always carry a `cnonce`, which their A1 needs).
    /// - `cnonce`: 16 random bytes in hex unless one is given (tests pin it).
    ///
    /// - Throws: `.noUsableChallenge` when `challenges` is empty.
    public mutating func authorization(
        for challenges: [DigestChallenge], method: String, uri: String, body: [UInt8] = [],
        credentials: DigestCredentials, cnonce: String? = nil
    ) throws(DigestError) -> DigestAuthorization {
        guard var chosen = challenges.first else {
            throw DigestError(.noUsableChallenge, "no challenges")
        }
        for challenge in challenges.dropFirst()
        where challenge.algorithm.strength > chosen.algorithm.strength {
            chosen = challenge
        }

        let qop: DigestQop? =
            chosen.qopOptions.contains(.auth)
            ? .auth
            : chosen.qopOptions.contains(.authInt) ? .authInt : nil

        var clientNonce: String?
        if qop != nil || chosen.algorithm.isSession {
            clientNonce = cnonce ?? Crypto.hex(Crypto.randomBytes(count: 16))
        }

        var nc: UInt32?
        if qop != nil { nc = nextCount(realm: chosen.realm, nonce: chosen.nonce) }

        let response = DigestComputation.response(
            algorithm: chosen.algorithm, username: credentials.username, realm: chosen.realm,
            password: credentials.password, nonce: chosen.nonce, cnonce: clientNonce, nc: nc,
            qop: qop, method: method, uri: uri, body: body)

        return DigestAuthorization(
            username: credentials.username, realm: chosen.realm, nonce: chosen.nonce, uri: uri,
            response: response, algorithm: chosen.algorithm, cnonce: clientNonce,
            opaque: chosen.opaque, qop: qop, nc: nc)
    }

    /// Same as `authorization(for:...)` with a single challenge.
    public mutating func authorization(
        for challenge: DigestChallenge, method: String, uri: String, body: [UInt8] = [],
        credentials: DigestCredentials, cnonce: String? = nil
    ) throws(DigestError) -> DigestAuthorization {
        try authorization(
            for: [challenge], method: method, uri: uri, body: body, credentials: credentials,
            cnonce: cnonce)
    }

    /// Forgets every nonce count (e.g. after re-registering from scratch).
    public mutating func reset() {
        nonceCounts.removeAll()
    }

    private mutating func nextCount(realm: String, nonce: String) -> UInt32 {
        var count: UInt32 = 1
        if let previous = nonceCounts[realm], previous.nonce == nonce {
            // Wrapping would repeat a count; a fresh nonce is the server's job long before.
            count = previous.count == .max ? .max : previous.count + 1
        } else if nonceCounts[realm] == nil, nonceCounts.count >= Self.maximumRealms {
            nonceCounts.removeAll()
        }
        nonceCounts[realm] = (nonce, count)
        return count
    }
}
