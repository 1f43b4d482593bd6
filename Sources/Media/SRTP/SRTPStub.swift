// TEMPORARY stub of the srtp-media branch's API so the gateway compiles before the merge.
// Deleted when that branch is merged.
import Glibc

public enum SRTPSuite: String, Sendable, CaseIterable {
    case aesCM128HmacSHA1_80 = "AES_CM_128_HMAC_SHA1_80"
    case aesCM128HmacSHA1_32 = "AES_CM_128_HMAC_SHA1_32"
    case aeadAES128GCM = "AEAD_AES_128_GCM"
    public var masterKeyLength: Int { 16 }
    public var masterSaltLength: Int { self == .aeadAES128GCM ? 12 : 14 }
    public var keyMaterialLength: Int { masterKeyLength + masterSaltLength }
}

public struct SRTPConfiguration: Sendable, Equatable {
    public var suite: SRTPSuite
    public var sendKey: [UInt8]
    public var receiveKey: [UInt8]
    public init(suite: SRTPSuite, sendKey: [UInt8], receiveKey: [UInt8]) {
        self.suite = suite
        self.sendKey = sendKey
        self.receiveKey = receiveKey
    }
    public static func randomKey(for suite: SRTPSuite) -> [UInt8] {
        (0..<suite.keyMaterialLength).map { _ in UInt8.random(in: 0...255) }
    }
}
