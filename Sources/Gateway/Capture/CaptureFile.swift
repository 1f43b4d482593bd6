import Capture
import IOCore
import SIP

/// A session's capture as a libpcap file (Ethernet framing, the format tshark, Wireshark
/// and sngrep read): its SIP messages from the trace, as they crossed the wire (credentials
/// redacted), and its RTP and RTCP, in time order. SIP over TCP or TLS is written as TCP
/// segments carrying the plain messages.
///
/// The file is written once into one buffer of its exact size: the packets are put in
/// order through a small index (time and where each one is), not by copying them.
enum CaptureFile {
    /// Where one packet of the file is: a trace entry, or a media packet (its chunk and
    /// offset in `CapturedMedia`).
    private struct Slot {
        var time: Double
        var sip: Int32
        var chunk: Int32
        var offset: Int32
    }

    static func pcap(sip: [SIPTrace.Entry], media: CapturedMedia) -> [UInt8] {
        var slots: [Slot] = []
        slots.reserveCapacity(sip.count + media.count)
        var addresses: [(source: SocketAddress, destination: SocketAddress)?] = []
        addresses.reserveCapacity(sip.count)
        for (i, e) in sip.enumerated() {
            guard let local = SocketAddress.parse(e.local), let remote = SocketAddress.parse(e.remote) else {
                addresses.append(nil)
                continue
            }
            addresses.append(e.direction == .sent ? (local, remote) : (remote, local))
            slots.append(Slot(time: e.time, sip: Int32(i), chunk: -1, offset: 0))
        }
        media.forEachLocation { time, chunk, offset in
            slots.append(Slot(time: time, sip: -1, chunk: Int32(chunk), offset: Int32(offset)))
        }
        // Stable: packets with the same time keep their order (trace first, as it was).
        let order = slots.indices.sorted { (slots[$0].time, $0) < (slots[$1].time, $1) }

        var writer = PcapWriter()
        var size = 24
        for slot in slots {
            if slot.sip >= 0 {
                let e = sip[Int(slot.sip)]
                let a = addresses[Int(slot.sip)]!
                size += writer.recordLength(payloadLength: e.text.utf8.count, source: a.source, destination: a.destination,
                                            transport: e.transport == "UDP" ? .udp : .tcp)
            } else {
                let r = media.record(chunk: Int(slot.chunk), offset: Int(slot.offset))
                size += writer.recordLength(payloadLength: r.bytes.count, source: r.source, destination: r.destination, transport: .udp)
            }
        }
        var out = PcapWriter.fileHeader()
        out.reserveCapacity(size)
        for i in order {
            let slot = slots[i]
            if slot.sip >= 0 {
                let e = sip[Int(slot.sip)]
                let a = addresses[Int(slot.sip)]!
                writer.appendRecord(time: e.time, source: a.source, destination: a.destination, transport: e.transport == "UDP" ? .udp : .tcp,
                                    payload: Array(e.text.utf8)[...], to: &out)
            } else {
                let r = media.record(chunk: Int(slot.chunk), offset: Int(slot.offset))
                writer.appendRecord(time: r.time, source: r.source, destination: r.destination, transport: .udp, payload: r.bytes, to: &out)
            }
        }
        return out
    }
}
