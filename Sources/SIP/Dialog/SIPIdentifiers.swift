import Crypto
import SDP

/// Identifiers RFC 3261 asks to be globally unique (tags §19.3, branches §8.1.1.7, Call-ID §8.1.1.4).
public enum SIPIdentifiers {
    /// A random token of `bytes` bytes, hex encoded.
    public static func token(_ bytes: Int = 8) -> String { Crypto.hex(Crypto.randomBytes(count: bytes)) }
    public static func tag() -> String { token(6) }
    /// A branch with the RFC 3261 magic cookie.
    public static func branch() -> String { "z9hG4bK" + token(8) }
    public static func callID(host: String) -> String { token(12) + "@" + host }
}
