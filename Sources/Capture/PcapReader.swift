import Crypto
import IOCore

/// Reads a libpcap classic capture file (the layout is drawn on `PcapWriter`) and keeps the
/// UDP and TCP payloads it carries over IPv4 or IPv6.
///
/// Both byte orders and both time resolutions are accepted (magic 0xa1b2c3d4 microseconds,
/// 0xa1b23c4d nanoseconds, either way round), with link types LINKTYPE_ETHERNET (1, 802.1Q
/// and 802.1ad tags skipped), LINKTYPE_RAW (101), LINKTYPE_LINUX_SLL (113) and
/// LINKTYPE_LINUX_SLL2 (276).
///
/// A file whose structure is wrong (a bad magic, a record that runs past the end, a cut
/// record header) throws a `PcapError` naming the byte offset. A well-framed record whose
/// frame is not UDP or TCP over IP (ARP, ICMP, a fragment, a frame too short for its
/// headers) is skipped. A frame saved cut (incl_len < orig_len) gives the payload bytes
/// that were saved.
public struct PcapReader {
    /// The UDP and TCP packets of the file, in file order.
    public var packets: [CapturedPacket]
    /// The file's link type (LINKTYPE_* number).
    public let linkType: UInt32
    /// True when the timestamps' fraction is nanoseconds.
    public let nanosecondTimestamps: Bool

    static let globalHeaderLength = 24
    static let recordHeaderLength = 16

    public init(bytes: [UInt8]) throws(PcapError) {
        guard bytes.count >= Self.globalHeaderLength else {
            throw PcapError(
                offset: bytes.count, reason: "file ends inside the 24-byte global header (\(bytes.count) bytes)")
        }
        let bigEndian: Bool
        let nanoseconds: Bool
        switch (bytes[0], bytes[1], bytes[2], bytes[3]) {
        case (0xD4, 0xC3, 0xB2, 0xA1): (bigEndian, nanoseconds) = (false, false)
        case (0x4D, 0x3C, 0xB2, 0xA1): (bigEndian, nanoseconds) = (false, true)
        case (0xA1, 0xB2, 0xC3, 0xD4): (bigEndian, nanoseconds) = (true, false)
        case (0xA1, 0xB2, 0x3C, 0x4D): (bigEndian, nanoseconds) = (true, true)
        case (0x0A, 0x0D, 0x0D, 0x0A):
            throw PcapError(
                offset: 0, reason: "pcapng file (block type 0x0a0d0d0a); only the classic libpcap format is read")
        default:
            let magic = Crypto.hex(bytes.prefix(4))
            throw PcapError(offset: 0, reason: "magic 0x\(magic) is not a libpcap magic number")
        }
        func u32(_ offset: Int) -> UInt32 {
            let b0 = UInt32(bytes[offset]), b1 = UInt32(bytes[offset + 1]), b2 = UInt32(bytes[offset + 2]),
                b3 = UInt32(bytes[offset + 3])
            return bigEndian ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0
        }
        let major = bigEndian ? UInt16(bytes[4]) << 8 | UInt16(bytes[5]) : UInt16(bytes[5]) << 8 | UInt16(bytes[4])
        guard major == 2 else {
            throw PcapError(offset: 4, reason: "version \(major) is not 2")
        }
        // The low 16 bits are the link type; the high bits may carry FCS information.
        let linkType = u32(20) & 0xFFFF
        guard [1, 101, 113, 276].contains(linkType) else {
            throw PcapError(
                offset: 20,
                reason: "link type \(linkType) not supported (1 Ethernet, 101 raw IP, 113 Linux SLL, 276 Linux SLL2)")
        }
        self.linkType = linkType
        self.nanosecondTimestamps = nanoseconds

        var packets: [CapturedPacket] = []
        var offset = Self.globalHeaderLength
        while offset < bytes.count {
            guard bytes.count - offset >= Self.recordHeaderLength else {
                throw PcapError(
                    offset: offset,
                    reason: "file ends inside a 16-byte record header (\(bytes.count - offset) bytes left)")
            }
            let seconds = u32(offset)
            let fraction = u32(offset + 4)
            let savedLength = Int(u32(offset + 8))
            let originalLength = Int(u32(offset + 12))
            let frameStart = offset + Self.recordHeaderLength
            guard savedLength <= bytes.count - frameStart else {
                throw PcapError(
                    offset: offset + 8,
                    reason:
                        "record of \(savedLength) bytes runs past the end of the file (\(bytes.count - frameStart) bytes left)"
                )
            }
            guard savedLength <= originalLength || originalLength == 0 else {
                throw PcapError(
                    offset: offset + 8, reason: "record saves \(savedLength) bytes of a \(originalLength)-byte frame")
            }
            let time = Double(seconds) + Double(fraction) / (nanoseconds ? 1e9 : 1e6)
            let frame = FrameDecoder(bytes: bytes, start: frameStart, end: frameStart + savedLength)
            if let packet = frame.decode(linkType: linkType, time: time) {
                packets.append(packet)
            }
            offset = frameStart + savedLength
        }
        self.packets = packets
    }
}

/// Decodes one saved frame down to its UDP or TCP payload; nil for anything else.
private struct FrameDecoder {
    let bytes: [UInt8]
    let start: Int
    let end: Int

    func u16(_ offset: Int) -> UInt16 { bytes.bigEndianUInt16(at: offset) }

    func decode(linkType: UInt32, time: Double) -> CapturedPacket? {
        switch linkType {
        case 1:
            // Ethernet II: dst MAC, src MAC, ethertype; VLAN tags are 4 bytes each.
            var position = start + 12
            guard end - position >= 2 else { return nil }
            var etherType = u16(position)
            position += 2
            while etherType == 0x8100 || etherType == 0x88A8 {
                guard end - position >= 4 else { return nil }
                etherType = u16(position + 2)
                position += 4
            }
            return decodeIP(etherType: etherType, at: position, time: time)
        case 101:
            guard end > start else { return nil }
            switch bytes[start] >> 4 {
            case 4: return decodeIP(etherType: 0x0800, at: start, time: time)
            case 6: return decodeIP(etherType: 0x86DD, at: start, time: time)
            default: return nil
            }
        case 113:
            // Linux cooked v1: packet type, ARPHRD, address length, 8 address bytes, protocol.
            guard end - start >= 16 else { return nil }
            return decodeIP(etherType: u16(start + 14), at: start + 16, time: time)
        case 276:
            // Linux cooked v2: protocol, reserved, interface index, ARPHRD, packet type,
            // address length, 8 address bytes.
            guard end - start >= 20 else { return nil }
            return decodeIP(etherType: u16(start), at: start + 20, time: time)
        default:
            return nil
        }
    }

    func decodeIP(etherType: UInt16, at position: Int, time: Double) -> CapturedPacket? {
        switch etherType {
        case 0x0800:
            guard end - position >= 20, bytes[position] >> 4 == 4 else { return nil }
            let headerLength = Int(bytes[position] & 0x0F) * 4
            let totalLength = Int(u16(position + 2))
            guard headerLength >= 20, totalLength >= headerLength, end - position >= headerLength else { return nil }
            // A fragment (more fragments, or an offset) cannot be decoded alone.
            guard u16(position + 6) & 0x3FFF == 0 else { return nil }
            let source = IPAddressBytes.host(from: bytes[(position + 12)..<(position + 16)])
            let destination = IPAddressBytes.host(from: bytes[(position + 16)..<(position + 20)])
            let ipEnd = min(end, position + totalLength)
            return decodeTransport(
                protocolNumber: bytes[position + 9], at: position + headerLength, end: ipEnd,
                source: source, destination: destination, time: time)
        case 0x86DD:
            guard end - position >= 40, bytes[position] >> 4 == 6 else { return nil }
            let payloadLength = Int(u16(position + 4))
            let source = IPAddressBytes.host(from: bytes[(position + 8)..<(position + 24)])
            let destination = IPAddressBytes.host(from: bytes[(position + 24)..<(position + 40)])
            let ipEnd = min(end, position + 40 + payloadLength)
            var nextHeader = bytes[position + 6]
            var cursor = position + 40
            // Extension headers (RFC 8200 §4): hop-by-hop, routing, destination options are
            // skipped; a fragment header means the payload cannot be decoded alone.
            while [0, 43, 60].contains(nextHeader) {
                guard ipEnd - cursor >= 8 else { return nil }
                let length = (Int(bytes[cursor + 1]) + 1) * 8
                nextHeader = bytes[cursor]
                cursor += length
            }
            guard cursor <= ipEnd else { return nil }
            return decodeTransport(
                protocolNumber: nextHeader, at: cursor, end: ipEnd,
                source: source, destination: destination, time: time)
        default:
            return nil
        }
    }

    func decodeTransport(
        protocolNumber: UInt8, at position: Int, end ipEnd: Int, source: String, destination: String, time: Double
    ) -> CapturedPacket? {
        guard let transport = CapturedProtocol(ipProtocolNumber: protocolNumber) else { return nil }
        let payloadStart: Int
        var payloadEnd = ipEnd
        switch transport {
        case .udp:
            guard ipEnd - position >= 8 else { return nil }
            let udpLength = Int(u16(position + 4))
            guard udpLength >= 8 else { return nil }
            payloadStart = position + 8
            payloadEnd = min(ipEnd, position + udpLength)
        case .tcp:
            guard ipEnd - position >= 20 else { return nil }
            let headerLength = Int(bytes[position + 12] >> 4) * 4
            guard headerLength >= 20, ipEnd - position >= headerLength else { return nil }
            payloadStart = position + headerLength
        }
        return CapturedPacket(
            time: time,
            source: SocketAddress(host: source, port: Int(u16(position))),
            destination: SocketAddress(host: destination, port: Int(u16(position + 2))),
            transport: transport,
            payload: Array(bytes[payloadStart..<payloadEnd]))
    }
}
