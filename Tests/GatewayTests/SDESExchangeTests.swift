import Media
import SDP
import SIP
import Testing

@testable import Gateway

/// A carrier's offer and what we make of it.
struct SDESOffer: Sendable, CustomStringConvertible {
    var encryption: TrunkProfile.MediaSettings.Encryption
    var tls = true
    var proto: String
    var lines: [String]
    /// nil: refused (488).
    var suite: SRTPSuite?
    var plain = false
    var description: String { "\(encryption) \(proto) \(lines.count) line(s)" }
}

let sdesOffers: [SDESOffer] = [
    // The first usable line wins, in the carrier's order.
    SDESOffer(
        encryption: .required, proto: "RTP/SAVP",
        lines: [
            "1 AES_256_CM_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)",
            "2 AES_CM_128_HMAC_SHA1_32 inline:\(SDESExchangeTests.key32)",
            "3 AES_CM_128_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)"
        ], suite: .aesCM128HmacSHA1_32),
    SDESOffer(
        encryption: .optional, proto: "RTP/SAVP", lines: ["5 AEAD_AES_128_GCM inline:\(SDESExchangeTests.keyGCM)"],
        suite: .aeadAES128GCM),
    SDESOffer(
        encryption: .optional, proto: "RTP/AVP", lines: ["1 AES_CM_128_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)"],
        suite: .aesCM128HmacSHA1_80),
    SDESOffer(encryption: .optional, proto: "RTP/AVP", lines: [], plain: true),
    SDESOffer(
        encryption: .none, proto: "RTP/AVP", lines: ["1 AES_CM_128_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)"],
        plain: true),
    SDESOffer(
        encryption: .none, proto: "RTP/SAVP", lines: ["1 AES_CM_128_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)"]),
    SDESOffer(encryption: .required, proto: "RTP/AVP", lines: []),
    SDESOffer(
        encryption: .required, proto: "RTP/SAVP",
        lines: ["1 AES_CM_128_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)|2^20|1:4"]),
    // Keys over UDP are not taken: an RTP/SAVP offer then cannot be answered.
    SDESOffer(
        encryption: .optional, tls: false, proto: "RTP/SAVP",
        lines: ["1 AES_CM_128_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)"]),
    SDESOffer(
        encryption: .optional, tls: false, proto: "RTP/AVP",
        lines: ["1 AES_CM_128_HMAC_SHA1_80 inline:\(SDESExchangeTests.key80)"], plain: true)
]

/// The trunk leg's SDES policy as tables: offers we make, answers and offers we get, under
/// each `media.encryption`, with no socket and no clock.
struct SDESExchangeTests {
    static let key80 = "PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR"  // 30 bytes
    static let key32 = "wmz2jMVJJNg1ZCY3Mny2ZcbN0xeDnsDRlvIQN6uZ"  // 30 bytes
    static let keyGCM = "ihCiYfb1nBOfQUvjQ4RspTaLXTFm1Ey9UHUnmg=="  // 28 bytes

    static func bytes(_ key: String) -> [UInt8] {
        (try? SDESCrypto.parse("1 X inline:" + key))?.keys[0].keySalt ?? []
    }

    static func media(_ proto: String, _ cryptos: [String]) -> MediaDescription {
        MediaDescription(
            media: "audio", port: 4000, proto: proto, formats: ["0"],
            attributes: cryptos.map { SDPAttribute(name: "crypto", value: $0) })
    }

    static func exchange(
        _ encryption: TrunkProfile.MediaSettings.Encryption, tls: Bool = true,
        suites: [SRTPSuite] = SRTPSuite.allCases
    ) -> SDESExchange {
        SDESExchange(media: TrunkProfile.MediaSettings(encryption: encryption, srtpSuites: suites), overTLS: tls)
    }

    // MARK: Our offers

    @Test(arguments: [
        (TrunkProfile.MediaSettings.Encryption.none, true, "RTP/AVP", 0),
        (.optional, true, "RTP/AVP", 3),
        (.required, true, "RTP/SAVP", 3),
        // Over UDP/TCP the keys stay home unless the profile allows it.
        (.optional, false, "RTP/AVP", 0)
    ])
    func offers(_ encryption: TrunkProfile.MediaSettings.Encryption, _ tls: Bool, _ proto: String, _ lines: Int) {
        var x = Self.exchange(encryption, tls: tls)
        let (p, cryptos) = x.offer()
        #expect(p == proto)
        #expect(cryptos.count == lines)
        #expect(cryptos.map(\.suite) == Array(SRTPSuite.allCases.map(\.rawValue).prefix(lines)))
        #expect(Set(cryptos.map(\.tag)).count == lines)
        for c in cryptos { #expect(c.keys[0].keySalt.count == SRTPSuite(rawValue: c.suite)!.keyMaterialLength) }
        #expect(x.refusal == nil)
    }

    @Test func requiredOverClearTransportIsRefusedBeforeAnything() {
        let x = Self.exchange(.required, tls: false)
        #expect(x.refusal?.contains("only be sent over TLS") == true)
        let allowed = SDESExchange(
            media: TrunkProfile.MediaSettings(encryption: .required, sdesRequiresTLS: false), overTLS: false)
        #expect(allowed.refusal == nil)
    }

    // MARK: Answers to our offers

    @Test func answerPicksOurLineByTagAndKeysBothWays() throws {
        var x = Self.exchange(.required)
        let (_, offered) = x.offer()
        try x.receiveAnswer(Self.media("RTP/SAVP", ["2 AES_CM_128_HMAC_SHA1_32 inline:\(Self.key32)"]))
        let srtp = try #require(x.srtp)
        #expect(srtp.suite == .aesCM128HmacSHA1_32)
        #expect(srtp.sendKey == offered[1].keys[0].keySalt)
        #expect(srtp.receiveKey == Self.bytes(Self.key32))
        #expect(x.local == offered[1])
        // A re-offer (hold) repeats the line in force.
        let (proto, again) = x.offer()
        #expect(proto == "RTP/SAVP")
        #expect(again == [offered[1]])
    }

    @Test(arguments: [
        // A tag we did not offer, a suite that does not match the tag, a short key, an MKI.
        ["9 AES_CM_128_HMAC_SHA1_80 inline:\(key80)"],
        ["1 AES_CM_128_HMAC_SHA1_32 inline:\(key32)"],
        ["1 AES_CM_128_HMAC_SHA1_80 inline:\(keyGCM)"],
        ["1 AES_CM_128_HMAC_SHA1_80 inline:\(key80)|2^20|1:4"],
        ["1 AES_CM_128_HMAC_SHA1_80 inline:\(key80) UNENCRYPTED_SRTP"],
        []
    ])
    func requiredAnswerWithoutUsableKeysIsAnError(_ lines: [String]) {
        var x = Self.exchange(.required)
        _ = x.offer()
        let error = #expect(throws: NegotiationError.self) { try x.receiveAnswer(Self.media("RTP/SAVP", lines)) }
        #expect(error?.secure == true)
        #expect(error?.message.contains("no usable SRTP key") == true)
        #expect(x.srtp == nil)
    }

    @Test func optionalAnswerWithoutKeysIsPlainRTP() throws {
        var x = Self.exchange(.optional)
        _ = x.offer()
        try x.receiveAnswer(Self.media("RTP/AVP", []))
        #expect(x.srtp == nil)
        #expect(x.offer().cryptos.isEmpty)  // re-offers stay plain
    }

    @Test func optionalAnswerWithKeysIsSRTP() throws {
        var x = Self.exchange(.optional)
        _ = x.offer()
        try x.receiveAnswer(Self.media("RTP/AVP", ["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.key80)"]))
        #expect(x.srtp?.suite == .aesCM128HmacSHA1_80)
        #expect(x.proto == "RTP/AVP")
    }

    @Test func plainOfferAnsweredWithSAVPIsAnError() {
        var x = Self.exchange(.none)
        _ = x.offer()
        #expect(throws: NegotiationError.self) {
            try x.receiveAnswer(Self.media("RTP/SAVP", ["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.key80)"]))
        }
    }

    // MARK: The carrier's offers

    @Test(arguments: sdesOffers)
    func answersOffer(_ offer: SDESOffer) throws {
        var x = Self.exchange(offer.encryption, tls: offer.tls)
        let m = Self.media(offer.proto, offer.lines)
        if offer.suite == nil && !offer.plain {
            let error = #expect(throws: NegotiationError.self) { try x.answer(m) }
            #expect(error?.secure == true)
            return
        }
        let (proto, crypto) = try x.answer(m)
        #expect(proto == offer.proto)  // never RTP/AVP for RTP/SAVP (RFC 3264 §6)
        if offer.plain {
            #expect(crypto == nil)
            #expect(x.srtp == nil)
            return
        }
        let chosen = try #require(m.cryptos.first { $0.suite == offer.suite?.rawValue })
        let line = try #require(crypto)
        #expect(line.tag == chosen.tag)
        #expect(line.suite == chosen.suite)
        #expect(line.keys[0].keySalt != chosen.keys[0].keySalt)  // our own key
        #expect(
            x.srtp
                == SRTPConfiguration(
                    suite: offer.suite!, sendKey: line.keys[0].keySalt, receiveKey: chosen.keys[0].keySalt))
    }

    @Test func reofferKeepsOurKeyUnlessTheLineChanges() throws {
        var x = Self.exchange(.required)
        let (_, first) = try x.answer(Self.media("RTP/SAVP", ["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.key80)"]))
        // Same tag and suite, a new key from the carrier (RFC 4568 §7.1.4): ours stays, theirs changes.
        let (_, same) = try x.answer(Self.media("RTP/SAVP", ["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.key32)"]))
        #expect(same == first)
        #expect(x.srtp?.receiveKey == Self.bytes(Self.key32))
        // A new suite: a new key of ours.
        let (_, changed) = try x.answer(Self.media("RTP/SAVP", ["2 AES_CM_128_HMAC_SHA1_32 inline:\(Self.key32)"]))
        #expect(changed?.tag == 2)
        #expect(changed?.keys[0].keySalt != first?.keys[0].keySalt)
    }
}
