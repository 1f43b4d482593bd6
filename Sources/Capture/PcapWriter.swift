import IOCore

/// Writes libpcap classic capture files (not pcapng) byte by byte, without libpcap: each
/// captured payload is wrapped in made-up Ethernet, IP and UDP/TCP headers that Wireshark,
/// tshark and sngrep decode, with every checksum right.
///
/// Global header (24 bytes, little-endian here; readers detect the order from the magic):
///
///      0                   1                   2                   3
///      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                  magic 0xa1b2c3d4 (microseconds)              |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |       major version 2         |       minor version 4         |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                thiszone (0: timestamps are UTC)               |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                          sigfigs (0)                          |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                           snaplen                             |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                 link type (1: LINKTYPE_ETHERNET)              |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///
/// Record (16-byte header, then `incl_len` bytes of the frame):
///
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                 ts_sec (seconds since 1970)                   |
///     |                 ts_usec (microseconds)                        |
///     |                 incl_len (bytes saved, <= snaplen)            |
///     |                 orig_len (bytes the frame had)                |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     | Ethernet: dst MAC 0, src MAC 0, ethertype 0x0800 / 0x86DD     |
///     | IPv4 (RFC 791, 20 bytes) or IPv6 (RFC 8200, 40 bytes)         |
///     | UDP (RFC 768, 8 bytes) or TCP (RFC 9293, 20 bytes)            |
///     | payload                                                       |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///
/// A packet whose addresses are both IPv4 goes out as IPv4; when either is IPv6 both are
/// written as IPv6 (an IPv4 one mapped to `::ffff:a.b.c.d`). A host that is not numeric is
/// written as the unspecified address.
///
/// A payload bigger than the IP length field can describe (65507 bytes for IPv4/UDP, 65495
/// for IPv4/TCP, 65527 and 65515 over IPv6) is cut to that size; a frame longer than
/// `snapLength` is saved cut, with `orig_len` the whole frame's length.
public struct PcapWriter: Sendable {
    /// The most bytes of one frame a record keeps.
    public let snapLength: Int

    /// TCP: the next sequence number of each direction of each flow.
    private var nextSequence: [FlowDirection: UInt32] = [:]
    /// The IPv4 identification of the next datagram.
    private var nextIdentification: UInt16 = 1

    private struct FlowDirection: Hashable, Sendable {
        var source: SocketAddress
        var destination: SocketAddress
        var reversed: FlowDirection { FlowDirection(source: destination, destination: source) }
    }

    static let ethernetHeaderLength = 14
    static let ipv4HeaderLength = 20
    static let ipv6HeaderLength = 40
    static let udpHeaderLength = 8
    static let tcpHeaderLength = 20

    public init(snapLength: Int = 65535) {
        self.snapLength = max(1, snapLength)
    }

    /// The 24-byte global header (magic 0xa1b2c3d4 microseconds, version 2.4, LINKTYPE_ETHERNET = 1).
    public static func fileHeader(snapLength: Int = 65535) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        bytes.appendLittleEndian(UInt32(0xA1B2_C3D4))
        bytes.appendLittleEndian(UInt16(2))
        bytes.appendLittleEndian(UInt16(4))
        bytes.appendLittleEndian(UInt32(0))  // thiszone
        bytes.appendLittleEndian(UInt32(0))  // sigfigs
        bytes.appendLittleEndian(UInt32(clamping: max(1, snapLength)))
        bytes.appendLittleEndian(UInt32(1))  // LINKTYPE_ETHERNET
        return bytes
    }

    /// One record: record header + Ethernet (zero MACs, ethertype IPv4 0x0800 or IPv6 0x86DD)
    /// + IPv4/IPv6 header + UDP or TCP header + payload.
    ///
    /// The IPv4 header checksum, the UDP checksum (over IPv4 too) and the TCP checksum are
    /// computed. TCP keeps a running sequence number per direction of each flow (the first
    /// segment of a direction starts at 1), flags PSH|ACK, ack = the other direction's next
    /// sequence number; the whole payload is one segment.
    public mutating func record(_ packet: CapturedPacket) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(
            recordLength(
                payloadLength: packet.payload.count, source: packet.source,
                destination: packet.destination, transport: packet.transport))
        appendRecord(
            time: packet.time, source: packet.source, destination: packet.destination, transport: packet.transport,
            payload: packet.payload[...], to: &out)
        return out
    }

    /// The bytes `appendRecord` adds for a payload of `payloadLength` bytes: a whole file's
    /// size is known before any of it is written.
    public func recordLength(
        payloadLength: Int, source: SocketAddress, destination: SocketAddress, transport: CapturedProtocol
    ) -> Int {
        let l = Layout(payloadLength: payloadLength, source: source, destination: destination, transport: transport)
        return 16 + min(l.frameLength, snapLength)
    }

    /// A frame's header sizes, and how much of the payload fits.
    private struct Layout {
        var ipv6: Bool
        var ipHeaderLength: Int
        var transportHeaderLength: Int
        var payloadLength: Int
        var transportLength: Int { transportHeaderLength + payloadLength }
        var frameLength: Int { PcapWriter.ethernetHeaderLength + ipHeaderLength + transportLength }

        init(payloadLength: Int, source: SocketAddress, destination: SocketAddress, transport: CapturedProtocol) {
            ipv6 = source.isIPv6 || destination.isIPv6
            ipHeaderLength = ipv6 ? PcapWriter.ipv6HeaderLength : PcapWriter.ipv4HeaderLength
            transportHeaderLength = transport == .udp ? PcapWriter.udpHeaderLength : PcapWriter.tcpHeaderLength
            // IPv4 total length and the UDP length are 16 bits and count the headers; the IPv6
            // payload length counts only what follows the fixed header.
            let maxPayload = 65535 - transportHeaderLength - (ipv6 ? 0 : ipHeaderLength)
            self.payloadLength = min(payloadLength, maxPayload)
        }
    }

    /// `record`, written at the end of `out` (no record of its own in between), so a file
    /// is built in one buffer.
    public mutating func appendRecord(
        time packetTime: Double, source: SocketAddress, destination: SocketAddress, transport: CapturedProtocol,
        payload: ArraySlice<UInt8>, to out: inout [UInt8]
    ) {
        let layout = Layout(
            payloadLength: payload.count, source: source, destination: destination, transport: transport)
        let (ipv6, payloadLength, transportLength, frameLength) = (
            layout.ipv6, layout.payloadLength, layout.transportLength, layout.frameLength
        )
        let saved = min(frameLength, snapLength)

        let sourceAddress = ipv6 ? IPAddressBytes.ipv6Bytes(of: source.host) : IPAddressBytes.ipv4Bytes(of: source.host)
        let destinationAddress =
            ipv6 ? IPAddressBytes.ipv6Bytes(of: destination.host) : IPAddressBytes.ipv4Bytes(of: destination.host)

        let time = SplitTime(packetTime, unitsPerSecond: 1_000_000)
        out.appendLittleEndian(time.seconds)
        out.appendLittleEndian(time.fraction)
        out.appendLittleEndian(UInt32(saved))
        out.appendLittleEndian(UInt32(frameLength))

        // Ethernet II: destination and source MAC zero, then the ethertype.
        out.append(contentsOf: repeatElement(0, count: 12))
        out.appendBigEndian(UInt16(ipv6 ? 0x86DD : 0x0800))

        if ipv6 {
            appendIPv6Header(
                to: &out, payloadLength: transportLength, nextHeader: transport.ipProtocolNumber,
                source: sourceAddress, destination: destinationAddress)
        } else {
            appendIPv4Header(
                to: &out, totalLength: Self.ipv4HeaderLength + transportLength,
                protocolNumber: transport.ipProtocolNumber,
                source: sourceAddress, destination: destinationAddress)
        }

        let transportStart = out.count
        let sourcePort = UInt16(truncatingIfNeeded: source.port)
        let destinationPort = UInt16(truncatingIfNeeded: destination.port)
        switch transport {
        case .udp:
            // RFC 768: source port, destination port, length, checksum.
            out.appendBigEndian(sourcePort)
            out.appendBigEndian(destinationPort)
            out.appendBigEndian(UInt16(transportLength))
            out.appendBigEndian(UInt16(0))
        case .tcp:
            let direction = FlowDirection(source: source, destination: destination)
            let sequence = nextSequence[direction] ?? 1
            let acknowledgement = nextSequence[direction.reversed] ?? 1
            nextSequence[direction] = sequence &+ UInt32(payloadLength)
            if nextSequence[direction.reversed] == nil { nextSequence[direction.reversed] = acknowledgement }
            // RFC 9293 §3.1: ports, sequence, acknowledgement, data offset 5 words, flags,
            // window, checksum, urgent pointer.
            out.appendBigEndian(sourcePort)
            out.appendBigEndian(destinationPort)
            out.appendBigEndian(sequence)
            out.appendBigEndian(acknowledgement)
            out.append(UInt8(Self.tcpHeaderLength / 4) << 4)
            out.append(0x18)  // PSH | ACK
            out.appendBigEndian(UInt16(65535))
            out.appendBigEndian(UInt16(0))
            out.appendBigEndian(UInt16(0))
        }
        out.append(contentsOf: payload.prefix(payloadLength))

        // The transport checksum covers a pseudo-header (RFC 768, RFC 9293 §3.1; RFC 8200 §8.1).
        var checksum = InternetChecksum()
        checksum.add(sourceAddress)
        checksum.add(destinationAddress)
        if ipv6 {
            checksum.add(UInt32(transportLength))
            checksum.add(UInt32(transport.ipProtocolNumber))
        } else {
            checksum.add(UInt16(transport.ipProtocolNumber))
            checksum.add(UInt16(transportLength))
        }
        checksum.add(out[transportStart...])
        var transportChecksum = checksum.value
        // UDP sends a computed zero as all ones (zero means "no checksum").
        if transport == .udp, transportChecksum == 0 { transportChecksum = 0xFFFF }
        out.storeBigEndian(transportChecksum, at: transportStart + (transport == .udp ? 6 : 16))
        // A frame past the snap length is saved cut.
        if saved < frameLength { out.removeLast(frameLength - saved) }
    }

    ///     0                   1                   2                   3
    ///     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    ///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    ///    |Version|  IHL  |Type of Service|          Total Length         |
    ///    |         Identification        |Flags|      Fragment Offset    |
    ///    |  Time to Live |    Protocol   |         Header Checksum       |
    ///    |                       Source Address                          |
    ///    |                    Destination Address                        |
    ///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    private mutating func appendIPv4Header(
        to frame: inout [UInt8], totalLength: Int, protocolNumber: UInt8, source: [UInt8], destination: [UInt8]
    ) {
        let start = frame.count
        frame.append(0x45)
        frame.append(0)
        frame.appendBigEndian(UInt16(totalLength))
        frame.appendBigEndian(nextIdentification)
        nextIdentification &+= 1
        frame.appendBigEndian(UInt16(0x4000))  // don't fragment, offset 0
        frame.append(64)
        frame.append(protocolNumber)
        frame.appendBigEndian(UInt16(0))
        frame.append(contentsOf: source)
        frame.append(contentsOf: destination)
        var checksum = InternetChecksum()
        checksum.add(frame[start...])
        frame.storeBigEndian(checksum.value, at: start + 10)
    }

    ///     0                   1                   2                   3
    ///     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    ///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    ///    |Version| Traffic Class |           Flow Label                  |
    ///    |         Payload Length        |  Next Header  |   Hop Limit   |
    ///    |                Source Address (128 bits)                      |
    ///    |             Destination Address (128 bits)                    |
    ///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    private func appendIPv6Header(
        to frame: inout [UInt8], payloadLength: Int, nextHeader: UInt8, source: [UInt8], destination: [UInt8]
    ) {
        frame.appendBigEndian(UInt32(0x6000_0000))
        frame.appendBigEndian(UInt16(payloadLength))
        frame.append(nextHeader)
        frame.append(64)
        frame.append(contentsOf: source)
        frame.append(contentsOf: destination)
    }
}
