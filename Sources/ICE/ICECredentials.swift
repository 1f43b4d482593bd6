import Crypto

/// An ICE username fragment and password (RFC 8445 §5.3, syntax RFC 8839 §5.4): `a=ice-ufrag`
/// and `a=ice-pwd`. The password is the key of the short-term credential that signs every
/// check (MESSAGE-INTEGRITY, RFC 8489 §9.1).
public struct ICECredentials: Sendable, Hashable {
    /// `ice-ufrag`: 4–256 ice-chars.
    public var ufrag: String
    /// `ice-pwd`: 22–256 ice-chars.
    public var pwd: String

    /// Credentials as given (from the peer's SDP, or ours).
    public init(ufrag: String, pwd: String) {
        self.ufrag = ufrag
        self.pwd = pwd
    }

    /// The ice-char set (RFC 8839 §5.4): ALPHA / DIGIT / "+" / "/", 64 characters, so each
    /// random octet masked to 6 bits picks one uniformly.
    static let iceChars: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Fresh random credentials: an 8-character ufrag (48 bits; RFC 8445 §5.3 asks for at
    /// least 24) and a 24-character pwd (144 bits; at least 128), from the CSPRNG.
    public static func random(ufragLength: Int = 8, pwdLength: Int = 24) -> ICECredentials {
        precondition(ufragLength >= 4 && ufragLength <= 256, "ice-ufrag is 4-256 characters")
        precondition(pwdLength >= 22 && pwdLength <= 256, "ice-pwd is 22-256 characters")
        func text(_ count: Int) -> String {
            String(decoding: Crypto.randomBytes(count: count).map { iceChars[Int($0 & 0x3F)] }, as: UTF8.self)
        }
        return ICECredentials(ufrag: text(ufragLength), pwd: text(pwdLength))
    }

    /// True when both parts have the RFC 8839 syntax (lengths and ice-chars only).
    public var isValidSyntax: Bool {
        func valid(_ s: String, _ lengths: ClosedRange<Int>) -> Bool {
            lengths.contains(s.utf8.count) && s.utf8.allSatisfy { Self.iceChars.contains($0) }
        }
        return valid(ufrag, 4...256) && valid(pwd, 22...256)
    }
}
