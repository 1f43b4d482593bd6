import IOCore
import Testing

@testable import Capture

/// Packets a call puts on the wire: SIP text and RTP with a PCMU payload.
enum Samples {
    static let callID = "a84b4c76e66710@pc33.example.com"

    static let invite: [UInt8] = Array(
        ("INVITE sip:bob@biloxi.example.com SIP/2.0\r\n"
            + "Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds\r\n" + "Max-Forwards: 70\r\n"
            + "To: Bob <sip:bob@biloxi.example.com>\r\n"
            + "From: Alice <sip:alice@atlanta.example.com>;tag=1928301774\r\n" + "Call-ID: \(callID)\r\n"
            + "CSeq: 314159 INVITE\r\n" + "Contact: <sip:alice@192.0.2.10:5060>\r\n"
            + "Content-Type: application/sdp\r\n" + "Content-Length: 0\r\n\r\n").utf8)

    static let ok: [UInt8] = Array(
        ("SIP/2.0 200 OK\r\n" + "Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds\r\n"
            + "To: Bob <sip:bob@biloxi.example.com>;tag=a6c85cf\r\n"
            + "From: Alice <sip:alice@atlanta.example.com>;tag=1928301774\r\n" + "Call-ID: \(callID)\r\n"
            + "CSeq: 314159 INVITE\r\n" + "Contact: <sip:bob@192.0.2.20:5060>\r\n" + "Content-Length: 0\r\n\r\n").utf8)

    static let rtpSSRC: UInt32 = 0x1234_5678

    /// RTP (RFC 3550 §5.1): V=2, PT 0 (PCMU), `sequence`, timestamp 160 per packet, SSRC,
    /// then 160 µ-law bytes (20 ms of a tone).
    static func rtp(sequence: UInt16) -> [UInt8] {
        var bytes: [UInt8] = [0x80, 0x00, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        let timestamp = UInt32(sequence) * 160
        bytes += [
            UInt8(timestamp >> 24), UInt8((timestamp >> 16) & 0xFF), UInt8((timestamp >> 8) & 0xFF),
            UInt8(timestamp & 0xFF)
        ]
        bytes += [
            UInt8(rtpSSRC >> 24), UInt8((rtpSSRC >> 16) & 0xFF), UInt8((rtpSSRC >> 8) & 0xFF), UInt8(rtpSSRC & 0xFF)
        ]
        bytes += (0..<160).map { UInt8(truncatingIfNeeded: 0x80 + ($0 % 16) * 3) }
        return bytes
    }

    static let time = 1_718_000_000.25
    static let rtpPort = 40_000
}

/// One case of the pcap round trip.
struct PcapCase: Sendable, CustomTestStringConvertible {
    var name: String
    var packets: [CapturedPacket]
    var testDescription: String { name }
}

extension PcapCase {
    static let all: [PcapCase] = [
        PcapCase(
            name: "IPv4 UDP SIP and RTP",
            packets: [
                CapturedPacket(
                    time: Samples.time, source: SocketAddress(host: "192.0.2.10", port: 5060),
                    destination: SocketAddress(host: "192.0.2.20", port: 5060), transport: .udp, payload: Samples.invite
                ),
                CapturedPacket(
                    time: Samples.time + 0.5, source: SocketAddress(host: "192.0.2.20", port: 5060),
                    destination: SocketAddress(host: "192.0.2.10", port: 5060), transport: .udp, payload: Samples.ok),
                CapturedPacket(
                    time: Samples.time + 1, source: SocketAddress(host: "192.0.2.10", port: Samples.rtpPort),
                    destination: SocketAddress(host: "192.0.2.20", port: Samples.rtpPort + 2), transport: .udp,
                    payload: Samples.rtp(sequence: 1)),
                CapturedPacket(
                    time: Samples.time + 1.02, source: SocketAddress(host: "192.0.2.10", port: Samples.rtpPort),
                    destination: SocketAddress(host: "192.0.2.20", port: Samples.rtpPort + 2), transport: .udp,
                    payload: Samples.rtp(sequence: 2))
            ]),
        PcapCase(
            name: "IPv6 UDP SIP and RTP",
            packets: [
                CapturedPacket(
                    time: Samples.time, source: SocketAddress(host: "2001:db8::10", port: 5060),
                    destination: SocketAddress(host: "2001:db8::20", port: 5062), transport: .udp,
                    payload: Samples.invite),
                CapturedPacket(
                    time: Samples.time + 0.125, source: SocketAddress(host: "2001:db8::20", port: 5062),
                    destination: SocketAddress(host: "2001:db8::10", port: 5060), transport: .udp, payload: Samples.ok),
                CapturedPacket(
                    time: Samples.time + 1, source: SocketAddress(host: "2001:db8::10", port: Samples.rtpPort),
                    destination: SocketAddress(host: "2001:db8::20", port: Samples.rtpPort + 2), transport: .udp,
                    payload: Samples.rtp(sequence: 7))
            ]),
        PcapCase(
            name: "IPv4 TCP SIP both ways",
            packets: [
                CapturedPacket(
                    time: Samples.time, source: SocketAddress(host: "192.0.2.10", port: 50_123),
                    destination: SocketAddress(host: "192.0.2.20", port: 5060), transport: .tcp, payload: Samples.invite
                ),
                CapturedPacket(
                    time: Samples.time + 0.25, source: SocketAddress(host: "192.0.2.20", port: 5060),
                    destination: SocketAddress(host: "192.0.2.10", port: 50_123), transport: .tcp, payload: Samples.ok),
                CapturedPacket(
                    time: Samples.time + 0.5, source: SocketAddress(host: "192.0.2.10", port: 50_123),
                    destination: SocketAddress(host: "192.0.2.20", port: 5060), transport: .tcp, payload: Samples.invite
                )
            ])
    ]

    /// The whole file: global header and one record per packet.
    var file: [UInt8] {
        var writer = PcapWriter()
        var bytes = PcapWriter.fileHeader()
        for packet in packets { bytes += writer.record(packet) }
        return bytes
    }
}
