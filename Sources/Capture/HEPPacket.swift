import IOCore

/// One HEP v3 packet (HOMER Encapsulation Protocol, sipcapture "HEP3 Network Protocol
/// Specification"): a captured payload with the addresses, time and capture agent it came
/// from, as sent to a HOMER / heplify-server / sngrep `-L` collector over UDP or TCP.
///
///      0                   1                   2                   3
///      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |      "H"      |      "E"      |      "P"      |      "3"      |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |   total length (all bytes)    |  chunk vendor ID (0 generic)  |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |        chunk type ID          | chunk length (header + value) |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |  chunk value ...              |  next chunk vendor ID ...     |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///
/// Generic chunks (vendor 0x0000), all integers big-endian:
///
///     0x0001 uint8   IP protocol family (2 AF_INET, 10 AF_INET6)
///     0x0002 uint8   IP protocol ID (17 UDP, 6 TCP)
///     0x0003 4 bytes IPv4 source address        0x0004 IPv4 destination
///     0x0005 16 bytes IPv6 source address       0x0006 IPv6 destination
///     0x0007 uint16  source port                0x0008 destination port
///     0x0009 uint32  timestamp, seconds since 1970
///     0x000a uint32  timestamp, microseconds offset
///     0x000b uint8   protocol type (`PayloadType`)
///     0x000c uint32  capture agent ID
///     0x000d uint16  keep-alive timer (not used here)
///     0x000e octets  authentication key
///     0x000f octets  captured payload
///     0x0010 octets  compressed payload (not supported by the decoder)
///     0x0011 octets  internal correlation ID
///
/// `encoded()` writes the chunks in the order Kamailio's siptrace, sngrep and captagent do
/// (family, IP protocol, ports, seconds, microseconds, protocol type, capture ID, addresses,
/// auth key, correlation ID, payload), so a collector that reads the leading chunks at fixed
/// offsets (older sngrep) decodes it too.
///
/// When one address is IPv4 and the other IPv6, both are sent as IPv6 (the IPv4 one mapped
/// to `::ffff:a.b.c.d`); a host that is not numeric is sent as the unspecified address.
public struct HEPPacket: Sendable, Equatable {
    /// The protocol type of the payload (chunk 0x000b), numbered as the HEP3 specification does.
    ///
    /// RTCP: the specification has no type for raw RTCP. 0x05 is "RTCP JSON", and every
    /// sender looked at puts a JSON text there, converting the binary report first:
    /// rtpengine (`homer.c`, `PROTO_RTCP_JSON 0x05`, the JSON built in `rtcp.c`), captagent
    /// (`protocol_rtcp`, `PROTO_RTCP_JSON`), reSIProcate's `HepAgent` (`RTCP_JSON = 5`,
    /// `convertRTCPtoJSON`), heplify (`correlateRTCP` returns the JSON and type 5). HOMER
    /// (heplify-server) stores type 5 as JSON. So an RTCP report goes out as `.rtcpJSON` with
    /// a JSON payload and the call's Call-ID in `correlationID`, not as raw bytes.
    public enum PayloadType: UInt8, Sendable, CaseIterable {
        case reserved = 0x00
        case sip = 0x01
        case xmpp = 0x02
        case sdp = 0x03
        case rtp = 0x04
        /// An RTCP report as a JSON text (see the type's note on raw RTCP).
        case rtcpJSON = 0x05
        case mgcp = 0x06
        case megaco = 0x07
        case m2ua = 0x08
        case m3ua = 0x09
        case iax = 0x0A
        case h3222 = 0x0B
        case h321 = 0x0C
        case m2pa = 0x0D
        case mosFullReportJSON = 0x22
        case mosShortReport = 0x23
        case sipJSON = 0x32
        case dnsJSON = 0x35
        case m3uaJSON = 0x36
        case rtsp = 0x37
        case diameterJSON = 0x38
        case gsmMapJSON = 0x39
        case rtcpPion = 0x3A
        case cdr = 0x3C
        /// A log line (the value Kamailio's and heplify's log sending uses).
        case log = 0x64
    }

    /// Seconds since 1970 (chunks 0x0009 seconds and 0x000a microseconds).
    public var time: Double
    /// Chunks 0x0001 family, 0x0003/0x0005 address, 0x0007 port.
    public var source: SocketAddress
    /// Chunks 0x0004/0x0006 address, 0x0008 port.
    public var destination: SocketAddress
    /// Chunk 0x0002 (17 UDP, 6 TCP).
    public var transport: CapturedProtocol
    /// Chunk 0x000b.
    public var payloadType: PayloadType
    /// Chunk 0x000c.
    public var captureID: UInt32
    /// Chunk 0x000e, sent when set (the collector's password).
    public var authKey: String?
    /// Chunk 0x0011, sent when set: the SIP Call-ID an RTCP report belongs to.
    public var correlationID: String?
    /// Chunk 0x000f.
    public var payload: [UInt8]

    public init(
        time: Double, source: SocketAddress, destination: SocketAddress, transport: CapturedProtocol,
        payloadType: PayloadType, captureID: UInt32, authKey: String? = nil, correlationID: String? = nil,
        payload: [UInt8]
    ) {
        self.time = time
        self.source = source
        self.destination = destination
        self.transport = transport
        self.payloadType = payloadType
        self.captureID = captureID
        self.authKey = authKey
        self.correlationID = correlationID
        self.payload = payload
    }

    /// The HEP3 header: "HEP3" and the total length.
    static let headerLength = 6
    /// A chunk's header: vendor ID, type ID, length.
    static let chunkHeaderLength = 6

    enum ChunkType: UInt16 {
        case ipFamily = 0x0001
        case ipProtocol = 0x0002
        case ipv4Source = 0x0003
        case ipv4Destination = 0x0004
        case ipv6Source = 0x0005
        case ipv6Destination = 0x0006
        case sourcePort = 0x0007
        case destinationPort = 0x0008
        case seconds = 0x0009
        case microseconds = 0x000A
        case protocolType = 0x000B
        case captureID = 0x000C
        case authKey = 0x000E
        case payload = 0x000F
        case compressedPayload = 0x0010
        case correlationID = 0x0011
    }

    static let familyIPv4: UInt8 = 2  // AF_INET
    static let familyIPv6: UInt8 = 10  // AF_INET6 on Linux, as HOMER expects

    /// "HEP3" + total length + the chunks (vendor 0x0000).
    ///
    /// The total length is 16 bits: a packet is at most 65535 bytes, so a payload that would
    /// make it longer is cut to fit.
    public func encoded() -> [UInt8] {
        let ipv6 = source.isIPv6 || destination.isIPv6
        var chunks: [UInt8] = []
        func chunk(_ type: ChunkType, _ value: [UInt8]) {
            chunks.appendBigEndian(UInt16(0x0000))
            chunks.appendBigEndian(type.rawValue)
            chunks.appendBigEndian(UInt16(Self.chunkHeaderLength + value.count))
            chunks.append(contentsOf: value)
        }
        func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
        func be32(_ value: UInt32) -> [UInt8] { var bytes: [UInt8] = []; bytes.appendBigEndian(value); return bytes }

        let split = SplitTime(time, unitsPerSecond: 1_000_000)
        chunk(.ipFamily, [ipv6 ? Self.familyIPv6 : Self.familyIPv4])
        chunk(.ipProtocol, [transport.ipProtocolNumber])
        chunk(.sourcePort, be16(UInt16(truncatingIfNeeded: source.port)))
        chunk(.destinationPort, be16(UInt16(truncatingIfNeeded: destination.port)))
        chunk(.seconds, be32(split.seconds))
        chunk(.microseconds, be32(split.fraction))
        chunk(.protocolType, [payloadType.rawValue])
        chunk(.captureID, be32(captureID))
        if ipv6 {
            chunk(.ipv6Source, IPAddressBytes.ipv6Bytes(of: source.host))
            chunk(.ipv6Destination, IPAddressBytes.ipv6Bytes(of: destination.host))
        } else {
            chunk(.ipv4Source, IPAddressBytes.ipv4Bytes(of: source.host))
            chunk(.ipv4Destination, IPAddressBytes.ipv4Bytes(of: destination.host))
        }
        if let authKey { chunk(.authKey, Array(authKey.utf8)) }
        if let correlationID { chunk(.correlationID, Array(correlationID.utf8)) }
        let room = 65535 - Self.headerLength - chunks.count - Self.chunkHeaderLength
        chunk(.payload, Array(payload.prefix(max(0, room))))

        var bytes: [UInt8] = Array("HEP3".utf8)
        bytes.reserveCapacity(Self.headerLength + chunks.count)
        bytes.appendBigEndian(UInt16(Self.headerLength + chunks.count))
        bytes.append(contentsOf: chunks)
        return bytes
    }

    /// Decodes one HEP v3 packet (the whole of `bytes`: the total length must match).
    ///
    /// Chunks of other vendors and unknown generic chunks are skipped. Required: the IP
    /// family, IP protocol (UDP or TCP), both addresses and ports, the seconds, the protocol
    /// type and the payload; the microseconds and the capture ID default to 0. A length that
    /// does not fit, a fixed-size chunk of the wrong size, a compressed payload, an unknown
    /// protocol type or a missing required chunk throws.
    public init(decoding bytes: [UInt8]) throws(HEPError) {
        guard bytes.count >= Self.headerLength else {
            throw HEPError(offset: bytes.count, reason: "packet ends inside the 6-byte header (\(bytes.count) bytes)")
        }
        guard bytes[0] == 0x48, bytes[1] == 0x45, bytes[2] == 0x50, bytes[3] == 0x33 else {
            throw HEPError(offset: 0, reason: "no \"HEP3\" identifier")
        }
        let totalLength = Int(bytes.bigEndianUInt16(at: 4))
        guard totalLength == bytes.count else {
            throw HEPError(offset: 4, reason: "total length \(totalLength) but the packet has \(bytes.count) bytes")
        }

        var family: UInt8?
        var ipProtocol: UInt8?
        var sourceHost: String?, destinationHost: String?
        var sourcePort: UInt16?, destinationPort: UInt16?
        var seconds: UInt32?, microseconds: UInt32 = 0
        var payloadType: PayloadType?
        var captureID: UInt32 = 0
        var authKey: String?, correlationID: String?
        var payload: [UInt8]?

        var offset = Self.headerLength
        while offset < totalLength {
            guard totalLength - offset >= Self.chunkHeaderLength else {
                throw HEPError(
                    offset: offset, reason: "packet ends inside a chunk header (\(totalLength - offset) bytes left)")
            }
            let vendor = bytes.bigEndianUInt16(at: offset)
            let typeID = bytes.bigEndianUInt16(at: offset + 2)
            let length = Int(bytes.bigEndianUInt16(at: offset + 4))
            guard length >= Self.chunkHeaderLength else {
                throw HEPError(offset: offset + 4, reason: "chunk length \(length) is shorter than the chunk header")
            }
            guard length <= totalLength - offset else {
                throw HEPError(
                    offset: offset + 4,
                    reason: "chunk length \(length) runs past the end (\(totalLength - offset) bytes left)")
            }
            let valueStart = offset + Self.chunkHeaderLength
            let value = bytes[valueStart..<(offset + length)]
            defer { offset += length }
            guard vendor == 0, let type = ChunkType(rawValue: typeID) else { continue }

            func fixed(_ size: Int) throws(HEPError) {
                guard value.count == size else {
                    throw HEPError(
                        offset: offset + 4,
                        reason: "chunk 0x\(String(typeID, radix: 16)) has \(value.count) value bytes, not \(size)")
                }
            }
            func u16() -> UInt16 { bytes.bigEndianUInt16(at: valueStart) }
            func u32() -> UInt32 { bytes.bigEndianUInt32(at: valueStart) }

            switch type {
            case .ipFamily:
                try fixed(1)
                family = value.first
            case .ipProtocol:
                try fixed(1)
                ipProtocol = value.first
            case .ipv4Source, .ipv4Destination:
                try fixed(4)
                if type == .ipv4Source {
                    sourceHost = IPAddressBytes.host(from: value)
                } else {
                    destinationHost = IPAddressBytes.host(from: value)
                }
            case .ipv6Source, .ipv6Destination:
                try fixed(16)
                if type == .ipv6Source {
                    sourceHost = IPAddressBytes.host(from: value)
                } else {
                    destinationHost = IPAddressBytes.host(from: value)
                }
            case .sourcePort:
                try fixed(2)
                sourcePort = u16()
            case .destinationPort:
                try fixed(2)
                destinationPort = u16()
            case .seconds:
                try fixed(4)
                seconds = u32()
            case .microseconds:
                try fixed(4)
                microseconds = u32()
            case .protocolType:
                try fixed(1)
                guard let known = PayloadType(rawValue: value[valueStart]) else {
                    throw HEPError(offset: valueStart, reason: "protocol type \(value[valueStart]) unknown")
                }
                payloadType = known
            case .captureID:
                // Some old agents send a 16-bit capture ID.
                guard value.count == 4 || value.count == 2 else { try fixed(4); break }
                captureID = value.count == 4 ? u32() : UInt32(u16())
            case .authKey:
                authKey = String(decoding: value, as: UTF8.self)
            case .correlationID:
                correlationID = String(decoding: value, as: UTF8.self)
            case .payload:
                payload = Array(value)
            case .compressedPayload:
                throw HEPError(offset: offset, reason: "compressed payload (chunk 0x0010) not supported")
            }
        }

        func missing(_ what: String) -> HEPError { HEPError(offset: totalLength, reason: "no \(what) chunk") }
        guard let family else { throw missing("IP family (0x0001)") }
        guard family == Self.familyIPv4 || family == Self.familyIPv6 else {
            throw HEPError(offset: totalLength, reason: "IP family \(family) is neither AF_INET (2) nor AF_INET6 (10)")
        }
        guard let ipProtocol else { throw missing("IP protocol (0x0002)") }
        guard let transport = CapturedProtocol(ipProtocolNumber: ipProtocol) else {
            throw HEPError(offset: totalLength, reason: "IP protocol \(ipProtocol) is neither UDP (17) nor TCP (6)")
        }
        guard let sourceHost else { throw missing("source address (0x0003/0x0005)") }
        guard let destinationHost else { throw missing("destination address (0x0004/0x0006)") }
        guard let sourcePort else { throw missing("source port (0x0007)") }
        guard let destinationPort else { throw missing("destination port (0x0008)") }
        guard let seconds else { throw missing("timestamp seconds (0x0009)") }
        guard let payloadType else { throw missing("protocol type (0x000b)") }
        guard let payload else { throw missing("payload (0x000f)") }

        self.init(
            time: Double(seconds) + Double(microseconds) / 1e6,
            source: SocketAddress(host: sourceHost, port: Int(sourcePort)),
            destination: SocketAddress(host: destinationHost, port: Int(destinationPort)),
            transport: transport, payloadType: payloadType, captureID: captureID,
            authKey: authKey, correlationID: correlationID, payload: payload)
    }
}
