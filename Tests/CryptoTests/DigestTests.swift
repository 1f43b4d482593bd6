import Crypto
import Testing

/// A hash function and one of its published test values.
struct DigestVector: Sendable, CustomTestStringConvertible {
    var source: String
    var hash: @Sendable ([UInt8]) -> [UInt8]
    var input: String
    var digest: String
    var testDescription: String { source }
}

let digestVectors: [DigestVector] = [
    DigestVector(
        source: "MD5 RFC 1321 A.5 \"\"", hash: Crypto.md5, input: "", digest: "d41d8cd98f00b204e9800998ecf8427e"),
    DigestVector(
        source: "MD5 RFC 1321 A.5 abc", hash: Crypto.md5, input: "abc", digest: "900150983cd24fb0d6963f7d28e17f72"),
    DigestVector(
        source: "SHA-1 FIPS 180 abc", hash: Crypto.sha1, input: "abc",
        digest: "a9993e364706816aba3e25717850c26c9cd0d89d"),
    DigestVector(
        source: "SHA-1 FIPS 180 two blocks", hash: Crypto.sha1,
        input: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        digest: "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    DigestVector(
        source: "SHA-256 FIPS 180 \"\"", hash: Crypto.sha256, input: "",
        digest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    DigestVector(
        source: "SHA-256 FIPS 180 abc", hash: Crypto.sha256, input: "abc",
        digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
]

struct DigestTests {
    @Test(arguments: digestVectors)
    func hashes(_ vector: DigestVector) {
        #expect(Crypto.hex(vector.hash(Array(vector.input.utf8))) == vector.digest)
    }

    @Test func randomBytesHaveTheirCountAndDiffer() {
        #expect(Crypto.randomBytes(count: 0).isEmpty)
        let a = Crypto.randomBytes(count: 32), b = Crypto.randomBytes(count: 32)
        #expect(a.count == 32 && b.count == 32)
        #expect(a != b)
    }

    @Test(
        arguments: [
            ([UInt8](), [UInt8](), true), ([1, 2, 3], [1, 2, 3], true), ([1, 2, 3], [1, 2, 4], false),
            ([1, 2], [1, 2, 3], false), ([], [0], false)
        ] as [([UInt8], [UInt8], Bool)])
    func constantTimeEqual(_ a: [UInt8], _ b: [UInt8], _ equal: Bool) {
        #expect(Crypto.constantTimeEqual(a, b) == equal)
    }

    @Test func hexBothWays() {
        #expect(Crypto.hex([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
        #expect(Crypto.hex([0xab, 0x01, 0xcd], uppercase: true, separator: UInt8(ascii: ":")) == "AB:01:CD")
        #expect(Crypto.hex([UInt8]()) == "")
        #expect(Crypto.byte(hexPair: "a5") == 0xa5)
        #expect(Crypto.byte(hexPair: "A5") == 0xa5)
        for bad in ["", "a", "abc", "g0", "+f", "-0", " f"] { #expect(Crypto.byte(hexPair: bad) == nil, "\(bad)") }
    }
}
