import Crypto
import Testing

private func bytes(_ hex: String) -> [UInt8] {
    stride(from: 0, to: hex.count, by: 2).map { i in
        let start = hex.index(hex.startIndex, offsetBy: i)
        return Crypto.byte(hexPair: hex[start..<hex.index(start, offsetBy: 2)])!
    }
}

/// One HMAC test case of an RFC: key and data, and the expected MAC in hex.
struct HMACVector: Sendable, CustomTestStringConvertible {
    var source: String
    var key: [UInt8]
    var data: [UInt8]
    var mac: String
    var testDescription: String { source }
}

/// RFC 2202 §3 (HMAC-SHA-1), test cases 1-7.
let rfc2202: [HMACVector] = [
    HMACVector(
        source: "RFC 2202 §3 case 1", key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
        mac: "b617318655057264e28bc0b6fb378c8ef146be00"),
    HMACVector(
        source: "RFC 2202 §3 case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
        mac: "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
    HMACVector(
        source: "RFC 2202 §3 case 3", key: [UInt8](repeating: 0xaa, count: 20),
        data: [UInt8](repeating: 0xdd, count: 50),
        mac: "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
    HMACVector(
        source: "RFC 2202 §3 case 4", key: bytes("0102030405060708090a0b0c0d0e0f10111213141516171819"),
        data: [UInt8](repeating: 0xcd, count: 50), mac: "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
    HMACVector(
        source: "RFC 2202 §3 case 5", key: [UInt8](repeating: 0x0c, count: 20),
        data: Array("Test With Truncation".utf8),
        mac: "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
    HMACVector(
        source: "RFC 2202 §3 case 6", key: [UInt8](repeating: 0xaa, count: 80),
        data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
        mac: "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
    HMACVector(
        source: "RFC 2202 §3 case 7", key: [UInt8](repeating: 0xaa, count: 80),
        data: Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
        mac: "e8e99d0f45237d786d6bbaa7965c7808bbff1a91")
]

/// RFC 4231 §4 (HMAC-SHA-256), test cases 1-4, 6 and 7 (case 5 checks a truncated output).
let rfc4231: [HMACVector] = [
    HMACVector(
        source: "RFC 4231 §4.2 case 1", key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
        mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
    HMACVector(
        source: "RFC 4231 §4.3 case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
        mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    HMACVector(
        source: "RFC 4231 §4.4 case 3", key: [UInt8](repeating: 0xaa, count: 20),
        data: [UInt8](repeating: 0xdd, count: 50),
        mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
    HMACVector(
        source: "RFC 4231 §4.5 case 4", key: bytes("0102030405060708090a0b0c0d0e0f10111213141516171819"),
        data: [UInt8](repeating: 0xcd, count: 50),
        mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
    HMACVector(
        source: "RFC 4231 §4.7 case 6", key: [UInt8](repeating: 0xaa, count: 131),
        data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
        mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    HMACVector(
        source: "RFC 4231 §4.8 case 7", key: [UInt8](repeating: 0xaa, count: 131),
        data: Array(
            "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                .utf8),
        mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
]

struct HMACTests {
    @Test(arguments: rfc2202)
    func hmacSHA1(_ vector: HMACVector) {
        #expect(Crypto.hex(Crypto.hmacSHA1(key: vector.key, data: vector.data)) == vector.mac)
    }

    @Test(arguments: rfc2202)
    func hmacSHA1IntoABufferMatches(_ vector: HMACVector) {
        var out = [UInt8](repeating: 0, count: Crypto.hmacSHA1Length)
        vector.key.withUnsafeBytes { key in
            vector.data.withUnsafeBytes { data in
                out.withUnsafeMutableBytes { Crypto.hmacSHA1(key: key, data: data, into: $0) }
            }
        }
        #expect(Crypto.hex(out) == vector.mac)
    }

    @Test(arguments: rfc4231)
    func hmacSHA256(_ vector: HMACVector) {
        #expect(Crypto.hex(Crypto.hmacSHA256(key: vector.key, data: vector.data)) == vector.mac)
    }

    @Test func anEmptyKeyIsAKeyOfZeroLength() {
        // OpenSSL reads a null key as "reuse the last one"; an empty key must not be one.
        #expect(
            Crypto.hex(Crypto.hmacSHA256(key: [], data: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        #expect(Crypto.hex(Crypto.hmacSHA1(key: [], data: [])) == "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d")
    }
}
