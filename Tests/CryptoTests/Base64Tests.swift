import Crypto
import Testing

struct Base64Tests {
    /// RFC 4648 §10.
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy")
    ])
    func rfc4648Vectors(_ text: String, _ encoded: String) {
        #expect(Base64.encode(Array(text.utf8)) == encoded)
        #expect(Base64.decode(encoded, padding: .required) == Array(text.utf8))
        #expect(Base64.decode(encoded) == Array(text.utf8))
        let unpadded = String(encoded.prefix { $0 != "=" })
        #expect(Base64.encode(Array(text.utf8), padded: false) == unpadded)
        #expect(Base64.decode(unpadded, padding: .forbidden) == Array(text.utf8))
    }

    @Test func everyLengthRoundTripsInBothAlphabets() {
        for n in 0...33 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
            let url = Base64.encode(bytes, alphabet: .urlSafe, padded: false)
            #expect(url.count == (bytes.count * 4 + 2) / 3)
            #expect(Base64.decode(url, alphabet: .urlSafe, padding: .forbidden, canonical: true) == bytes)
        }
        let all = Array(UInt8.min...UInt8.max)
        #expect(Base64.decode(Base64.encode(all, alphabet: .urlSafe), alphabet: .urlSafe) == all)
    }

    @Test func alphabetsDifferInTwoCharacters() {
        #expect(Base64.encode([0xFB, 0xFF, 0xBF]) == "+/+/")
        #expect(Base64.encode([0xFB, 0xFF, 0xBF], alphabet: .urlSafe) == "-_-_")
        #expect(Base64.decode("-_-_") == nil)
        #expect(Base64.decode("+/+/", alphabet: .urlSafe) == nil)
    }

    @Test(
        arguments: [
            ("Zm8", Base64.Padding.optional, Array("fo".utf8)),  // SDES: padding left off
            ("Zm8", .required, nil),
            ("Zm8=", .forbidden, nil),
            ("Zm=8", .optional, nil),  // padding inside
            ("Zg===", .optional, nil),  // three pads
            ("Z", .optional, nil),  // impossible length
            ("Zm 8", .optional, nil),  // white space
            ("dGhlIHNhbXBsZSBub25jZQ==", .required, Array("the sample nonce".utf8))
        ] as [(String, Base64.Padding, [UInt8]?)])
    func paddingRules(_ text: String, _ padding: Base64.Padding, _ expected: [UInt8]?) {
        #expect(Base64.decode(text, padding: padding) == expected)
    }

    @Test func canonicalRefusesStrayLowBits() {
        #expect(Base64.decode("AA", alphabet: .urlSafe, padding: .forbidden, canonical: true) == [0])
        // "AB" is the same byte with a stray low bit: each byte string has one encoding.
        #expect(Base64.decode("AB", alphabet: .urlSafe, padding: .forbidden, canonical: true) == nil)
        #expect(Base64.decode("AAB", alphabet: .urlSafe, padding: .forbidden, canonical: true) == nil)
        #expect(Base64.decode("AB", alphabet: .urlSafe, padding: .forbidden) == [0])
    }
}
