import Crypto
import IOCore
import Testing

@testable import ICE

@Suite("STUN messages (RFC 8489, RFC 5769 vectors)")
struct STUNMessageTests {
    static let key = Array(RFC5769.password.utf8)
    static let tid = STUNTransactionID(bytes: RFC5769.transactionID)!

    @Test("RFC 5769 §2.1 sample request parses, integrity and fingerprint verify")
    func sampleRequest() throws {
        let message = try STUNMessage.parse(RFC5769.request)
        #expect(message.type == .bindingRequest)
        #expect(message.transactionID == Self.tid)
        #expect(
            message.attributes == [
                .software("STUN test client"),
                .priority(0x6e00_01ff),
                .iceControlled(tieBreaker: 0x932f_f9b1_5126_3b36),
                .username("evtj:h6vY"),
                .messageIntegrity([
                    0x9a, 0xea, 0xa7, 0x0c, 0xbf, 0xd8, 0xcb, 0x56, 0x78, 0x1e,
                    0xf2, 0xb5, 0xb2, 0xd3, 0xf2, 0x49, 0xc1, 0xb5, 0x71, 0xa2
                ]),
                .fingerprint(0xe57a_3bcf)
            ])
        #expect(STUNMessage.verifyMessageIntegrity(RFC5769.request, key: Self.key) == .valid)
        #expect(STUNMessage.verifyMessageIntegrity(RFC5769.request, key: Array("wrong".utf8)) == .invalid)
        #expect(STUNMessage.verifyFingerprint(RFC5769.request) == .valid)
        // Our serializer reproduces the request too, given the vector's space padding.
        let stripped = STUNMessage(
            type: message.type, transactionID: message.transactionID,
            attributes: Array(message.attributes.prefix(4)))
        #expect(try stripped.serialized(integrityKey: Self.key, fingerprint: true, padding: 0x20) == RFC5769.request)
    }

    @Test(
        "RFC 5769 §2.2/§2.3 responses parse and re-serialize byte for byte",
        arguments: [
            (RFC5769.ipv4Response, SocketAddress(host: "192.0.2.1", port: 32853)),
            (RFC5769.ipv6Response, SocketAddress(host: "2001:db8:1234:5678:11:2233:4455:6677", port: 32853))
        ])
    func sampleResponses(bytes: [UInt8], mapped: SocketAddress) throws {
        let message = try STUNMessage.parse(bytes)
        #expect(message.type == .bindingSuccessResponse)
        #expect(message.transactionID == Self.tid)
        #expect(message.attribute(.software) == .software("test vector"))
        #expect(message.xorMappedAddress == mapped)
        #expect(message.hasMessageIntegrity && message.hasFingerprint)
        #expect(STUNMessage.verifyMessageIntegrity(bytes, key: Self.key) == .valid)
        #expect(STUNMessage.verifyFingerprint(bytes) == .valid)

        let rebuilt = STUNMessage(
            type: .bindingSuccessResponse, transactionID: Self.tid,
            attributes: [.software("test vector"), .xorMappedAddress(mapped)])
        #expect(try rebuilt.serialized(integrityKey: Self.key, fingerprint: true, padding: 0x20) == bytes)
        // Parsed attributes (MI and FINGERPRINT included as received) serialize to the same bytes.
        #expect(try message.serialized(padding: 0x20) == bytes)
    }

    @Test(
        "message type bits interleave class and method",
        arguments: [
            (STUNMessageType.bindingRequest, UInt16(0x0001)),
            (STUNMessageType(method: .binding, messageClass: .indication), UInt16(0x0011)),
            (STUNMessageType.bindingSuccessResponse, UInt16(0x0101)),
            (STUNMessageType.bindingErrorResponse, UInt16(0x0111)),
            (STUNMessageType(method: STUNMethod(rawValue: 0xFFF), messageClass: .errorResponse), UInt16(0x3FFF)),
            (STUNMessageType(method: STUNMethod(rawValue: 0x003), messageClass: .request), UInt16(0x0003))
        ])
    func messageType(type: STUNMessageType, wire: UInt16) {
        #expect(type.wireValue == wire)
        #expect(STUNMessageType(wireValue: wire) == type)
    }

    @Test("every attribute round-trips")
    func roundTrip() throws {
        let tid = STUNTransactionID.random()
        let message = STUNMessage(
            type: .bindingErrorResponse, transactionID: tid,
            attributes: [
                .username("abcd:efgh"),
                .software("irisgw"),
                .priority(2_130_706_431),
                .useCandidate,
                .iceControlling(tieBreaker: 0x0102_0304_0506_0708),
                .iceControlled(tieBreaker: .max),
                .xorMappedAddress(SocketAddress(host: "203.0.113.9", port: 1)),
                .xorMappedAddress(SocketAddress(host: "::1", port: 65535)),
                .mappedAddress(SocketAddress(host: "198.51.100.7", port: 5000)),
                .errorCode(.roleConflict),
                .unknownAttributes([STUNAttributeType(rawValue: 0x7777), STUNAttributeType(rawValue: 0x0031)]),
                .other(type: STUNAttributeType(rawValue: 0xC057), value: [0, 1, 0, 2, 9])
            ])
        let bytes = try message.serialized(integrityKey: [1, 2, 3], fingerprint: true)
        let parsed = try STUNMessage.parse(bytes)
        #expect(Array(parsed.attributes.dropLast(2)) == message.attributes)
        #expect(STUNMessage.verifyMessageIntegrity(bytes, key: [1, 2, 3]) == .valid)
        #expect(STUNMessage.verifyFingerprint(bytes) == .valid)
        #expect(parsed.unknownComprehensionRequired == [])
    }

    @Test("attributes after MESSAGE-INTEGRITY other than FINGERPRINT are ignored")
    func ignoredAfterIntegrity() throws {
        var bytes = try STUNMessage(
            type: .bindingRequest, transactionID: Self.tid,
            attributes: [.username("a:b")]
        ).serialized(integrityKey: [9])
        // Append a PRIORITY after MESSAGE-INTEGRITY and fix the length.
        bytes += [0x00, 0x24, 0x00, 0x04, 1, 2, 3, 4]
        bytes[3] = UInt8(bytes.count - 20)
        let parsed = try STUNMessage.parse(bytes)
        #expect(parsed.priority == nil)
        #expect(STUNMessage.verifyMessageIntegrity(bytes, key: [9]) == .valid)
    }

    @Test("unknown comprehension-required attributes are reported")
    func unknownRequired() throws {
        let bytes = try STUNMessage(
            type: .bindingRequest, transactionID: Self.tid,
            attributes: [
                .other(type: STUNAttributeType(rawValue: 0x0031), value: [1]),
                .other(type: STUNAttributeType(rawValue: 0x8031), value: [1]),
                .other(type: .realm, value: Array("x".utf8))
            ]
        ).serialized()
        #expect(try STUNMessage.parse(bytes).unknownComprehensionRequired == [STUNAttributeType(rawValue: 0x0031)])
    }

    /// A valid Binding request header with `attributes` appended and the length fixed.
    static func with(_ attributes: [UInt8], length: Int? = nil) -> [UInt8] {
        let length = length ?? attributes.count
        return [0x00, 0x01, UInt8(length >> 8), UInt8(length & 0xFF), 0x21, 0x12, 0xa4, 0x42]
            + RFC5769.transactionID + attributes
    }

    static let malformed: [(String, [UInt8], STUNParseError)] = [
        ("empty", [], .truncatedHeader(length: 0)),
        ("19 octets", Array(RFC5769.request.prefix(19)), .truncatedHeader(length: 19)),
        ("RTP first octet", [0x80] + Array(RFC5769.request.dropFirst()), .notSTUN(firstByte: 0x80)),
        ("TURN channel first octet", [0x40] + Array(RFC5769.request.dropFirst()), .notSTUN(firstByte: 0x40)),
        // 0x16 has its top bits clear; the cookie position tells a DTLS record from STUN.
        (
            "DTLS record", [0x16, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 1, 0, 12] + [UInt8](repeating: 0, count: 12),
            .badMagicCookie(0)
        ),
        ("RFC 3489 cookie", [0, 1, 0, 0, 1, 2, 3, 4] + RFC5769.transactionID, .badMagicCookie(0x0102_0304)),
        ("length not a multiple of 4", with([0, 0x25, 0, 0], length: 3), .lengthNotMultipleOfFour(3)),
        ("length beyond datagram", with([], length: 8), .lengthMismatch(declared: 8, available: 0)),
        ("length short of datagram", with([0, 0x25, 0, 0], length: 0), .lengthMismatch(declared: 0, available: 4)),
        ("truncated request", Array(RFC5769.request.dropLast(4)), .lengthMismatch(declared: 88, available: 84)),
        (
            "attribute value beyond message", with([0, 0x06, 0, 9, 0x61, 0x62, 0x63, 0x64]),
            .attributeBeyondMessage(type: .username, offset: 20)
        ),
        (
            "attribute length 0xFFFF", with([0x80, 0x22, 0xFF, 0xFF]),
            .attributeBeyondMessage(type: .software, offset: 20)
        ),
        (
            "PRIORITY of 2 octets", with([0, 0x24, 0, 2, 1, 2, 0, 0]),
            .invalidAttribute(type: .priority, reason: "2 octets, must be 4")
        ),
        (
            "USE-CANDIDATE with a value", with([0, 0x25, 0, 4, 1, 2, 3, 4]),
            .invalidAttribute(type: .useCandidate, reason: "4 octets, must be 0")
        ),
        (
            "ICE-CONTROLLING of 4 octets", with([0x80, 0x2a, 0, 4, 1, 2, 3, 4]),
            .invalidAttribute(type: .iceControlling, reason: "4 octets, must be 8")
        ),
        (
            "MESSAGE-INTEGRITY of 16 octets", with([0, 0x08, 0, 16] + [UInt8](repeating: 0, count: 16)),
            .invalidAttribute(type: .messageIntegrity, reason: "16 octets, must be 20")
        ),
        (
            "FINGERPRINT of 8 octets", with([0x80, 0x28, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]),
            .invalidAttribute(type: .fingerprint, reason: "8 octets, must be 4")
        ),
        (
            "XOR-MAPPED-ADDRESS family 3", with([0, 0x20, 0, 8, 0, 3, 0, 0, 0, 0, 0, 0]),
            .invalidAttribute(type: .xorMappedAddress, reason: "unknown address family 3")
        ),
        (
            "XOR-MAPPED-ADDRESS IPv6 of 8 octets", with([0, 0x20, 0, 8, 0, 2, 0, 0, 0, 0, 0, 0]),
            .invalidAttribute(type: .xorMappedAddress, reason: "IPv6 with 8 octets, need 20")
        ),
        (
            "XOR-MAPPED-ADDRESS of 2 octets", with([0, 0x20, 0, 2, 0, 1, 0, 0]),
            .invalidAttribute(type: .xorMappedAddress, reason: "2 octets, need 8 or 20")
        ),
        (
            "ERROR-CODE class 7", with([0, 0x09, 0, 4, 0, 0, 7, 0]),
            .invalidAttribute(type: .errorCode, reason: "class 7 number 0 is not 300-699")
        ),
        (
            "USERNAME not UTF-8", with([0, 0x06, 0, 2, 0xff, 0xfe, 0, 0]),
            .invalidAttribute(type: .username, reason: "not UTF-8")
        ),
        (
            "USERNAME of 600 octets", with([0, 0x06, 0x02, 0x58] + [UInt8](repeating: 0x61, count: 600)),
            .invalidAttribute(type: .username, reason: "600 octets, at most 513")
        ),
        (
            "UNKNOWN-ATTRIBUTES of odd length", with([0, 0x0a, 0, 3, 0, 1, 2, 0]),
            .invalidAttribute(type: .unknownAttributes, reason: "odd length 3")
        ),
        (
            "attribute after FINGERPRINT", with([0x80, 0x28, 0, 4, 1, 2, 3, 4, 0, 0x25, 0, 0]),
            .attributeAfterFingerprint(.useCandidate)
        )
    ]

    @Test("malformed messages throw a classified error", arguments: STUNMessageTests.malformed)
    func malformedMessages(name: String, bytes: [UInt8], expected: STUNParseError) {
        #expect(throws: expected, "\(name)") { try STUNMessage.parse(bytes) }
        // The integrity and fingerprint checks never trap on them either.
        _ = STUNMessage.verifyFingerprint(bytes)
        _ = STUNMessage.verifyMessageIntegrity(bytes, key: [1])
    }

    @Test("every truncation and every single-octet corruption of the vectors is survived")
    func exhaustiveDamage() {
        for vector in [RFC5769.request, RFC5769.ipv4Response, RFC5769.ipv6Response] {
            for count in 0..<vector.count {
                #expect(throws: STUNParseError.self) { try STUNMessage.parse(Array(vector.prefix(count))) }
            }
            for index in vector.indices {
                for value: UInt8 in [0x00, 0xFF, vector[index] ^ 0x01] {
                    var damaged = vector
                    damaged[index] = value
                    _ = try? STUNMessage.parse(damaged)
                    if damaged != vector, STUNMessage.verifyFingerprint(damaged) == .valid {
                        Issue.record("corruption at \(index) kept a valid fingerprint")
                    }
                    _ = STUNMessage.verifyMessageIntegrity(damaged, key: Self.key)
                }
            }
        }
    }

    @Test("serializer refuses a non-numeric address")
    func nonNumericAddress() {
        let message = STUNMessage(
            type: .bindingSuccessResponse, transactionID: Self.tid,
            attributes: [.xorMappedAddress(SocketAddress(host: "example.com", port: 1))])
        #expect(throws: STUNBuildError.addressNotNumeric("example.com")) { try message.serialized() }
    }

    @Test(
        "HMAC-SHA1 (RFC 2202 vectors), both forms",
        arguments: [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        ])
    func hmacSHA1(key: [UInt8], data: [UInt8], hex: String) {
        #expect(Crypto.hex(Crypto.hmacSHA1(key: key, data: data)) == hex)
        var out = [UInt8](repeating: 0, count: 20)
        key.withUnsafeBytes { k in
            data.withUnsafeBytes { d in
                out.withUnsafeMutableBytes { o in
                    Crypto.hmacSHA1(key: k, data: d, into: o)
                }
            }
        }
        #expect(Crypto.hex(out) == hex)
    }
}
