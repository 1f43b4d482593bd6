import Capture
import IOCore
import SIP

/// A session's capture as a libpcap file (Ethernet framing, the format tshark, Wireshark
/// and sngrep read): its SIP messages from the trace, as they crossed the wire (credentials
/// redacted), and its RTP and RTCP, in time order. SIP over TCP or TLS is written as TCP
/// segments carrying the plain messages.
enum CaptureFile {
    static func pcap(sip: [SIPTrace.Entry], media: [SessionCapture.MediaRecord]) -> [UInt8] {
        var packets: [CapturedPacket] = []
        packets.reserveCapacity(sip.count + media.count)
        for e in sip {
            guard let local = SocketAddress.parse(e.local), let remote = SocketAddress.parse(e.remote) else { continue }
            let (source, destination) = e.direction == .sent ? (local, remote) : (remote, local)
            packets.append(CapturedPacket(time: e.time, source: source, destination: destination,
                                          transport: e.transport == "UDP" ? .udp : .tcp, payload: Array(e.text.utf8)))
        }
        for m in media {
            packets.append(CapturedPacket(time: m.time, source: m.source, destination: m.destination, transport: .udp, payload: m.bytes))
        }
        // Stable: messages with the same time keep their order.
        let ordered = packets.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        var writer = PcapWriter()
        var out = PcapWriter.fileHeader()
        for p in ordered { out += writer.record(p) }
        return out
    }
}
