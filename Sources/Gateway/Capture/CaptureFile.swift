import Capture
import IOCore
import SIP
import Synchronization

/// A session's capture as a libpcap file (Ethernet framing, the format tshark, Wireshark
/// and sngrep read): its SIP messages from the trace, as they crossed the wire (credentials
/// redacted), and its RTP and RTCP, in time order. SIP over TCP or TLS is written as TCP
/// segments carrying the plain messages.
///
/// The file is written out as a stream: its length is known up front (for Content-Length),
/// and `write(into:upTo:)` appends the next records as the reader takes them. What it holds
/// meanwhile is the snapshot of the capture (whose chunks it shares, not copies) and a small
/// index that puts the packets in time order (time and where each one is): never the file.
public final class CaptureFile: Sendable {
    /// Where one packet of the file is: a trace entry, or a media packet (its chunk and
    /// offset in `CapturedMedia`).
    private struct Slot {
        var time: Double
        var sip: Int32
        var chunk: Int32
        var offset: Int32
    }

    private struct Source: Sendable {
        let sip: [SIPTrace.Entry]
        let addresses: [(source: SocketAddress, destination: SocketAddress)?]
        let media: CapturedMedia
        /// Slots in file order.
        let order: [Slot]
    }

    private struct Cursor {
        var headerWritten = false
        var next = 0
        var writer = PcapWriter()
    }

    private let source: Source
    private let cursor = Mutex(Cursor())
    /// The file's length in bytes.
    public let length: Int

    init(sip: [SIPTrace.Entry], media: CapturedMedia) {
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
        let order = slots.indices.sorted { (slots[$0].time, $0) < (slots[$1].time, $1) }.map { slots[$0] }
        source = Source(sip: sip, addresses: addresses, media: media, order: order)
        let writer = PcapWriter()
        var size = PcapWriter.fileHeader().count
        for slot in order { size += Self.recordLength(slot, source, writer) }
        length = size
    }

    private static func recordLength(_ slot: Slot, _ s: Source, _ writer: PcapWriter) -> Int {
        if slot.sip >= 0 {
            let e = s.sip[Int(slot.sip)]
            let a = s.addresses[Int(slot.sip)]!
            return writer.recordLength(
                payloadLength: e.text.utf8.count, source: a.source, destination: a.destination,
                transport: e.transport == "UDP" ? .udp : .tcp)
        }
        let r = s.media.record(chunk: Int(slot.chunk), offset: Int(slot.offset))
        return writer.recordLength(
            payloadLength: r.bytes.count, source: r.source, destination: r.destination, transport: .udp)
    }

    /// Appends the next part of the file to `out`: whole records until about `bytes` were
    /// added (at least one). Returns false once the whole file has been written.
    public func write(into out: inout [UInt8], upTo bytes: Int) -> Bool {
        cursor.withLock { c in
            let start = out.count
            if !c.headerWritten {
                out += PcapWriter.fileHeader()
                c.headerWritten = true
            }
            let s = source
            while c.next < s.order.count, out.count - start < bytes {
                let slot = s.order[c.next]
                c.next += 1
                if slot.sip >= 0 {
                    let e = s.sip[Int(slot.sip)]
                    let a = s.addresses[Int(slot.sip)]!
                    c.writer.appendRecord(
                        time: e.time, source: a.source, destination: a.destination,
                        transport: e.transport == "UDP" ? .udp : .tcp, payload: Array(e.text.utf8)[...], to: &out)
                } else {
                    let r = s.media.record(chunk: Int(slot.chunk), offset: Int(slot.offset))
                    c.writer.appendRecord(
                        time: r.time, source: r.source, destination: r.destination, transport: .udp,
                        payload: r.bytes, to: &out)
                }
            }
            return c.next < s.order.count
        }
    }

    /// The whole file in one buffer (tests, small captures).
    public func bytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(length)
        while write(into: &out, upTo: 1 << 20) {}
        return out
    }
}
