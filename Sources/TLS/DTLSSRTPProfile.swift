/// A DTLS-SRTP protection profile (RFC 5764 §4.1.2, GCM from RFC 7714 §14.2) that we
/// negotiate in the use_srtp extension.
///
/// The TLS module does not depend on Media: `suiteName` is the RFC 4568 / RFC 7714 crypto
/// suite name, which is exactly the raw value of Media's `SRTPSuite`
/// (`SRTPSuite(rawValue: keys.profile.suiteName)`):
///
/// | profile (OpenSSL name)   | id     | `suiteName` = `SRTPSuite` raw value | key + salt |
/// |--------------------------|--------|-------------------------------------|------------|
/// | `SRTP_AEAD_AES_128_GCM`  | 0x0007 | `AEAD_AES_128_GCM`                  | 16 + 12    |
/// | `SRTP_AES128_CM_SHA1_80` | 0x0001 | `AES_CM_128_HMAC_SHA1_80`           | 16 + 14    |
/// | `SRTP_AES128_CM_SHA1_32` | 0x0002 | `AES_CM_128_HMAC_SHA1_32`           | 16 + 14    |
public enum DTLSSRTPProfile: String, Sendable, CaseIterable, Hashable {
    case aeadAES128GCM = "SRTP_AEAD_AES_128_GCM"
    case aes128CMSHA1_80 = "SRTP_AES128_CM_SHA1_80"
    case aes128CMSHA1_32 = "SRTP_AES128_CM_SHA1_32"

    /// Our preference when nobody says otherwise: GCM first (Chrome and Firefox offer it),
    /// then AES-CM with an 80-bit tag (which every WebRTC endpoint offers, RFC 8827 §6.5).
    public static let preferred: [DTLSSRTPProfile] = [.aeadAES128GCM, .aes128CMSHA1_80]

    /// The profile's id on the wire (RFC 5764 §4.1.2).
    public var id: UInt16 {
        switch self {
        case .aeadAES128GCM: 0x0007
        case .aes128CMSHA1_80: 0x0001
        case .aes128CMSHA1_32: 0x0002
        }
    }

    public init?(id: UInt16) {
        guard let profile = Self.allCases.first(where: { $0.id == id }) else { return nil }
        self = profile
    }

    /// The SRTP crypto suite's name (RFC 4568 §6.2, RFC 7714 §14.2): Media's `SRTPSuite` raw
    /// value.
    public var suiteName: String {
        switch self {
        case .aeadAES128GCM: "AEAD_AES_128_GCM"
        case .aes128CMSHA1_80: "AES_CM_128_HMAC_SHA1_80"
        case .aes128CMSHA1_32: "AES_CM_128_HMAC_SHA1_32"
        }
    }

    /// Master key length in bytes (AES-128 for all).
    public var keyLength: Int { 16 }
    /// Master salt length in bytes: 12 for GCM (RFC 7714 §12), 14 for AES-CM (RFC 3711).
    public var saltLength: Int { self == .aeadAES128GCM ? 12 : 14 }
}
