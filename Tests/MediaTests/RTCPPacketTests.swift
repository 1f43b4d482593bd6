import Testing

@testable import Media

@Suite struct RTCPPacketTests {
    static let block1 = RTCPReportBlock(
        ssrc: 0x1111_1111, fractionLost: 25, cumulativeLost: 100, extendedHighestSequenceNumber: 0x0001_0005,
        interarrivalJitter: 80, lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 65536)
    static let block2 = RTCPReportBlock(
        ssrc: 0x2222_2222, fractionLost: 0, cumulativeLost: -3, extendedHighestSequenceNumber: 7,
        interarrivalJitter: 0, lastSenderReport: 0, delaySinceLastSenderReport: 0)
    static let senderInfo = RTCPSenderInfo(
        ntpTimestamp: NTPTimestamp(seconds: 0xE000_0001, fraction: 0x8000_0000), rtpTimestamp: 160_000,
        packetCount: 1000, octetCount: 160_000)

    struct Compound: Sendable, CustomTestStringConvertible {
        let name: String
        let packet: RTCPCompoundPacket
        var testDescription: String { name }
    }

    static let compounds: [Compound] = [
        Compound(
            name: "SR + SDES",
            packet: RTCPCompoundPacket(packets: [
                .senderReport(
                    RTCPSenderReport(ssrc: 0xCAFE_0001, senderInfo: senderInfo, reportBlocks: [block1, block2])),
                .sourceDescription(RTCPSourceDescription(ssrc: 0xCAFE_0001, cname: "irisgw@192.0.2.1"))
            ])),
        Compound(
            name: "SR without blocks + SDES with several items and chunks",
            packet: RTCPCompoundPacket(packets: [
                .senderReport(RTCPSenderReport(ssrc: 9, senderInfo: senderInfo)),
                .sourceDescription(
                    RTCPSourceDescription(chunks: [
                        RTCPSDESChunk(
                            ssrc: 9,
                            items: [
                                RTCPSDESItem(type: .cname, text: "a@b"),
                                RTCPSDESItem(type: .tool, text: "irisgw"),
                                RTCPSDESItem(type: .priv, value: [3, 0x61, 0x62, 0x63, 0xFF]),
                                RTCPSDESItem(type: RTCPSDESItemType(rawValue: 42), value: [])
                            ]),
                        RTCPSDESChunk(ssrc: 10, items: []),
                        RTCPSDESChunk(ssrc: 11, items: [RTCPSDESItem(type: .cname, text: "xy")])
                    ]))
            ])),
        Compound(
            name: "RR + BYE with reason",
            packet: RTCPCompoundPacket(packets: [
                .receiverReport(RTCPReceiverReport(ssrc: 0xBEEF, reportBlocks: [block1])),
                .goodbye(RTCPGoodbye(ssrcs: [0xBEEF], reason: "call ended"))
            ])),
        Compound(
            name: "empty RR + SDES + BYE without reason",
            packet: RTCPCompoundPacket(packets: [
                .receiverReport(RTCPReceiverReport(ssrc: 1)),
                .sourceDescription(RTCPSourceDescription(ssrc: 1, cname: "c")),
                .goodbye(RTCPGoodbye(ssrcs: [1, 2, 3]))
            ])),
        Compound(
            name: "RR with profile extension + APP kept opaque",
            packet: RTCPCompoundPacket(packets: [
                .receiverReport(RTCPReceiverReport(ssrc: 1, reportBlocks: [block2], profileExtensions: [1, 2, 3, 4])),
                .opaque(RTCPOpaquePacket(packetType: 204, count: 3, body: [0, 0, 0, 1, 0x6E, 0x61, 0x6D, 0x65])),
                .goodbye(RTCPGoodbye(ssrcs: [], reason: ""))
            ]))
    ]

    @Test(arguments: compounds)
    func compoundRoundTrip(_ compound: Compound) throws {
        let bytes = try compound.packet.serialize()
        #expect(bytes.count == compound.packet.encodedLength)
        #expect(bytes.count % 4 == 0)
        #expect(try RTCPCompoundPacket(parsing: bytes) == compound.packet)
        #expect(try bytes.withUnsafeBytes { try RTCPCompoundPacket.validate($0) } == compound.packet.packets.count)
    }

    @Test func zeroAllocationViewReadsReports() throws {
        let bytes = try Self.compounds[0].packet.serialize()
        try bytes.withUnsafeBytes { raw in
            _ = try RTCPCompoundPacket.validate(raw)
            let sr = try RTCPPacketView.parse(raw, at: 0)
            #expect(sr.packetType == RTCPPacketType.senderReport)
            #expect(sr.senderSSRC(in: raw) == 0xCAFE_0001)
            #expect(sr.senderInfo(in: raw) == Self.senderInfo)
            #expect(sr.reportBlockCount == 2)
            #expect(sr.reportBlock(at: 0, in: raw) == Self.block1)
            #expect(sr.reportBlock(at: 1, in: raw) == Self.block2)
            #expect(sr.range == 0..<(8 + 20 + 48))

            let sdes = try RTCPPacketView.parse(raw, at: sr.range.upperBound)
            var items: [(UInt32, RTCPSDESItemType, String)] = []
            sdes.forEachSourceDescriptionItem(in: raw) { ssrc, type, range in
                items.append((ssrc, type, String(decoding: raw[range], as: UTF8.self)))
            }
            #expect(items.count == 1)
            #expect(items.first?.0 == 0xCAFE_0001)
            #expect(items.first?.1 == .cname)
            #expect(items.first?.2 == "irisgw@192.0.2.1")
            #expect(sdes.range.upperBound == raw.count)
        }
    }

    @Test func receiverReportWireLayout() throws {
        let rr = RTCPCompoundPacket(packets: [
            .receiverReport(
                RTCPReceiverReport(
                    ssrc: 0x0102_0304,
                    reportBlocks: [
                        RTCPReportBlock(
                            ssrc: 0x0A0B_0C0D, fractionLost: 0x19, cumulativeLost: -2,
                            extendedHighestSequenceNumber: 0x0001_0002, interarrivalJitter: 0x10,
                            lastSenderReport: 0xAABB_CCDD, delaySinceLastSenderReport: 0x0001_8000)
                    ]))
        ])
        #expect(
            try rr.serialize() == [
                0x81, 0xC9, 0x00, 0x07,  // V=2 RC=1 | PT=201 | length 7 words
                0x01, 0x02, 0x03, 0x04,  // sender SSRC
                0x0A, 0x0B, 0x0C, 0x0D,  // SSRC_1
                0x19, 0xFF, 0xFF, 0xFE,  // fraction lost | cumulative lost −2 (24-bit)
                0x00, 0x01, 0x00, 0x02,  // extended highest sequence number
                0x00, 0x00, 0x00, 0x10,  // jitter
                0xAA, 0xBB, 0xCC, 0xDD,  // LSR
                0x00, 0x01, 0x80, 0x00  // DLSR (1.5 s)
            ])
    }

    @Test func sdesChunkIsPaddedWithNulls() throws {
        // CNAME "xy": SSRC(4) + type, length, 2 octets + null -> 5, padded to 8.
        let packet = RTCPPacket.sourceDescription(RTCPSourceDescription(ssrc: 7, cname: "xy"))
        #expect(packet.encodedLength == 4 + 4 + 8)
        // Exactly filling a word still needs a null octet: a whole word of them.
        let full = RTCPPacket.sourceDescription(RTCPSourceDescription(ssrc: 7, cname: "abcdef"))
        #expect(full.encodedLength == 4 + 4 + 12)
    }

    @Test(
        arguments: [
            (Int32(-5), Int32(-5)), (0x7F_FFFF, 0x7F_FFFF), (-0x80_0000, -0x80_0000),
            (9_000_000, 0x7F_FFFF), (-9_000_000, -0x80_0000)
        ] as [(Int32, Int32)])
    func cumulativeLostIs24BitSignedAndClamped(_ written: Int32, _ read: Int32) throws {
        var block = Self.block2
        block.cumulativeLost = written
        let bytes = try RTCPCompoundPacket(packets: [
            .receiverReport(RTCPReceiverReport(ssrc: 1, reportBlocks: [block]))
        ]).serialize()
        guard case .receiverReport(let rr) = try RTCPCompoundPacket(parsing: bytes).packets.first else {
            Issue.record("not an RR")
            return
        }
        #expect(rr.reportBlocks.first?.cumulativeLost == read)
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let error: RTCPParseError
        var testDescription: String { name }
    }

    /// An empty RR from SSRC 1 (8 octets).
    static let emptyRR: [UInt8] = [0x80, 0xC9, 0x00, 0x01, 0, 0, 0, 1]
    /// A BYE for SSRC 1 (8 octets).
    static let bye: [UInt8] = [0x81, 0xCB, 0x00, 0x01, 0, 0, 0, 1]

    static let malformed: [Malformed] = [
        Malformed(name: "empty", bytes: [], error: .empty),
        Malformed(name: "three octets", bytes: [0x80, 0xC9, 0x00], error: .truncatedHeader(offset: 0)),
        Malformed(
            name: "trailing octets after the last packet", bytes: emptyRR + [0x80, 0xCB],
            error: .truncatedHeader(offset: 8)),
        Malformed(
            name: "version 1 first", bytes: [0x40, 0xC9, 0x00, 0x01, 0, 0, 0, 1],
            error: .unsupportedVersion(offset: 0, version: 1)),
        Malformed(
            name: "version 0 in second packet", bytes: emptyRR + [0x01, 0xCB, 0x00, 0x01, 0, 0, 0, 1],
            error: .unsupportedVersion(offset: 8, version: 0)),
        Malformed(name: "first packet is BYE", bytes: bye, error: .firstPacketNotReport(packetType: 203)),
        Malformed(
            name: "first packet is SDES", bytes: [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 1, 1, 0x61, 0],
            error: .firstPacketNotReport(packetType: 202)),
        Malformed(
            name: "length beyond compound", bytes: [0x80, 0xC9, 0x00, 0x03, 0, 0, 0, 1],
            error: .lengthBeyondCompound(offset: 0, length: 16, available: 8)),
        Malformed(
            name: "second packet length beyond compound", bytes: emptyRR + [0x81, 0xCB, 0x00, 0x05, 0, 0, 0, 1],
            error: .lengthBeyondCompound(offset: 8, length: 24, available: 8)),
        Malformed(
            name: "RR report count beyond length", bytes: [0x82, 0xC9, 0x00, 0x07] + [UInt8](repeating: 0, count: 28),
            error: .reportBlocksBeyondPacket(offset: 0, count: 2, length: 32)),
        Malformed(
            name: "SR too short for sender info", bytes: [0x80, 0xC8, 0x00, 0x01, 0, 0, 0, 1],
            error: .reportBlocksBeyondPacket(offset: 0, count: 0, length: 8)),
        Malformed(
            name: "padding on the first packet", bytes: [0xA0, 0xC9, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 4],
            error: .paddingNotAllowed(offset: 0)),
        Malformed(
            name: "padding on a middle packet",
            bytes: emptyRR + [0xA1, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 4] + bye,
            error: .paddingNotAllowed(offset: 8)),
        Malformed(
            name: "zero padding count", bytes: emptyRR + [0xA1, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 0],
            error: .zeroPaddingCount(offset: 8)),
        Malformed(
            name: "padding beyond packet", bytes: emptyRR + [0xA1, 0xCB, 0x00, 0x01, 0, 0, 0, 9],
            error: .paddingBeyondPacket(offset: 8, paddingCount: 9, available: 4)),
        Malformed(
            name: "SDES item beyond packet", bytes: emptyRR + [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 1, 9, 0x61, 0],
            error: .sourceDescriptionBeyondPacket(offset: 8)),
        Malformed(
            name: "SDES chunk without terminator",
            bytes: emptyRR + [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 1, 2, 0x61, 0x62],
            error: .sourceDescriptionBeyondPacket(offset: 8)),
        Malformed(
            name: "SDES announces two chunks, holds one",
            bytes: emptyRR + [0x82, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 1, 1, 0x61, 0],
            error: .sourceDescriptionBeyondPacket(offset: 8)),
        Malformed(
            name: "BYE source count beyond packet", bytes: emptyRR + [0x83, 0xCB, 0x00, 0x01, 0, 0, 0, 1],
            error: .goodbyeBeyondPacket(offset: 8)),
        Malformed(
            name: "BYE reason beyond packet",
            bytes: emptyRR + [0x81, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 10, 0x61, 0x62, 0x63],
            error: .goodbyeBeyondPacket(offset: 8))
    ]

    @Test(arguments: malformed)
    func malformedCompoundIsRejected(_ malformed: Malformed) {
        #expect(throws: malformed.error) { try RTCPCompoundPacket(parsing: malformed.bytes) }
        #expect(!malformed.error.description.isEmpty)
    }

    @Test func paddedLastPacketIsAccepted() throws {
        let bytes = Self.emptyRR + [0xA1, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 4]
        let compound = try RTCPCompoundPacket(parsing: bytes)
        #expect(compound.packets == [.receiverReport(RTCPReceiverReport(ssrc: 1)), .goodbye(RTCPGoodbye(ssrcs: [1]))])
    }

    @Test func reducedSizeRTCPIsAcceptedOnlyWhenAllowed() throws {
        #expect(throws: RTCPParseError.firstPacketNotReport(packetType: 203)) {
            try RTCPCompoundPacket(parsing: Self.bye)
        }
        let compound = try RTCPCompoundPacket(parsing: Self.bye, allowReducedSize: true)
        #expect(compound.packets == [.goodbye(RTCPGoodbye(ssrcs: [1]))])
    }

    @Test func invalidPacketsAreNotBuilt() {
        let tooMany = RTCPCompoundPacket(packets: [
            .receiverReport(
                RTCPReceiverReport(
                    ssrc: 1, reportBlocks: Array(repeating: Self.block2, count: 32)))
        ])
        #expect(throws: RTCPBuildError.countTooLarge(32)) { try tooMany.serialize() }
        let longReason = RTCPCompoundPacket(packets: [
            .goodbye(RTCPGoodbye(ssrcs: [1], reason: String(repeating: "x", count: 256)))
        ])
        #expect(throws: RTCPBuildError.textTooLong(256)) { try longReason.serialize() }
        let oddExtension = RTCPCompoundPacket(packets: [
            .receiverReport(RTCPReceiverReport(ssrc: 1, profileExtensions: [1]))
        ])
        #expect(throws: RTCPBuildError.invalidBodyLength(1)) { try oddExtension.serialize() }
        var small = [UInt8](repeating: 0, count: 7)
        #expect(throws: RTCPBuildError.bufferTooSmall(needed: 8, available: 7)) {
            _ = try small.withUnsafeMutableBytes { (raw) throws(RTCPBuildError) -> Int in
                try RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 1))]).write(into: raw)
            }
        }
    }

    @Test func sdesCNameLookup() {
        let chunk = RTCPSDESChunk(
            ssrc: 1, items: [RTCPSDESItem(type: .tool, text: "t"), RTCPSDESItem(type: .cname, text: "me@host")])
        #expect(chunk.cname == "me@host")
        #expect(RTCPSDESChunk(ssrc: 1, items: []).cname == nil)
        #expect(RTCPSDESItemType.cname.description == "CNAME")
    }

    // MARK: NTP

    @Test func ntpTimestampFromUnixTime() {
        let ntp = NTPTimestamp(secondsSince1970: 1_700_000_000.5)
        #expect(ntp.seconds == UInt32(1_700_000_000 + 2_208_988_800))
        #expect(ntp.fraction == 0x8000_0000)
        #expect(ntp.secondsSince1970 == 1_700_000_000.5)
        #expect(NTPTimestamp(rawValue: ntp.rawValue) == ntp)
    }

    @Test func middle32IsTheCompactForm() {
        let ntp = NTPTimestamp(seconds: 0xAABB_CCDD, fraction: 0x1122_3344)
        #expect(ntp.middle32 == 0xCCDD_1122)
        #expect(NTPTimestamp.compactDuration(seconds: 1.5) == 0x0001_8000)
        #expect(NTPTimestamp.compactDuration(seconds: -1) == 0)
        #expect(NTPTimestamp.seconds(compact: 0x0002_4000) == 2.25)
    }
}
