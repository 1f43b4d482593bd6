import Glibc
import IOCore
import Testing

@testable import Capture

extension HEPPacket {
    static let samples: [HEPPacket] = [
        HEPPacket(
            time: Samples.time, source: SocketAddress(host: "192.0.2.10", port: 5060),
            destination: SocketAddress(host: "192.0.2.20", port: 5060), transport: .udp,
            payloadType: .sip, captureID: 2001, payload: Samples.invite),
        HEPPacket(
            time: Samples.time + 0.5, source: SocketAddress(host: "2001:db8::20", port: 5061),
            destination: SocketAddress(host: "2001:db8::10", port: 50_123), transport: .tcp,
            payloadType: .sip, captureID: 0xFFFF_FFFF, authKey: "s3cret", payload: Samples.ok),
        HEPPacket(
            time: Samples.time + 5, source: SocketAddress(host: "192.0.2.10", port: Samples.rtpPort + 1),
            destination: SocketAddress(host: "192.0.2.20", port: Samples.rtpPort + 3), transport: .udp,
            payloadType: .rtcpJSON, captureID: 7, correlationID: Samples.callID,
            payload: Array(#"{"type":200,"ssrc":305419896,"report_count":0}"#.utf8))
    ]
}

@Test(arguments: HEPPacket.samples)
func hepRoundTrip(_ packet: HEPPacket) throws {
    let bytes = packet.encoded()
    #expect(Array(bytes.prefix(4)) == Array("HEP3".utf8))
    #expect(Int(bytes.bigEndianUInt16(at: 4)) == bytes.count)
    #expect(try HEPPacket(decoding: bytes) == packet)
}

/// One small packet written out chunk by chunk from the specification's layout.
@Test func hepEncodingMatchesTheSpecificationLayout() {
    let packet = HEPPacket(
        time: 1_700_000_000.5, source: SocketAddress(host: "10.0.0.1", port: 5060),
        destination: SocketAddress(host: "10.0.0.2", port: 5080), transport: .udp,
        payloadType: .sip, captureID: 100, authKey: "key", correlationID: "c1", payload: Array("OPTIONS".utf8))
    let expected: [UInt8] = [
        0x48, 0x45, 0x50, 0x33, 0x00, 0x7B,  // "HEP3", total length 123
        0x00, 0x00, 0x00, 0x01, 0x00, 0x07, 0x02,  // IP family: AF_INET
        0x00, 0x00, 0x00, 0x02, 0x00, 0x07, 0x11,  // IP protocol: UDP
        0x00, 0x00, 0x00, 0x07, 0x00, 0x08, 0x13, 0xC4,  // source port 5060
        0x00, 0x00, 0x00, 0x08, 0x00, 0x08, 0x13, 0xD8,  // destination port 5080
        0x00, 0x00, 0x00, 0x09, 0x00, 0x0A, 0x65, 0x53, 0xF1, 0x00,  // seconds 1700000000
        0x00, 0x00, 0x00, 0x0A, 0x00, 0x0A, 0x00, 0x07, 0xA1, 0x20,  // microseconds 500000
        0x00, 0x00, 0x00, 0x0B, 0x00, 0x07, 0x01,  // protocol type: SIP
        0x00, 0x00, 0x00, 0x0C, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x64,  // capture ID 100
        0x00, 0x00, 0x00, 0x03, 0x00, 0x0A, 10, 0, 0, 1,  // IPv4 source
        0x00, 0x00, 0x00, 0x04, 0x00, 0x0A, 10, 0, 0, 2,  // IPv4 destination
        0x00, 0x00, 0x00, 0x0E, 0x00, 0x09, 0x6B, 0x65, 0x79,  // auth key "key"
        0x00, 0x00, 0x00, 0x11, 0x00, 0x08, 0x63, 0x31,  // correlation ID "c1"
        0x00, 0x00, 0x00, 0x0F, 0x00, 0x0D,  // payload "OPTIONS"
        0x4F, 0x50, 0x54, 0x49, 0x4F, 0x4E, 0x53
    ]
    #expect(expected.count == 123)
    #expect(packet.encoded() == expected)
}

@Test func hepDecoderSkipsUnknownAndVendorChunks() throws {
    let packet = HEPPacket.samples[0]
    var bytes = packet.encoded()
    // A vendor chunk (Kamailio, 0x0002) and an unknown generic one (0x0013 capture agent name).
    let extra: [UInt8] = [
        0x00, 0x02, 0x00, 0x01, 0x00, 0x08, 0xAB, 0xCD,
        0x00, 0x00, 0x00, 0x13, 0x00, 0x0A, 0x6E, 0x6F, 0x64, 0x65
    ]
    bytes.insert(contentsOf: extra, at: 6)
    bytes.storeBigEndian(UInt16(bytes.count), at: 4)
    #expect(try HEPPacket(decoding: bytes) == packet)
}

@Test func hepTruncatedOrGarbageThrows() {
    let bytes = HEPPacket.samples[0].encoded()
    for length in 0..<bytes.count {
        #expect(throws: HEPError.self, "cut at \(length)") { try HEPPacket(decoding: Array(bytes.prefix(length))) }
        // The same cut with the total length patched to agree: the chunk walk must notice.
        if length >= 6 {
            var patched = Array(bytes.prefix(length))
            patched.storeBigEndian(UInt16(length), at: 4)
            #expect(throws: HEPError.self, "cut at \(length), length patched") { try HEPPacket(decoding: patched) }
        }
    }
    var generator = SplitMix64(seed: 42)
    for round in 0..<500 {
        let count = Int(generator.next() % 300)
        var random = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        #expect(throws: HEPError.self, "random \(round)") { try HEPPacket(decoding: random) }
        // "HEP3" and a right total length, then garbage chunks: an error or a packet, never a crash.
        if count >= 6 {
            random.replaceSubrange(0..<4, with: Array("HEP3".utf8))
            random.storeBigEndian(UInt16(count), at: 4)
            _ = try? HEPPacket(decoding: random)
        }
    }
    // A chunk length shorter than its header, and one that runs past the end.
    var short = bytes
    short.storeBigEndian(UInt16(3), at: 6 + 4)
    #expect(throws: HEPError(offset: 10, reason: "chunk length 3 is shorter than the chunk header")) {
        try HEPPacket(decoding: short)
    }
    var long = bytes
    long.storeBigEndian(UInt16(0xFFF0), at: 6 + 4)
    #expect(throws: HEPError.self) { try HEPPacket(decoding: long) }
}

/// A HEP packet sent over a real UDP socket on 127.0.0.1 arrives whole and decodes.
@Test func hepSurvivesAUDPSocket() throws {
    let receiver = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
    let sender = try UDPSocket(bind: SocketAddress(host: "127.0.0.1", port: 0))
    #expect(receiver.local.port != 0)
    let destination = try #require(RawSocketAddress(receiver.local))
    for packet in HEPPacket.samples {
        let bytes = packet.encoded()
        #expect(bytes.withUnsafeBytes { sender.send($0, to: destination) })
        let datagram = try #require(receiveDatagram(on: receiver, timeout: 5), "no datagram within 5 s")
        #expect(datagram == bytes)
        #expect(try HEPPacket(decoding: datagram) == packet)
    }
}

/// One datagram from a nonblocking socket, waiting at most `timeout` seconds.
func receiveDatagram(on socket: UDPSocket, timeout: Double) -> [UInt8]? {
    var descriptor = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
    guard poll(&descriptor, 1, Int32(timeout * 1000)) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var from = RawSocketAddress()
    let count = buffer.withUnsafeMutableBytes { socket.receive(into: $0, from: &from) }
    guard let count else { return nil }
    return Array(buffer.prefix(count))
}
