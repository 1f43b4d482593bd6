import IOCore
import Testing

@testable import Capture

@Test(arguments: PcapCase.all)
func pcapRoundTrip(_ sample: PcapCase) throws {
    let reader = try PcapReader(bytes: sample.file)
    #expect(reader.linkType == 1)
    #expect(reader.packets.count == sample.packets.count)
    for (read, written) in zip(reader.packets, sample.packets) {
        // Times come back at the file's microsecond resolution.
        #expect(abs(read.time - written.time) < 1e-6)
        var expected = written
        expected.time = read.time
        #expect(read == expected)
    }
}

/// One IPv4 and one IPv6 address: both written as IPv6, the IPv4 one mapped.
@Test func mixedFamiliesAreWrittenAsIPv6() throws {
    let packet = CapturedPacket(
        time: Samples.time, source: SocketAddress(host: "192.0.2.10", port: 5060),
        destination: SocketAddress(host: "2001:db8::20", port: 5060), transport: .udp, payload: Samples.invite)
    var writer = PcapWriter()
    let reader = try PcapReader(bytes: PcapWriter.fileHeader() + writer.record(packet))
    #expect(reader.packets.first?.source == SocketAddress(host: "::ffff:192.0.2.10", port: 5060))
    #expect(reader.packets.first?.destination == packet.destination)
    #expect(reader.packets.first?.payload == packet.payload)
}

@Test func fileHeaderLayout() {
    #expect(
        PcapWriter.fileHeader() == [
            0xD4, 0xC3, 0xB2, 0xA1, 0x02, 0x00, 0x04, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0xFF, 0xFF, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00
        ])
}

/// Bytes 14... of an IPv4 record's frame: the header checksum verifies (sums to 0xFFFF).
@Test func ipv4HeaderChecksumVerifies() {
    var writer = PcapWriter()
    let record = writer.record(PcapCase.all[0].packets[0])
    var sum = InternetChecksum()
    sum.add(record[(16 + 14)..<(16 + 34)])
    #expect(sum.value == 0)
}

@Test func udpChecksumVerifiesOverPseudoHeader() {
    for packet in [PcapCase.all[0].packets[2], PcapCase.all[1].packets[0]] {
        var writer = PcapWriter()
        let record = writer.record(packet)
        let ipv6 = packet.source.isIPv6
        let ipStart = 16 + 14
        let udpStart = ipStart + (ipv6 ? 40 : 20)
        let udp = record[udpStart...]
        var sum = InternetChecksum()
        if ipv6 {
            sum.add(record[(ipStart + 8)..<(ipStart + 40)])
            sum.add(UInt32(udp.count))
            sum.add(UInt32(17))
        } else {
            sum.add(record[(ipStart + 12)..<(ipStart + 20)])
            sum.add(UInt16(17))
            sum.add(UInt16(udp.count))
        }
        sum.add(udp)
        #expect(sum.value == 0, "\(packet.source)")
        #expect(record[udpStart + 6] != 0 || record[udpStart + 7] != 0)
    }
}

@Test func tcpSequenceRunsPerDirection() {
    var writer = PcapWriter()
    let packets = PcapCase.all[2].packets
    let records = packets.map { writer.record($0) }
    func seqAck(_ record: [UInt8]) -> (UInt32, UInt32) {
        let tcp = 16 + 14 + 20
        return (record.bigEndianUInt32(at: tcp + 4), record.bigEndianUInt32(at: tcp + 8))
    }
    let inviteLength = UInt32(Samples.invite.count), okLength = UInt32(Samples.ok.count)
    #expect(seqAck(records[0]) == (1, 1))
    #expect(seqAck(records[1]) == (1, 1 + inviteLength))
    #expect(seqAck(records[2]) == (1 + inviteLength, 1 + okLength))
    #expect(records[0][16 + 14 + 20 + 13] == 0x18)
}

@Test func oversizedUDPPayloadIsCutToTheDatagramThenToSnapLength() throws {
    let payload = (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }
    let packet = CapturedPacket(
        time: Samples.time, source: SocketAddress(host: "192.0.2.1", port: 5060),
        destination: SocketAddress(host: "192.0.2.2", port: 5060), transport: .udp, payload: payload)
    var writer = PcapWriter()
    let record = writer.record(packet)
    let included = Int(record[8]) | Int(record[9]) << 8 | Int(record[10]) << 16
    let original = Int(record[12]) | Int(record[13]) << 8 | Int(record[14]) << 16
    #expect(original == 14 + 20 + 8 + 65_507)
    #expect(included == 65_535)
    #expect(record.count == 16 + 65_535)
    // IP total length and UDP length describe the 65507-byte datagram.
    #expect(record.bigEndianUInt16(at: 16 + 14 + 2) == 65_535)
    #expect(record.bigEndianUInt16(at: 16 + 34 + 4) == 65_515)

    let read = try PcapReader(bytes: PcapWriter.fileHeader() + record)
    #expect(read.packets.count == 1)
    #expect(read.packets.first?.payload == Array(payload.prefix(65_535 - 42)))
}

@Test func smallSnapLengthKeepsTheHeaders() throws {
    var writer = PcapWriter(snapLength: 60)
    let record = writer.record(PcapCase.all[0].packets[0])
    #expect(record.count == 16 + 60)
    let read = try PcapReader(bytes: PcapWriter.fileHeader(snapLength: 60) + record)
    #expect(read.packets.first?.payload == Array(Samples.invite.prefix(60 - 42)))
}

/// The same records, rewritten big-endian, with nanoseconds, and as raw IP / Linux cooked frames.
@Test(arguments: ["big-endian", "nanoseconds", "raw", "sll", "sll2", "vlan"])
func readerAcceptsOtherLayouts(_ layout: String) throws {
    let sample = PcapCase.all[0]
    var writer = PcapWriter()
    var file: [UInt8] = []
    func u32(_ value: UInt32, bigEndian: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        if bigEndian { bytes.appendBigEndian(value) } else { bytes.appendLittleEndian(value) }
        return bytes
    }
    let bigEndian = layout == "big-endian"
    let magic: UInt32 = layout == "nanoseconds" ? 0xA1B2_3C4D : 0xA1B2_C3D4
    let linkType: UInt32 = ["raw": 101, "sll": 113, "sll2": 276][layout] ?? 1
    file += u32(magic, bigEndian: bigEndian)
    file += bigEndian ? [0, 2, 0, 4] : [2, 0, 4, 0]
    file += [0, 0, 0, 0, 0, 0, 0, 0] + u32(65535, bigEndian: bigEndian) + u32(linkType, bigEndian: bigEndian)
    for packet in sample.packets {
        let record = writer.record(packet)
        let ip = Array(record[(16 + 14)...])
        let ethertype = Array(record[(16 + 12)..<(16 + 14)])
        let frame: [UInt8]
        switch layout {
        case "raw": frame = ip
        case "sll": frame = [0, 0, 0, 1, 0, 6] + [UInt8](repeating: 0, count: 8) + ethertype + ip
        case "sll2": frame = ethertype + [0, 0, 0, 0, 0, 1, 0, 1, 0, 6] + [UInt8](repeating: 0, count: 8) + ip
        case "vlan": frame = Array(record[16..<(16 + 12)]) + [0x81, 0x00, 0x00, 0x64] + ethertype + ip
        default: frame = Array(record[16...])
        }
        let split = SplitTime(packet.time, unitsPerSecond: layout == "nanoseconds" ? 1e9 : 1e6)
        file += u32(split.seconds, bigEndian: bigEndian) + u32(split.fraction, bigEndian: bigEndian)
        file += u32(UInt32(frame.count), bigEndian: bigEndian) + u32(UInt32(frame.count), bigEndian: bigEndian)
        file += frame
    }
    let reader = try PcapReader(bytes: file)
    #expect(reader.nanosecondTimestamps == (layout == "nanoseconds"))
    #expect(reader.packets.count == sample.packets.count)
    for (read, written) in zip(reader.packets, sample.packets) {
        #expect(read.payload == written.payload)
        #expect(read.source == written.source)
        #expect(read.destination == written.destination)
        #expect(abs(read.time - written.time) < 1e-6)
    }
}

@Test func cutFileThrowsExceptAtRecordBoundaries() throws {
    let file = PcapCase.all[2].file
    var boundaries: Set<Int> = [24]
    var offset = 24
    while offset < file.count {
        offset += 16 + (Int(file[offset + 8]) | Int(file[offset + 9]) << 8)
        boundaries.insert(offset)
    }
    for length in 0..<file.count {
        let cut = Array(file.prefix(length))
        do {
            let reader = try PcapReader(bytes: cut)
            #expect(boundaries.contains(length), "a file cut at \(length) read without an error")
            #expect(reader.packets.count == boundaries.filter { $0 <= length }.count - 1)
        } catch {
            #expect(!boundaries.contains(length), "cut at a record boundary \(length): \(error)")
            #expect(error.offset <= length)
        }
    }
}

@Test func garbageThrowsOrSkipsNeverCrashes() {
    var generator = SplitMix64(seed: 0xC0FFEE)
    for round in 0..<300 {
        let count = Int(generator.next() % 600)
        let random = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        #expect(throws: PcapError.self, "random bytes, round \(round)") { try PcapReader(bytes: random) }
        // A valid header then garbage: whatever the reader makes of it, it does not crash.
        let framed = PcapWriter.fileHeader() + random
        _ = try? PcapReader(bytes: framed)
        // A valid file with its frames scrambled: the records still frame, the packets may go.
        var scrambled = PcapCase.all[round % PcapCase.all.count].file
        for _ in 0..<20 {
            let index = 24 + 16 + Int(generator.next() % UInt64(scrambled.count - 40))
            scrambled[index] = UInt8(truncatingIfNeeded: generator.next())
        }
        _ = try? PcapReader(bytes: scrambled)
    }
}

@Test func errorsNameWhatAndWhere() {
    #expect(throws: PcapError(offset: 0, reason: "magic 0x00010203 is not a libpcap magic number")) {
        try PcapReader(bytes: [0, 1, 2, 3] + [UInt8](repeating: 0, count: 20))
    }
    var file = PcapCase.all[0].file
    file.removeLast()
    do {
        _ = try PcapReader(bytes: file)
        Issue.record("a cut record was read")
    } catch {
        #expect(error.description.contains("runs past the end"))
        #expect(error.description.contains("at byte"))
    }
}

/// A small deterministic generator for the garbage tests.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
