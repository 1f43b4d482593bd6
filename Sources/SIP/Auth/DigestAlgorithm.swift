import Crypto

/// A digest algorithm (RFC 7616 §3.3, RFC 8760 for SIP).
///
/// ```
/// algorithm = "algorithm" EQUAL ( "MD5" / "MD5-sess" / "SHA-256" / "SHA-256-sess" / token )
/// ```
/// The `-sess` variants hash the client nonce into A1 (RFC 7616 §3.4.2).
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    /// MD5 (RFC 2617, the RFC 3261 default when `algorithm` is absent).
    case md5 = "MD5"
    /// MD5 with session A1.
    case md5Sess = "MD5-sess"
    /// SHA-256 (RFC 7616, RFC 8760).
    case sha256 = "SHA-256"
    /// SHA-256 with session A1.
    case sha256Sess = "SHA-256-sess"

    /// Parses an `algorithm` token case-insensitively; nil for an unknown algorithm.
    public init?(token: String) {
        let lowered = token.lowercased()
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == lowered }) else {
            return nil
        }
        self = match
    }

    /// Whether A1 includes the nonce and client nonce (the `-sess` variants).
    public var isSession: Bool { self == .md5Sess || self == .sha256Sess }

    /// Rank used to pick among challenges: a larger value is a stronger hash (RFC 8760 §2.4:
    /// prefer SHA-256 over MD5). The session variant ranks equal to its base hash.
    var strength: Int {
        switch self {
        case .md5, .md5Sess: 1
        case .sha256, .sha256Sess: 2
        }
    }

    /// `H(data)` of RFC 7616 §3.4.1: the lowercase hex digest of the UTF-8 bytes.
    func hexHash(_ text: String) -> String {
        hexHash(Array(text.utf8))
    }

    /// `H(data)` over raw bytes (used for the entity body with `auth-int`).
    func hexHash(_ bytes: [UInt8]) -> String {
        switch self {
        case .md5, .md5Sess: Crypto.hex(Crypto.md5(bytes))
        case .sha256, .sha256Sess: Crypto.hex(Crypto.sha256(bytes))
        }
    }
}

/// A quality of protection (RFC 7616 §3.3).
///
/// ```
/// qop-value = "auth" / "auth-int" / token
/// ```
public enum DigestQop: String, Sendable, CaseIterable {
    /// Authentication only.
    case auth = "auth"
    /// Authentication with integrity protection of the message body.
    case authInt = "auth-int"

    /// Parses a `qop` token case-insensitively; nil for an unknown token.
    public init?(token: String) {
        switch token.lowercased() {
        case "auth": self = .auth
        case "auth-int": self = .authInt
        default: return nil
        }
    }
}
