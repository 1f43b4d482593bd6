import Testing

@testable import SDP

/// One `a=crypto` value and what it holds.
struct CryptoLine: Sendable, CustomStringConvertible {
    var source: String
    var value: String
    var tag: UInt32
    var suite: String
    var keyBytes: Int
    var lifetime: UInt64?
    var mki: (UInt64, Int)?
    var sessionParameters: [String] = []
    var description: String { source }
}

let cryptoLines: [CryptoLine] = [
    CryptoLine(
        source: "RFC 4568 §4 example",
        value: "1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:32",
        tag: 1, suite: "AES_CM_128_HMAC_SHA1_80", keyBytes: 30, lifetime: 1 << 20, mki: (1, 32)),
    CryptoLine(
        source: "_32, as baresip writes it",
        value: "1 AES_CM_128_HMAC_SHA1_32 inline:wmz2jMVJJNg1ZCY3Mny2ZcbN0xeDnsDRlvIQN6uZ",
        tag: 1, suite: "AES_CM_128_HMAC_SHA1_32", keyBytes: 30),
    CryptoLine(
        source: "Polycom lifetime only",
        value: "2 AES_CM_128_HMAC_SHA1_80 inline:Hn5jIeVXdIcH/AJkgkWBqkxwqxwNQ3Lmkk6ZGSqY|2^31",
        tag: 2, suite: "AES_CM_128_HMAC_SHA1_80", keyBytes: 30, lifetime: 1 << 31),
    CryptoLine(
        source: "GCM (RFC 7714), 28-byte key",
        value: "3 AEAD_AES_128_GCM inline:ihCiYfb1nBOfQUvjQ4RspTaLXTFm1Ey9UHUnmg==",
        tag: 3, suite: "AEAD_AES_128_GCM", keyBytes: 28),
    CryptoLine(
        source: "session parameters",
        value:
            "7 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20 UNENCRYPTED_SRTCP KDR=23",
        tag: 7, suite: "AES_CM_128_HMAC_SHA1_80", keyBytes: 30, lifetime: 1 << 20,
        sessionParameters: ["UNENCRYPTED_SRTCP", "KDR=23"])
]

/// `a=crypto` lines as endpoints write them (RFC 4568 §9.1), read and written back.
struct SDESCryptoTests {
    @Test(arguments: cryptoLines)
    func reads(_ line: CryptoLine) throws {
        let c = try SDESCrypto.parse(line.value)
        #expect(c.tag == line.tag)
        #expect(c.suite == line.suite)
        #expect(c.keys.count == 1)
        #expect(c.keys[0].keySalt.count == line.keyBytes)
        #expect(c.keys[0].lifetime == line.lifetime)
        #expect(c.keys[0].mki?.value == line.mki?.0)
        #expect(c.keys[0].mki?.length == line.mki?.1)
        #expect(c.sessionParameters == line.sessionParameters)
        // Written back as read (the RFC's own spelling of lifetimes and MKIs).
        #expect(c.value == line.value)
        #expect(try SDESCrypto.parse(c.value) == c)
    }

    @Test(arguments: [
        ("", "a tag"),
        ("1 AES_CM_128_HMAC_SHA1_80", "a tag"),
        ("0 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "1 to 9 digits"),
        ("1234567890 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "1 to 9 digits"),
        ("1 AES-CM inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "outside ALPHA"),
        ("1 AES_CM_128_HMAC_SHA1_80 uri:https://keys.example/k", "not \"inline\""),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:not*base64", "not base64"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^x", "lifetime"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|1:200", "MKI")
    ])
    func refuses(_ value: String, _ says: String) {
        let error = #expect(throws: SDESCrypto.ParseError.self) { try SDESCrypto.parse(value) }
        #expect(error?.description.contains(says) == true)
        // The key never appears in an error.
        #expect(error?.description.contains("PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR") == false)
    }

    @Test func mediaDescriptionListsItsLines() throws {
        let sdp = try SessionDescription.parse(
            """
            v=0\r
            o=- 1 1 IN IP4 192.0.2.1\r
            s=-\r
            c=IN IP4 192.0.2.1\r
            t=0 0\r
            m=audio 4000 RTP/SAVP 0\r
            a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR\r
            a=crypto:x broken\r
            a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:wmz2jMVJJNg1ZCY3Mny2ZcbN0xeDnsDRlvIQN6uZ\r

            """)
        let m = sdp.media[0]
        #expect(m.isSecureRTP)
        #expect(m.cryptos.map(\.tag) == [1, 2])
    }
}
