import Testing

@testable import Media

/// The OpenSSL primitives CSRTPOpenSSL puts under libsrtp (AES-ICM, HMAC-SHA1, AES-GCM)
/// against their RFCs' known answers, driven through libsrtp's cipher and auth interfaces
/// as libsrtp drives them. `SRTPTests.libsrtpReferencePackets` checks them inside whole
/// SRTP packets.
@Suite struct SRTPPrimitiveTests {
    @Test func libsrtpSelfTestsPass() {
        #expect(SRTPPrimitives.selfTest() == 0)
    }

    /// RFC 3711 B.2: key 2B7E1516..., salt F0F1...FD; keystream blocks at counters 0, 1, 2
    /// and FEFF, FF00, FF01 (the index block's low octets start the counter there).
    @Test func aesICMKeystreamRFC3711B2() {
        let key = hex("2B7E151628AED2A6ABF7158809CF4F3C F0F1F2F3F4F5F6F7F8F9FAFBFCFD")
        #expect(
            SRTPPrimitives.icmKeystream(keyAndSalt: key, index: [UInt8](repeating: 0, count: 16), count: 48)
                == hex(
                    "E03EAD0935C95E80E166B16DD92B4EB4 D23513162B02D0F72A43A2FE4A5F97AB 41E95B3BB0A2E8DD477901E4FCA894C0"
                ))
        #expect(
            SRTPPrimitives.icmKeystream(
                keyAndSalt: key, index: [UInt8](repeating: 0, count: 14) + [0xFE, 0xFF], count: 48)
                == hex(
                    "EC8CDF7398607CB0F2D21675EA9EA1E4 362B7C3C6773516318A077D7FC5073AE 6A2CC3787889374FBEB4C81B17BA6C44"
                ))
    }

    /// Lengths that end inside a block, made in two calls: the same stream as one long run.
    @Test(arguments: [1, 15, 17, 31, 160, 161, 600, 1400])
    func aesICMPartialBlocksContinueTheStream(_ count: Int) {
        let key = (0..<30).map { UInt8($0) }, index = (0..<16).map { UInt8(0x40 + $0) }
        let long = SRTPPrimitives.icmKeystream(keyAndSalt: key, index: index, count: 1500)
        #expect(
            SRTPPrimitives.icmKeystream(keyAndSalt: key, index: index, count: count)
                == long.map { Array($0[0..<count]) })
    }

    struct HMACCase: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: [UInt8]
        var data: [UInt8]
        var digest: String
        var testDescription: String { "RFC 2202 test case \(number)" }
    }

    /// RFC 2202 §3, all seven HMAC-SHA1 test cases (6 and 7 have keys longer than a block).
    static let rfc2202: [HMACCase] = [
        HMACCase(
            number: 1, key: [UInt8](repeating: 0x0B, count: 20), data: Array("Hi There".utf8),
            digest: "b617318655057264e28bc0b6fb378c8ef146be00"),
        HMACCase(
            number: 2, key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            digest: "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        HMACCase(
            number: 3, key: [UInt8](repeating: 0xAA, count: 20), data: [UInt8](repeating: 0xDD, count: 50),
            digest: "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        HMACCase(
            number: 4, key: (1...25).map { UInt8($0) }, data: [UInt8](repeating: 0xCD, count: 50),
            digest: "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
        HMACCase(
            number: 5, key: [UInt8](repeating: 0x0C, count: 20), data: Array("Test With Truncation".utf8),
            digest: "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
        HMACCase(
            number: 6, key: [UInt8](repeating: 0xAA, count: 80),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            digest: "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        HMACCase(
            number: 7, key: [UInt8](repeating: 0xAA, count: 80),
            data: Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
            digest: "e8e99d0f45237d786d6bbaa7965c7808bbff1a91")
    ]

    @Test(arguments: rfc2202)
    func hmacSHA1RFC2202(_ c: HMACCase) {
        #expect(SRTPPrimitives.hmacSHA1(key: c.key, data: c.data) == hex(c.digest))
    }

    // RFC 7714 §16.1 / §16.1.1: AEAD_AES_128_GCM over the RTP packet of §16.1 with the
    // session key and the IV of §16.1 (salt XOR SSRC, ROC and SEQ); the AAD is the header.
    static let gcmKey = hex("000102030405060708090a0b0c0d0e0f")
    static let gcmIV = hex("51753c6580c2726f20718414")
    static let gcmHeader = hex("8040f17b8041f8d35501a0b2")
    static let gcmPlaintext = Array("Gallia est omnis divisa in partes tres".utf8)
    static let gcmSealed = hex(
        "f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d19b36de3adf8833"
            + "899d7f27beb16a9152cf765ee4390cce")

    @Test func aesGCMRFC7714RTPVector() throws {
        #expect(
            try SRTPPrimitives.gcm(
                seal: true, key: Self.gcmKey, iv: Self.gcmIV, aad: Self.gcmHeader, Self.gcmPlaintext
            ).get() == Self.gcmSealed)
        #expect(
            try SRTPPrimitives.gcm(seal: false, key: Self.gcmKey, iv: Self.gcmIV, aad: Self.gcmHeader, Self.gcmSealed)
                .get() == Self.gcmPlaintext)
    }

    /// A flipped bit in the header (AAD), the ciphertext or the tag, or another IV: refused.
    @Test func aesGCMRefusesTampering() {
        func open(_ sealed: [UInt8], aad: [UInt8] = Self.gcmHeader, iv: [UInt8] = Self.gcmIV) -> Int32? {
            if case .failure(let e) = SRTPPrimitives.gcm(seal: false, key: Self.gcmKey, iv: iv, aad: aad, sealed) {
                return e.code
            }
            return nil
        }
        for index in [0, 20, Self.gcmSealed.count - 1] {
            var forged = Self.gcmSealed
            forged[index] ^= 0x01
            #expect(open(forged) == SRTPPrimitives.authenticationFailure, "byte \(index)")
        }
        var header = Self.gcmHeader
        header[3] ^= 0x01
        #expect(open(Self.gcmSealed, aad: header) == SRTPPrimitives.authenticationFailure)
        var iv = Self.gcmIV
        iv[11] ^= 0x01
        #expect(open(Self.gcmSealed, iv: iv) == SRTPPrimitives.authenticationFailure)
        #expect(open(Array(Self.gcmSealed[0..<10])) == SRTPPrimitives.authenticationFailure, "shorter than a tag")
    }
}
