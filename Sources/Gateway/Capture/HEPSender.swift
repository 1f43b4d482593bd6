import Capture
import Foundation
import IOCore
import Media
import SIP

/// Where a HEP collector is and how we name ourselves to it (`irisgw serve --hep`, config
/// key `hep`).
public struct HEPSettings: Sendable, Equatable {
    /// The collector (HOMER's heplify-server, Kamailio's sipcapture, `sngrep -L`), UDP.
    public var collector: SocketAddress
    /// Our capture agent id (HEP chunk 0x000c). Default 2001.
    public var captureID: UInt32
    /// The collector's password (HEP chunk 0x000e), when it asks for one. Default none.
    public var authKey: String?

    public init(collector: SocketAddress, captureID: UInt32 = 2001, authKey: String? = nil) {
        self.collector = collector
        self.captureID = captureID
        self.authKey = authKey
    }
}

/// Sends copies of the gateway's SIP messages (HEP type 1) and of its trunk legs' RTCP
/// reports (type 5, the report as the JSON HOMER reads, correlated by Call-ID) to a HEP v3
/// collector over UDP. Sending never blocks: a datagram the socket cannot take is dropped.
final class HEPSender: Sendable {
    let settings: HEPSettings
    private let socket: UDPSocket
    private let destination: RawSocketAddress

    init(_ settings: HEPSettings) throws {
        self.settings = settings
        let any = SocketAddress(host: settings.collector.isIPv6 ? "::" : "0.0.0.0", port: 0)
        socket = try UDPSocket(bind: any, bufferBytes: 1 << 20)
        guard let to = RawSocketAddress(settings.collector) else {
            throw SocketError("HEP collector \(settings.collector) is not a numeric address", code: EINVAL)
        }
        destination = to
    }

    /// A SIP message as it crossed the wire.
    func sip(_ m: SIPWireMessage) {
        let (source, target) = m.direction == .sent ? (m.local, m.remote) : (m.remote, m.local)
        send(
            HEPPacket(
                time: m.time, source: source, destination: target, transport: m.transport == .udp ? .udp : .tcp,
                payloadType: .sip, captureID: settings.captureID, authKey: settings.authKey, correlationID: nil,
                payload: m.bytes))
    }

    /// An RTCP compound packet of a session whose SIP Call-ID is `callID`.
    func rtcp(_ bytes: [UInt8], sent: Bool, local: SocketAddress, remote: SocketAddress, time: Double, callID: String?)
    {
        guard let json = Self.rtcpJSON(bytes) else { return }
        send(
            HEPPacket(
                time: time, source: sent ? local : remote, destination: sent ? remote : local, transport: .udp,
                payloadType: .rtcpJSON, captureID: settings.captureID, authKey: settings.authKey,
                correlationID: callID, payload: Array(json.utf8)))
    }

    private func send(_ packet: HEPPacket) {
        let bytes = packet.encoded()
        _ = bytes.withUnsafeBytes { socket.send($0, to: destination) }
    }

    /// The first SR or RR of a compound packet in the JSON shape HOMER's RTCP view reads
    /// (as captagent and rtpengine send it); nil for anything else.
    static func rtcpJSON(_ bytes: [UInt8]) -> String? {
        guard let compound = try? RTCPCompoundPacket(parsing: bytes) else { return nil }
        var sdes: UInt32?
        var body: [String] = []
        for packet in compound.packets {
            switch packet {
            case .senderReport(let sr) where body.isEmpty:
                let ntp = sr.senderInfo.ntpTimestamp
                body.append(
                    "\"sender_information\":{\"ntp_timestamp_sec\":\(ntp.seconds),\"ntp_timestamp_usec\":\((UInt64(ntp.fraction) * 1_000_000) >> 32),"
                        + "\"octets\":\(sr.senderInfo.octetCount),\"rtp_timestamp\":\(sr.senderInfo.rtpTimestamp),\"packets\":\(sr.senderInfo.packetCount)}"
                )
                body.append("\"ssrc\":\(sr.ssrc),\"type\":200")
                body.append(
                    "\"report_count\":\(sr.reportBlocks.count),\"report_blocks\":[\(sr.reportBlocks.map(block).joined(separator: ","))]"
                )
            case .receiverReport(let rr) where body.isEmpty:
                body.append("\"ssrc\":\(rr.ssrc),\"type\":201")
                body.append(
                    "\"report_count\":\(rr.reportBlocks.count),\"report_blocks\":[\(rr.reportBlocks.map(block).joined(separator: ","))]"
                )
            case .sourceDescription(let sd):
                sdes = sdes ?? sd.chunks.first?.ssrc
            default:
                continue
            }
        }
        guard !body.isEmpty else { return nil }
        if let sdes { body.append("\"sdes_ssrc\":\(sdes)") }
        return "{" + body.joined(separator: ",") + "}"
    }

    private static func block(_ b: RTCPReportBlock) -> String {
        "{\"source_ssrc\":\(b.ssrc),\"fraction_lost\":\(b.fractionLost),\"packets_lost\":\(b.cumulativeLost),"
            + "\"highest_seq_no\":\(b.extendedHighestSequenceNumber),\"ia_jitter\":\(b.interarrivalJitter),"
            + "\"lsr\":\(b.lastSenderReport),\"dlsr\":\(b.delaySinceLastSenderReport)}"
    }
}
