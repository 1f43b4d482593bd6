import Crypto

/// The server side of digest authentication, for trunks and phones that must authenticate to
/// us (RFC 3261 §22.4, RFC 7616 §3.3 and §5.4).
///
/// Nonces are stateless: `hex(timestamp ‖ random ‖ HMAC-SHA-256(secret, timestamp ‖ random ‖
/// algorithm ‖ realm)[0..<16])`, so `verify` checks that a nonce is ours, for this realm and
/// algorithm, and how old it is, without storing anything. The price: `nc` is not tracked,
/// so a captured request can be replayed until its nonce goes stale (`nonceLifetime`).
///
/// Time is an input (seconds, any epoch, as long as `challenge` and `verify` share it).
/// `description` never shows the secret.
public struct DigestServer: Sendable {
    /// The protection space we challenge for; credentials for another realm are rejected.
    public var realm: String
    /// How long, in seconds, a nonce stays fresh. Default 300.
    public var nonceLifetime: Double
    /// The protections offered in challenges, in order. Default `[.auth]`. Empty means RFC
    /// 2069 challenges, and then credentials with or without `qop` are accepted.
    public var qopOptions: [DigestQop]
    /// The algorithms whose credentials are accepted. Default: all four.
    public var acceptedAlgorithms: Set<DigestAlgorithm>
    /// The nonce MAC key.
    private var secret: [UInt8]

    /// Creates a server for `realm`.
    ///
    /// - Parameter secret: the nonce MAC key; use at least 32 random bytes
    ///   (`Crypto.randomBytes(count: 32)`), shared by every instance that must accept the
    ///   others' nonces.
    public init(
        realm: String, secret: [UInt8], nonceLifetime: Double = 300,
        qopOptions: [DigestQop] = [.auth],
        acceptedAlgorithms: Set<DigestAlgorithm> = Set(DigestAlgorithm.allCases)
    ) {
        self.realm = realm
        self.secret = secret
        self.nonceLifetime = nonceLifetime
        self.qopOptions = qopOptions
        self.acceptedAlgorithms = acceptedAlgorithms
    }

    /// A fresh challenge with a nonce issued at `now`. Pass `stale: true` when answering a
    /// `.stale` verdict, so the client retries without asking its user.
    public func challenge(
        now: Double, stale: Bool = false, algorithm: DigestAlgorithm = .sha256
    ) -> DigestChallenge {
        DigestChallenge(
            realm: realm, nonce: makeNonce(now: now, algorithm: algorithm), algorithm: algorithm,
            qopOptions: qopOptions, stale: stale)
    }

    /// One challenge per accepted algorithm, strongest first (RFC 8760 §2.4: SHA-256 before
    /// MD5), for a 401/407 with several `WWW-Authenticate` headers. The session variants are
    /// left out; ask for them with `challenge(now:stale:algorithm:)`.
    public func challenges(now: Double, stale: Bool = false) -> [DigestChallenge] {
        [DigestAlgorithm.sha256, .md5]
            .filter { acceptedAlgorithms.contains($0) }
            .map { challenge(now: now, stale: stale, algorithm: $0) }
    }

    /// Checks credentials for a request with `method` (and `body`, for `auth-int`).
    ///
    /// - Parameters:
    ///   - password: the user's password in this realm, looked up by `auth.username`.
    ///   - requestURI: when given, `auth.uri` must equal it exactly (RFC 7616 §3.4.6).
    /// - Returns: `.valid`; `.stale` when everything is right but the nonce is older than
    ///   `nonceLifetime` (answer `challenge(now:stale: true)`); otherwise `.invalid` with why.
    ///   The response comparison is constant-time.
    public func verify(
        _ auth: DigestAuthorization, method: String, password: String, now: Double,
        body: [UInt8] = [], requestURI: String? = nil
    ) -> DigestVerdict {
        guard acceptedAlgorithms.contains(auth.algorithm) else {
            return .invalid(.unsupportedAlgorithm)
        }
        guard auth.realm == realm else { return .invalid(.realmMismatch) }
        guard let issuedAt = issueTime(ofNonce: auth.nonce, algorithm: auth.algorithm) else {
            return .invalid(.foreignNonce)
        }
        if let requestURI, requestURI != auth.uri { return .invalid(.uriMismatch) }

        if let qop = auth.qop {
            if !qopOptions.isEmpty && !qopOptions.contains(qop) {
                return .invalid(.qopNotOffered)
            }
            guard auth.nc != nil else { return .invalid(.missingNonceCount) }
        } else if !qopOptions.isEmpty {
            // Refusing the RFC 2069 form keeps a client from being downgraded to it.
            return .invalid(.missingQop)
        }
        if auth.qop != nil || auth.algorithm.isSession {
            guard let cnonce = auth.cnonce, !cnonce.isEmpty else {
                return .invalid(.missingClientNonce)
            }
        }

        let expected = DigestComputation.response(
            algorithm: auth.algorithm, username: auth.username, realm: realm, password: password,
            nonce: auth.nonce, cnonce: auth.cnonce, nc: auth.nc, qop: auth.qop,
            method: method, uri: auth.uri, body: body)
        let received = Array(auth.response.lowercased().utf8)
        guard Crypto.constantTimeEqual(Array(expected.utf8), received) else {
            return .invalid(.wrongResponse)
        }

        // Only a correct response earns `stale` (RFC 7616 §3.3); either direction out of the
        // window (an old nonce, or one from a clock that has since gone back) asks for a new one.
        let age = now - issuedAt
        guard age.isFinite, abs(age) <= nonceLifetime else { return .stale }
        return .valid
    }

    // MARK: - Nonces

    private static let timestampLength = 8
    private static let randomLength = 8
    private static let macLength = 16

    private func makeNonce(now: Double, algorithm: DigestAlgorithm) -> String {
        let milliseconds = now.isFinite && now > 0 ? UInt64(min(now * 1000, 9.0e15)) : 0
        var body = (0..<Self.timestampLength).reversed().map {
            UInt8(truncatingIfNeeded: milliseconds >> (8 * $0))
        }
        body += Crypto.randomBytes(count: Self.randomLength)
        return Crypto.hex(body + mac(body, algorithm: algorithm))
    }

    /// The issue time in seconds when `nonce` is one of ours for `algorithm`, else nil.
    private func issueTime(ofNonce nonce: String, algorithm: DigestAlgorithm) -> Double? {
        let total = Self.timestampLength + Self.randomLength + Self.macLength
        guard let bytes = Self.decodeHex(nonce), bytes.count == total else { return nil }
        let body = Array(bytes[0..<(Self.timestampLength + Self.randomLength)])
        let tag = Array(bytes[(Self.timestampLength + Self.randomLength)...])
        guard Crypto.constantTimeEqual(tag, mac(body, algorithm: algorithm)) else { return nil }
        let milliseconds = body.prefix(Self.timestampLength)
            .reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Double(milliseconds) / 1000
    }

    private func mac(_ body: [UInt8], algorithm: DigestAlgorithm) -> [UInt8] {
        // Length-prefix the realm so no two (algorithm, realm) pairs give the same MAC input.
        let label = Array("irisgw digest nonce v1".utf8)
        let realmBytes = Array(realm.utf8)
        let realmLength = (0..<4).reversed().map {
            UInt8(truncatingIfNeeded: realmBytes.count >> (8 * $0))
        }
        let data = label + body + Array(algorithm.rawValue.utf8) + [0] + realmLength + realmBytes
        return Array(Crypto.hmacSHA256(key: secret, data: data).prefix(Self.macLength))
    }

    private static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension DigestServer: CustomStringConvertible, CustomReflectable {
    /// Realm and lifetime only; the secret is never shown.
    public var description: String {
        "DigestServer(realm: \"\(realm)\", nonceLifetime: \(nonceLifetime))"
    }
    /// Hides the secret from `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: ["realm": realm, "nonceLifetime": nonceLifetime])
    }
}

/// The outcome of `DigestServer.verify`.
public enum DigestVerdict: Sendable, Equatable {
    /// The credentials are good: admit the request.
    case valid
    /// The credentials are good but the nonce has expired: answer 401/407 with
    /// `challenge(now:stale: true)`; the client retries without asking its user.
    case stale
    /// The credentials are bad: answer 401/407 with a fresh, non-stale challenge (or 403
    /// after repeated failures).
    case invalid(Reason)

    /// Why credentials were rejected; safe to log.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The response does not match: wrong password (or a tampered field).
        case wrongResponse
        /// The nonce was not issued by this server for this realm and algorithm.
        case foreignNonce
        /// The credentials are for another realm.
        case realmMismatch
        /// The algorithm is not in `acceptedAlgorithms`.
        case unsupportedAlgorithm
        /// `qop` is required by our challenges but absent.
        case missingQop
        /// `qop` names a protection we did not offer.
        case qopNotOffered
        /// `cnonce` is absent although `qop` or a `-sess` algorithm needs it.
        case missingClientNonce
        /// `nc` is absent although `qop` is present.
        case missingNonceCount
        /// `uri` differs from the request's Request-URI.
        case uriMismatch

        /// A short phrase for logs.
        public var description: String {
            switch self {
            case .wrongResponse: "response does not match"
            case .foreignNonce: "nonce not issued by this server"
            case .realmMismatch: "realm mismatch"
            case .unsupportedAlgorithm: "algorithm not accepted"
            case .missingQop: "qop missing"
            case .qopNotOffered: "qop not offered"
            case .missingClientNonce: "cnonce missing"
            case .missingNonceCount: "nc missing"
            case .uriMismatch: "uri does not match the Request-URI"
            }
        }
    }
}
