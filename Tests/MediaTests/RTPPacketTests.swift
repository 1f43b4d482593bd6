import Testing

@testable import Media

// No test here or in the other RTP/RTCP suites measures time: the hot path's lack of
// per-packet allocation comes from its shape (views holding offsets, typed throws, writers
// into caller memory), and speed belongs to `make bench`, not to unit tests.

@Suite struct RTPPacketTests {
    struct RoundTrip: Sendable, CustomTestStringConvertible {
        let name: String
        let packet: RTPPacket
        var testDescription: String { name }
    }

    static let roundTrips: [RoundTrip] = [
        RoundTrip(
            name: "plain PCMU",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 0, sequenceNumber: 1, timestamp: 160, ssrc: 0x1234_5678),
                payload: Array(repeating: 0xFF, count: 160))),
        RoundTrip(
            name: "marker, dynamic PT, extreme numbers",
            packet: RTPPacket(
                header: RTPHeader(marker: true, payloadType: 127, sequenceNumber: 65535, timestamp: .max, ssrc: .max),
                payload: [1, 2, 3])),
        RoundTrip(
            name: "two CSRCs",
            packet: RTPPacket(
                header: RTPHeader(
                    payloadType: 8, sequenceNumber: 7, timestamp: 9, ssrc: 1, csrcs: [0xAAAA_AAAA, 0xBBBB_BBBB]),
                payload: [9, 9])),
        RoundTrip(
            name: "fifteen CSRCs",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 8, sequenceNumber: 7, timestamp: 9, ssrc: 1, csrcs: Array(1...15)),
                payload: [])),
        RoundTrip(
            name: "one-byte header extension",
            packet: RTPPacket(
                header: RTPHeader(
                    payloadType: 111, sequenceNumber: 300, timestamp: 48000, ssrc: 42,
                    headerExtension: RTPHeaderExtension(profile: 0xBEDE, data: [0x10, 0xFF, 0, 0, 0x21, 1, 2, 0])),
                payload: [0xAB, 0xCD])),
        RoundTrip(
            name: "empty extension",
            packet: RTPPacket(
                header: RTPHeader(
                    payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0,
                    headerExtension: RTPHeaderExtension(profile: 0x1000, data: [])),
                payload: [5])),
        RoundTrip(
            name: "padding",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 0, sequenceNumber: 2, timestamp: 320, ssrc: 5),
                payload: [1, 2, 3, 4, 5], paddingCount: 3)),
        RoundTrip(
            name: "padding only, no payload",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 0, sequenceNumber: 2, timestamp: 320, ssrc: 5),
                payload: [], paddingCount: 255)),
        RoundTrip(
            name: "CSRCs, extension and padding",
            packet: RTPPacket(
                header: RTPHeader(
                    marker: true, payloadType: 101, sequenceNumber: 4242, timestamp: 123_456, ssrc: 77,
                    csrcs: [1, 2, 3], headerExtension: RTPHeaderExtension(profile: 0xBEDE, data: [0x22, 1, 2, 3])),
                payload: Array(0..<20), paddingCount: 4))
    ]

    @Test(arguments: roundTrips)
    func roundTrip(_ roundTrip: RoundTrip) throws {
        let packet = roundTrip.packet
        let bytes = try packet.serialize()
        #expect(bytes.count == packet.encodedLength)
        #expect(try RTPPacket(parsing: bytes) == packet)

        try bytes.withUnsafeBytes { raw in
            let view = try RTPPacketView.parse(raw)
            #expect(view.sequenceNumber == packet.header.sequenceNumber)
            #expect(view.timestamp == packet.header.timestamp)
            #expect(view.ssrc == packet.header.ssrc)
            #expect(view.marker == packet.header.marker)
            #expect(view.payloadType == packet.header.payloadType)
            #expect(view.csrcCount == packet.header.csrcs.count)
            #expect(view.paddingCount == packet.paddingCount)
            #expect(view.headerLength == packet.header.encodedLength)
            #expect(Array(view.payload(in: raw)) == packet.payload)
            #expect(view.extensionProfile == packet.header.headerExtension?.profile)
            #expect(view.extensionRange.map { Array(raw[$0]) } == packet.header.headerExtension?.data)
            for (index, csrc) in packet.header.csrcs.enumerated() {
                #expect(view.csrc(at: index, in: raw) == csrc)
            }
        }

        // The hot-path builder writes the same octets into caller memory.
        var buffer = [UInt8](repeating: 0xEE, count: 1500)
        let length = try buffer.withUnsafeMutableBytes { out in
            try packet.payload.withUnsafeBytes { payload in
                try RTPPacket.build(
                    header: packet.header, payload: payload, paddingCount: packet.paddingCount, into: out)
            }
        }
        #expect(Array(buffer[..<length]) == bytes)
    }

    @Test func wireLayoutMatchesRFC() throws {
        let packet = RTPPacket(
            header: RTPHeader(
                marker: true, payloadType: 8, sequenceNumber: 0x0102, timestamp: 0x0304_0506,
                ssrc: 0x0708_090A, csrcs: [0x0B0C_0D0E],
                headerExtension: RTPHeaderExtension(profile: 0xBEDE, data: [1, 2, 3, 4])),
            payload: [0xAA], paddingCount: 2)
        let expected: [UInt8] = [
            0b1011_0001, 0x88, 0x01, 0x02,  // V=2 P=1 X=1 CC=1 | M=1 PT=8 | seq
            0x03, 0x04, 0x05, 0x06,  // timestamp
            0x07, 0x08, 0x09, 0x0A,  // SSRC
            0x0B, 0x0C, 0x0D, 0x0E,  // CSRC
            0xBE, 0xDE, 0x00, 0x01,  // extension profile, length 1 word
            1, 2, 3, 4,  // extension data
            0xAA, 0x00, 0x02  // payload, padding (count 2)
        ]
        #expect(try packet.serialize() == expected)
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let error: RTPParseError
        var testDescription: String { name }
    }

    /// A 12-octet fixed header with the first octet given.
    static func header(_ first: UInt8) -> [UInt8] { [first, 0, 0, 1, 0, 0, 0, 160, 0, 0, 0, 9] }

    static let malformed: [Malformed] = [
        Malformed(name: "empty", bytes: [], error: .truncatedHeader(length: 0)),
        Malformed(name: "short header", bytes: Array(header(0x80).prefix(11)), error: .truncatedHeader(length: 11)),
        Malformed(name: "version 1", bytes: header(0x40) + [1, 2], error: .unsupportedVersion(1)),
        Malformed(name: "version 0 (STUN-like)", bytes: header(0x00), error: .unsupportedVersion(0)),
        Malformed(name: "version 3", bytes: header(0xC0), error: .unsupportedVersion(3)),
        Malformed(
            name: "padding longer than payload", bytes: header(0xA0) + [0, 0, 10],
            error: .paddingBeyondPayload(paddingCount: 10, available: 3)),
        Malformed(
            name: "padding bit but nothing after header", bytes: header(0xA0),
            error: .paddingBeyondPayload(paddingCount: 1, available: 0)),
        Malformed(name: "padding count zero", bytes: header(0xA0) + [1, 2, 0], error: .zeroPaddingCount),
        Malformed(
            name: "CSRC count beyond length", bytes: header(0x83) + [0, 0, 0, 1, 0, 0, 0, 2],
            error: .csrcListBeyondPacket(csrcCount: 3, length: 20)),
        Malformed(
            name: "CSRC count 15 in a bare header", bytes: header(0x8F),
            error: .csrcListBeyondPacket(csrcCount: 15, length: 12)),
        Malformed(
            name: "extension header missing", bytes: header(0x90) + [0xBE],
            error: .extensionBeyondPacket(needed: 16, length: 13)),
        Malformed(
            name: "extension length beyond packet", bytes: header(0x90) + [0xBE, 0xDE, 0, 2, 1, 2, 3, 4],
            error: .extensionBeyondPacket(needed: 24, length: 20)),
        Malformed(
            name: "extension eats the padding octet", bytes: header(0xB0) + [0xBE, 0xDE, 0, 1, 1, 2, 3, 4],
            error: .paddingBeyondPayload(paddingCount: 1, available: 0))
    ]

    @Test(arguments: malformed)
    func malformedPacketIsRejected(_ malformed: Malformed) {
        #expect(throws: malformed.error) { try RTPPacket(parsing: malformed.bytes) }
        #expect(!malformed.error.description.isEmpty)
    }

    struct BadBuild: Sendable, CustomTestStringConvertible {
        let name: String
        let packet: RTPPacket
        let capacity: Int
        let error: RTPBuildError
        var testDescription: String { name }
    }

    static let badBuilds: [BadBuild] = [
        BadBuild(
            name: "buffer too small",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0), payload: [1, 2, 3]),
            capacity: 14, error: .bufferTooSmall(needed: 15, available: 14)),
        BadBuild(
            name: "payload type 128",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 128, sequenceNumber: 0, timestamp: 0, ssrc: 0), payload: []),
            capacity: 100, error: .payloadTypeOutOfRange(128)),
        BadBuild(
            name: "sixteen CSRCs",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, csrcs: Array(1...16)),
                payload: []),
            capacity: 200, error: .tooManyCSRCs(16)),
        BadBuild(
            name: "extension not word aligned",
            packet: RTPPacket(
                header: RTPHeader(
                    payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0,
                    headerExtension: RTPHeaderExtension(profile: 1, data: [1, 2, 3])), payload: []),
            capacity: 100, error: .invalidExtensionLength(3)),
        BadBuild(
            name: "padding 256",
            packet: RTPPacket(
                header: RTPHeader(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0), payload: [],
                paddingCount: 256),
            capacity: 400, error: .invalidPaddingCount(256))
    ]

    @Test(arguments: badBuilds)
    func invalidPacketIsNotBuilt(_ bad: BadBuild) {
        var buffer = [UInt8](repeating: 0, count: bad.capacity)
        #expect(throws: bad.error) {
            _ = try buffer.withUnsafeMutableBytes { (out) throws(RTPBuildError) -> Int in
                try bad.packet.write(into: out)
            }
        }
    }

    @Test func payloadEncodedInPlaceIsKept() throws {
        let header = RTPHeader(payloadType: 0, sequenceNumber: 10, timestamp: 1600, ssrc: 3, csrcs: [4])
        var buffer = [UInt8](repeating: 0, count: 64)
        let length = try buffer.withUnsafeMutableBytes { out in
            // The codec writes straight after where the header will go.
            let start = header.encodedLength
            for index in 0..<8 { out[start + index] = UInt8(100 + index) }
            let payload = UnsafeRawBufferPointer(rebasing: out[start..<(start + 8)])
            return try RTPPacket.build(header: header, payload: payload, into: out)
        }
        let packet = try RTPPacket(parsing: Array(buffer[..<length]))
        #expect(packet.payload == Array(100..<108))
        #expect(packet.header == header)
    }

    @Test func typedBufferParseMatchesRaw() throws {
        let bytes = try RTPPacket(
            header: RTPHeader(payloadType: 9, sequenceNumber: 5, timestamp: 6, ssrc: 7), payload: [1]
        ).serialize()
        let fromTyped = try bytes.withUnsafeBufferPointer { try RTPPacketView.parse($0) }
        let fromRaw = try bytes.withUnsafeBytes { try RTPPacketView.parse($0) }
        #expect(fromTyped == fromRaw)
        #expect(fromTyped.payloadRange == 12..<13)
    }

    @Test(arguments: [
        ([0x80, 0x00] as [UInt8], false),  // PCMU
        ([0x80, 0xE0], false),  // M=1, PT=96
        ([0x80, 0xC8], true),  // SR (200)
        ([0x81, 0xC9], true),  // RR (201)
        ([0x80, 0xDF], true),  // 223, top of the RTCP window
        ([0x80], false)
    ])
    func multiplexedRTCPIsRecognised(_ bytes: [UInt8], _ isRTCP: Bool) {
        #expect(bytes.withUnsafeBytes { RTPMultiplexing.isRTCP($0) } == isRTCP)
    }
}
