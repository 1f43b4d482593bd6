/// SRTP crypto suites we speak (RFC 4568 names; GCM from RFC 7714).
public enum SRTPSuite: String, Sendable, CaseIterable {
    case aesCM128HmacSHA1_80 = "AES_CM_128_HMAC_SHA1_80"
    case aesCM128HmacSHA1_32 = "AES_CM_128_HMAC_SHA1_32"
    case aeadAES128GCM = "AEAD_AES_128_GCM"

    /// Master key length in bytes: 16 for all three (AES-128).
    public var masterKeyLength: Int { 16 }

    /// Master salt length in bytes: 14 for AES-CM (RFC 3711), 12 for GCM (RFC 7714 §8.1).
    public var masterSaltLength: Int { self == .aeadAES128GCM ? 12 : 14 }

    /// key + salt: the bytes of an SDES inline key.
    public var keyMaterialLength: Int { masterKeyLength + masterSaltLength }
}

/// SRTP on one leg, keyed by SDES: what we send with, what the peer sends with.
public struct SRTPConfiguration: Sendable, Equatable {
    public var suite: SRTPSuite
    /// Our master key || master salt (the key in our a=crypto).
    public var sendKey: [UInt8]
    /// The peer's master key || master salt (the key in its a=crypto).
    public var receiveKey: [UInt8]

    public init(suite: SRTPSuite, sendKey: [UInt8], receiveKey: [UInt8]) {
        self.suite = suite
        self.sendKey = sendKey
        self.receiveKey = receiveKey
    }

    /// Fresh random key material for `suite`. `SystemRandomNumberGenerator` reads
    /// `getrandom(2)` on Linux: a cryptographically secure source.
    public static func randomKey(for suite: SRTPSuite) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<suite.keyMaterialLength).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// The same keys seen from the peer: its send key is our receive key. For tests and
    /// load generators that play the far end.
    public var mirrored: SRTPConfiguration {
        SRTPConfiguration(suite: suite, sendKey: receiveKey, receiveKey: sendKey)
    }
}

/// What became of one packet given to an `SRTPSession`. A plain enum, so the per-packet
/// path allocates nothing.
public enum SRTPResult: Sendable, Equatable {
    /// Done in place; the packet is now `length` bytes.
    case ok(length: Int)
    /// The tag did not verify: tampered, or keyed differently (RFC 3711 §3.3 step 5).
    case authenticationFailed
    /// Already seen, or older than the replay window (RFC 3711 §3.3.2).
    case replayed
    /// Anything else libsrtp refused (too short, no room for the tag, key exhausted...):
    /// its `srtp_err_status_t`.
    case failed(code: Int32)
}

/// libsrtp refused a key or policy (wrong key length, library init failure).
public struct SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libsrtp's `srtp_err_status_t`, or -1 for a key of the wrong length.
    public let code: Int32
    /// What we were doing: "init", "create outbound", ...
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    public var description: String { "srtp \(operation): error \(code)" }
}
