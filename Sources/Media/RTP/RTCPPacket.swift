// RTCP (RFC 3550 §6): compound packets of SR, RR, SDES and BYE; other types kept opaque.
// `RTCPPacketView` walks a buffer without allocating; the owned values are for building
// reports and for tests.

// MARK: - NTP timestamps

/// A 64-bit NTP timestamp (RFC 5905): seconds since 1900-01-01 and a 32-bit fraction.
/// SR carries it whole; LSR and DLSR use the middle 32 bits (16.16 fixed point seconds).
public struct NTPTimestamp: Sendable, Equatable, Hashable, Comparable {
    /// Seconds between 1900-01-01 (NTP era 0) and 1970-01-01 (the Unix epoch).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    /// Whole seconds since 1900 (modulo 2³²).
    public var seconds: UInt32
    /// Fraction of a second in units of 2⁻³² s.
    public var fraction: UInt32

    /// A timestamp from its two halves.
    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// A timestamp from its 64-bit wire value.
    public init(rawValue: UInt64) {
        self.init(seconds: UInt32(truncatingIfNeeded: rawValue >> 32), fraction: UInt32(truncatingIfNeeded: rawValue))
    }

    /// The wall-clock time `secondsSince1970` (Unix time, as the caller's clock gives it).
    public init(secondsSince1970: Double) {
        let total = max(secondsSince1970, -Double(Self.unixEpochOffset)) + Double(Self.unixEpochOffset)
        let whole = total.rounded(.down)
        let fraction = ((total - whole) * 4_294_967_296).rounded(.down)
        self.init(
            seconds: UInt32(truncatingIfNeeded: UInt64(whole)),
            fraction: UInt32(min(fraction, 4_294_967_295)))
    }

    /// The 64-bit wire value.
    public var rawValue: UInt64 { UInt64(seconds) << 32 | UInt64(fraction) }

    /// Unix time (era 0, so valid until 2036).
    public var secondsSince1970: Double {
        Double(seconds) - Double(Self.unixEpochOffset) + Double(fraction) / 4_294_967_296
    }

    /// The middle 32 bits (low 16 of `seconds`, high 16 of `fraction`): what an RR puts in
    /// LSR and what round-trip arithmetic uses (RFC 3550 §6.4.1).
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// A duration in the 1/65536 s units of DLSR, clamped to what 32 bits hold.
    public static func compactDuration(seconds: Double) -> UInt32 {
        guard seconds > 0 else { return 0 }
        return UInt32(min((seconds * 65536).rounded(), 4_294_967_295))
    }

    /// Seconds in a compact (16.16) value such as DLSR or a middle-32 difference.
    public static func seconds(compact: UInt32) -> Double { Double(compact) / 65536 }

    public static func < (lhs: NTPTimestamp, rhs: NTPTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }
}

// MARK: - Errors

/// Why bytes are not a valid (compound) RTCP packet (RFC 3550 §6.1, Appendix A.2).
/// `offset` is where the offending individual packet starts.
public enum RTCPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No octets at all.
    case empty
    /// Fewer than 4 octets left for a packet's common header.
    case truncatedHeader(offset: Int)
    /// The version field is not 2.
    case unsupportedVersion(offset: Int, version: UInt8)
    /// The length field runs past the end of the compound packet.
    case lengthBeyondCompound(offset: Int, length: Int, available: Int)
    /// A compound packet must start with SR or RR (A.2) unless reduced-size is allowed.
    case firstPacketNotReport(packetType: UInt8)
    /// Padding is only allowed on the last packet of a compound, and not on the first (A.2).
    case paddingNotAllowed(offset: Int)
    /// The P bit is set but the padding count octet is zero.
    case zeroPaddingCount(offset: Int)
    /// The padding count is larger than the packet body.
    case paddingBeyondPacket(offset: Int, paddingCount: Int, available: Int)
    /// SR/RR: the report count (or the sender info) needs more octets than the packet has.
    case reportBlocksBeyondPacket(offset: Int, count: Int, length: Int)
    /// SDES: a chunk or item runs past the packet, or a chunk lacks its null terminator.
    case sourceDescriptionBeyondPacket(offset: Int)
    /// BYE: the SSRC list or the reason runs past the packet.
    case goodbyeBeyondPacket(offset: Int)

    public var description: String {
        switch self {
        case .empty:
            return "RTCP packet is empty"
        case .truncatedHeader(let offset):
            return "RTCP packet at octet \(offset) is shorter than its 4-octet header"
        case .unsupportedVersion(let offset, let version):
            return "RTCP packet at octet \(offset) has version \(version), not 2"
        case .lengthBeyondCompound(let offset, let length, let available):
            return "RTCP packet at octet \(offset) claims \(length) octets but \(available) remain"
        case .firstPacketNotReport(let type):
            return "compound RTCP packet starts with type \(type), not SR (200) or RR (201)"
        case .paddingNotAllowed(let offset):
            return "RTCP packet at octet \(offset) is padded but is not the last of the compound (or is the first)"
        case .zeroPaddingCount(let offset):
            return "RTCP packet at octet \(offset) has the padding bit set and a padding count of 0"
        case .paddingBeyondPacket(let offset, let padding, let available):
            return "RTCP packet at octet \(offset) has padding \(padding) beyond its \(available)-octet body"
        case .reportBlocksBeyondPacket(let offset, let count, let length):
            return "RTCP report at octet \(offset) announces \(count) report blocks that do not fit in \(length) octets"
        case .sourceDescriptionBeyondPacket(let offset):
            return "RTCP SDES at octet \(offset) has a chunk or item beyond the packet or an unterminated chunk"
        case .goodbyeBeyondPacket(let offset):
            return "RTCP BYE at octet \(offset) has its SSRC list or reason beyond the packet"
        }
    }
}

/// Why an RTCP packet could not be written.
public enum RTCPBuildError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The destination buffer is smaller than the packet.
    case bufferTooSmall(needed: Int, available: Int)
    /// More than 31 report blocks, chunks or SSRCs (the count field has 5 bits).
    case countTooLarge(Int)
    /// An SDES item value or BYE reason longer than 255 octets.
    case textTooLong(Int)
    /// Profile extensions or an opaque packet body not a whole number of 32-bit words,
    /// or a packet longer than 65536 words.
    case invalidBodyLength(Int)

    public var description: String {
        switch self {
        case .bufferTooSmall(let needed, let available):
            return "RTCP packet needs \(needed) octets but the buffer has \(available)"
        case .countTooLarge(let count):
            return "RTCP count field holds at most 31, got \(count)"
        case .textTooLong(let length):
            return "RTCP SDES item or BYE reason of \(length) octets exceeds 255"
        case .invalidBodyLength(let length):
            return "RTCP body of \(length) octets is not a whole number of 32-bit words (or too long)"
        }
    }
}

// MARK: - Packet types

/// RTCP packet types (RFC 3550 §12.1 and later registrations).
public enum RTCPPacketType {
    /// SR: sender report.
    public static let senderReport: UInt8 = 200
    /// RR: receiver report.
    public static let receiverReport: UInt8 = 201
    /// SDES: source description.
    public static let sourceDescription: UInt8 = 202
    /// BYE: goodbye.
    public static let goodbye: UInt8 = 203
    /// APP: application-defined.
    public static let application: UInt8 = 204
}

/// One reception report block (RFC 3550 §6.4.1), 24 octets:
/// ```
/// |                 SSRC_1 (SSRC of first source)                 |
/// | fraction lost |       cumulative number of packets lost       |
/// |           extended highest sequence number received           |
/// |                      interarrival jitter                      |
/// |                         last SR (LSR)                         |
/// |                   delay since last SR (DLSR)                  |
/// ```
public struct RTCPReportBlock: Sendable, Equatable, Hashable {
    /// The source this block reports on.
    public var ssrc: UInt32
    /// Packets lost in the last interval, as a fraction × 256.
    public var fractionLost: UInt8
    /// Packets lost since the start; 24-bit signed on the wire (duplicates can make it
    /// negative), clamped to -8388608...8388607 when written.
    public var cumulativeLost: Int32
    /// Cycles (high 16 bits) and highest sequence number received (low 16 bits).
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter, in timestamp units.
    public var interarrivalJitter: UInt32
    /// LSR: middle 32 bits of the last SR's NTP timestamp from this source, 0 if none.
    public var lastSenderReport: UInt32
    /// DLSR: delay since that SR was received, in 1/65536 s; 0 if none.
    public var delaySinceLastSenderReport: UInt32

    /// A block with all fields given.
    public init(
        ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32,
        extendedHighestSequenceNumber: UInt32, interarrivalJitter: UInt32,
        lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.interarrivalJitter = interarrivalJitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// Round-trip time in seconds (RFC 3550 §6.4.1: A − LSR − DLSR) for a block that reports
    /// on our stream, `arrival` being our wall clock when it arrived; nil when the block
    /// carries no LSR or the result would be negative (clock trouble or a bogus block).
    public func roundTripTime(arrival: NTPTimestamp) -> Double? {
        guard lastSenderReport != 0 else { return nil }
        let compact = arrival.middle32 &- lastSenderReport &- delaySinceLastSenderReport
        guard Int32(bitPattern: compact) >= 0 else { return nil }
        return NTPTimestamp.seconds(compact: compact)
    }

    /// The range of the 24-bit signed cumulative-lost field.
    public static let cumulativeLostRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF

    static let encodedLength = 24

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        let lossWord = RTPWire.uint32(bytes, offset + 4)
        // Sign-extend the low 24 bits.
        let lost = Int32(bitPattern: lossWord << 8) >> 8
        self.init(
            ssrc: RTPWire.uint32(bytes, offset), fractionLost: UInt8(lossWord >> 24),
            cumulativeLost: lost,
            extendedHighestSequenceNumber: RTPWire.uint32(bytes, offset + 8),
            interarrivalJitter: RTPWire.uint32(bytes, offset + 12),
            lastSenderReport: RTPWire.uint32(bytes, offset + 16),
            delaySinceLastSenderReport: RTPWire.uint32(bytes, offset + 20))
    }

    func write(_ bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        let lost = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        RTPWire.store(ssrc, bytes, offset)
        RTPWire.store(UInt32(fractionLost) << 24 | (UInt32(bitPattern: lost) & 0xFF_FFFF), bytes, offset + 4)
        RTPWire.store(extendedHighestSequenceNumber, bytes, offset + 8)
        RTPWire.store(interarrivalJitter, bytes, offset + 12)
        RTPWire.store(lastSenderReport, bytes, offset + 16)
        RTPWire.store(delaySinceLastSenderReport, bytes, offset + 20)
    }
}

/// The sender information of an SR (RFC 3550 §6.4.1), 20 octets.
public struct RTCPSenderInfo: Sendable, Equatable, Hashable {
    /// Wall-clock time when the report was sent.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant in the RTP timestamp clock.
    public var rtpTimestamp: UInt32
    /// Sender's packet count since starting transmission (wraps).
    public var packetCount: UInt32
    /// Sender's payload octet count (headers and padding excluded; wraps).
    public var octetCount: UInt32

    /// Sender info with all fields given.
    public init(ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32) {
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
    }

    static let encodedLength = 20

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.init(
            ntpTimestamp: NTPTimestamp(
                seconds: RTPWire.uint32(bytes, offset), fraction: RTPWire.uint32(bytes, offset + 4)),
            rtpTimestamp: RTPWire.uint32(bytes, offset + 8),
            packetCount: RTPWire.uint32(bytes, offset + 12), octetCount: RTPWire.uint32(bytes, offset + 16))
    }

    func write(_ bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        RTPWire.store(ntpTimestamp.seconds, bytes, offset)
        RTPWire.store(ntpTimestamp.fraction, bytes, offset + 4)
        RTPWire.store(rtpTimestamp, bytes, offset + 8)
        RTPWire.store(packetCount, bytes, offset + 12)
        RTPWire.store(octetCount, bytes, offset + 16)
    }
}

/// SR (RFC 3550 §6.4.1): `header | SSRC of sender | sender info (20) | report blocks (24 each)
/// | profile-specific extensions`.
public struct RTCPSenderReport: Sendable, Equatable, Hashable {
    /// SSRC of the sender.
    public var ssrc: UInt32
    /// What and when it sent.
    public var senderInfo: RTCPSenderInfo
    /// Reports on sources it receives (at most 31).
    public var reportBlocks: [RTCPReportBlock]
    /// Profile-specific extension octets after the blocks (whole 32-bit words).
    public var profileExtensions: [UInt8]

    /// An SR with the given fields.
    public init(
        ssrc: UInt32, senderInfo: RTCPSenderInfo, reportBlocks: [RTCPReportBlock] = [], profileExtensions: [UInt8] = []
    ) {
        self.ssrc = ssrc
        self.senderInfo = senderInfo
        self.reportBlocks = reportBlocks
        self.profileExtensions = profileExtensions
    }
}

/// RR (RFC 3550 §6.4.2): `header | SSRC of packet sender | report blocks | extensions`.
public struct RTCPReceiverReport: Sendable, Equatable, Hashable {
    /// SSRC of the packet's sender.
    public var ssrc: UInt32
    /// Reports on sources it receives (at most 31; none is valid).
    public var reportBlocks: [RTCPReportBlock]
    /// Profile-specific extension octets after the blocks (whole 32-bit words).
    public var profileExtensions: [UInt8]

    /// An RR with the given fields.
    public init(ssrc: UInt32, reportBlocks: [RTCPReportBlock] = [], profileExtensions: [UInt8] = []) {
        self.ssrc = ssrc
        self.reportBlocks = reportBlocks
        self.profileExtensions = profileExtensions
    }
}

/// An SDES item type (RFC 3550 §6.5): CNAME is the one every compound must carry.
public struct RTCPSDESItemType: RawRepresentable, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The wire value (1...255; 0 ends a chunk's item list).
    public var rawValue: UInt8
    /// The type with wire value `rawValue`.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// CNAME: canonical end-point identifier.
    public static let cname = RTCPSDESItemType(rawValue: 1)
    /// NAME: user name.
    public static let name = RTCPSDESItemType(rawValue: 2)
    /// EMAIL.
    public static let email = RTCPSDESItemType(rawValue: 3)
    /// PHONE.
    public static let phone = RTCPSDESItemType(rawValue: 4)
    /// LOC: geographic location.
    public static let location = RTCPSDESItemType(rawValue: 5)
    /// TOOL: application or tool name.
    public static let tool = RTCPSDESItemType(rawValue: 6)
    /// NOTE: notice or status.
    public static let note = RTCPSDESItemType(rawValue: 7)
    /// PRIV: private extension (value starts with a prefix length and prefix).
    public static let priv = RTCPSDESItemType(rawValue: 8)

    public var description: String {
        let names = ["END", "CNAME", "NAME", "EMAIL", "PHONE", "LOC", "TOOL", "NOTE", "PRIV"]
        return Int(rawValue) < names.count ? names[Int(rawValue)] : "SDES(\(rawValue))"
    }
}

/// One SDES item: type, then up to 255 octets of UTF-8 (PRIV values kept raw).
public struct RTCPSDESItem: Sendable, Equatable, Hashable {
    /// The item type.
    public var type: RTCPSDESItemType
    /// The value octets.
    public var value: [UInt8]

    /// An item with raw `value`.
    public init(type: RTCPSDESItemType, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    /// An item with UTF-8 `text`.
    public init(type: RTCPSDESItemType, text: String) {
        self.init(type: type, value: Array(text.utf8))
    }

    /// The value decoded as UTF-8 (invalid sequences replaced).
    public var text: String { String(decoding: value, as: UTF8.self) }
}

/// One SDES chunk: a source and its items.
public struct RTCPSDESChunk: Sendable, Equatable, Hashable {
    /// The source (SSRC or CSRC) described.
    public var ssrc: UInt32
    /// Its items, in wire order.
    public var items: [RTCPSDESItem]

    /// A chunk for `ssrc` with `items`.
    public init(ssrc: UInt32, items: [RTCPSDESItem]) {
        self.ssrc = ssrc
        self.items = items
    }

    /// The CNAME item's text, if present.
    public var cname: String? { items.first { $0.type == .cname }?.text }
}

/// SDES (RFC 3550 §6.5): `header | chunk*`, each chunk `SSRC/CSRC | items | null octets to a
/// 32-bit boundary`.
public struct RTCPSourceDescription: Sendable, Equatable, Hashable {
    /// The chunks (at most 31).
    public var chunks: [RTCPSDESChunk]

    /// An SDES with `chunks`.
    public init(chunks: [RTCPSDESChunk]) { self.chunks = chunks }

    /// An SDES that gives `ssrc` the CNAME `cname`: what every compound needs.
    public init(ssrc: UInt32, cname: String) {
        self.init(chunks: [RTCPSDESChunk(ssrc: ssrc, items: [RTCPSDESItem(type: .cname, text: cname)])])
    }
}

/// BYE (RFC 3550 §6.6): `header | SSRC/CSRC* | [length | reason for leaving]`.
public struct RTCPGoodbye: Sendable, Equatable, Hashable {
    /// The sources leaving (at most 31).
    public var ssrcs: [UInt32]
    /// The optional reason (UTF-8, at most 255 octets).
    public var reason: String?

    /// A BYE for `ssrcs` with an optional `reason`.
    public init(ssrcs: [UInt32], reason: String? = nil) {
        self.ssrcs = ssrcs
        self.reason = reason
    }
}

/// An RTCP packet of a type not modelled here (APP, RTPFB/PSFB feedback, XR, ...), kept as
/// its 5-bit count field and body so it can be passed on or written back unchanged.
public struct RTCPOpaquePacket: Sendable, Equatable, Hashable {
    /// The packet type.
    public var packetType: UInt8
    /// The 5-bit field after P (report count, subtype or FMT, depending on the type).
    public var count: UInt8
    /// The body after the 4-octet common header, padding excluded.
    public var body: [UInt8]

    /// An opaque packet with the given fields.
    public init(packetType: UInt8, count: UInt8, body: [UInt8]) {
        self.packetType = packetType
        self.count = count
        self.body = body
    }
}

// MARK: - Zero-allocation view

/// One individual RTCP packet inside a buffer, as offsets; checked for its common header
/// and, for SR, RR, SDES and BYE, for a body that holds what its count announces.
///
/// RFC 3550 §6.4.1 (common header):
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|    RC   |   PT=SR=200   |             length            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// `length` is the packet's size in 32-bit words minus one, header and padding included.
public struct RTCPPacketView: Sendable, Equatable, Hashable {
    /// PT: the packet type.
    public let packetType: UInt8
    /// The 5-bit count field (RC for SR/RR, SC for SDES/BYE).
    public let count: Int
    /// The P bit.
    public let hasPadding: Bool
    /// The whole packet, header and padding included; `range.upperBound` is where the next
    /// packet of the compound starts.
    public let range: Range<Int>
    /// The body after the 4-octet header, padding excluded.
    public let bodyRange: Range<Int>

    /// Reads and checks the packet starting at `offset` in `bytes`.
    public static func parse(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(RTCPParseError) -> RTCPPacketView {
        guard offset >= 0, offset + 4 <= bytes.count else { throw .truncatedHeader(offset: offset) }
        let first = bytes[offset]
        guard first >> 6 == 2 else { throw .unsupportedVersion(offset: offset, version: first >> 6) }
        let length = (Int(RTPWire.uint16(bytes, offset + 2)) + 1) * 4
        guard offset + length <= bytes.count else {
            throw .lengthBeyondCompound(offset: offset, length: length, available: bytes.count - offset)
        }
        let end = offset + length
        var bodyEnd = end
        let padded = first & 0x20 != 0
        if padded {
            let padding = Int(bytes[end - 1])
            guard padding > 0 else { throw .zeroPaddingCount(offset: offset) }
            guard padding <= length - 4 else {
                throw .paddingBeyondPacket(offset: offset, paddingCount: padding, available: length - 4)
            }
            bodyEnd -= padding
        }
        let view = RTCPPacketView(
            packetType: bytes[offset + 1], count: Int(first & 0x1F), hasPadding: padded,
            range: offset..<end, bodyRange: (offset + 4)..<bodyEnd)
        try view.checkBody(bytes)
        return view
    }

    private func checkBody(_ bytes: UnsafeRawBufferPointer) throws(RTCPParseError) {
        let offset = range.lowerBound
        switch packetType {
        case RTCPPacketType.senderReport, RTCPPacketType.receiverReport:
            guard reportBlocksOffset + count * RTCPReportBlock.encodedLength <= bodyRange.upperBound else {
                throw .reportBlocksBeyondPacket(offset: offset, count: count, length: range.count)
            }
        case RTCPPacketType.sourceDescription:
            let complete = walkSourceDescription(bytes, onChunk: { _ in }, onItem: { _, _ in })
            guard complete else { throw .sourceDescriptionBeyondPacket(offset: offset) }
        case RTCPPacketType.goodbye:
            let listEnd = bodyRange.lowerBound + 4 * count
            guard listEnd <= bodyRange.upperBound else { throw .goodbyeBeyondPacket(offset: offset) }
            if listEnd < bodyRange.upperBound {
                guard listEnd + 1 + Int(bytes[listEnd]) <= bodyRange.upperBound else {
                    throw .goodbyeBeyondPacket(offset: offset)
                }
            }
        default:
            break
        }
    }

    /// SR/RR: where the first report block starts.
    private var reportBlocksOffset: Int {
        bodyRange.lowerBound + 4 + (packetType == RTCPPacketType.senderReport ? RTCPSenderInfo.encodedLength : 0)
    }

    /// SR/RR: SSRC of the packet's sender (the first body word); nil for other types.
    public func senderSSRC(in bytes: UnsafeRawBufferPointer) -> UInt32? {
        guard packetType == RTCPPacketType.senderReport || packetType == RTCPPacketType.receiverReport
        else { return nil }
        return RTPWire.uint32(bytes, bodyRange.lowerBound)
    }

    /// SR only: the sender information.
    public func senderInfo(in bytes: UnsafeRawBufferPointer) -> RTCPSenderInfo? {
        guard packetType == RTCPPacketType.senderReport else { return nil }
        return RTCPSenderInfo(bytes, at: bodyRange.lowerBound + 4)
    }

    /// SR/RR: how many report blocks there are (0 for other types).
    public var reportBlockCount: Int {
        packetType == RTCPPacketType.senderReport || packetType == RTCPPacketType.receiverReport ? count : 0
    }

    /// SR/RR: the report block at `index` (0..<reportBlockCount).
    public func reportBlock(at index: Int, in bytes: UnsafeRawBufferPointer) -> RTCPReportBlock {
        precondition(index >= 0 && index < reportBlockCount, "report block index out of range")
        return RTCPReportBlock(bytes, at: reportBlocksOffset + index * RTCPReportBlock.encodedLength)
    }

    /// SR/RR: octets after the report blocks (profile-specific extensions).
    public func profileExtensionRange() -> Range<Int>? {
        guard packetType == RTCPPacketType.senderReport || packetType == RTCPPacketType.receiverReport
        else { return nil }
        return (reportBlocksOffset + count * RTCPReportBlock.encodedLength)..<bodyRange.upperBound
    }

    /// SDES: calls `body` with each item's chunk SSRC, type and value range, in order.
    public func forEachSourceDescriptionItem(
        in bytes: UnsafeRawBufferPointer, _ body: (UInt32, RTCPSDESItemType, Range<Int>) -> Void
    ) {
        guard packetType == RTCPPacketType.sourceDescription else { return }
        var current: UInt32 = 0
        _ = walkSourceDescription(bytes, onChunk: { current = $0 }, onItem: { body(current, $0, $1) })
    }

    /// Walks SDES chunks; false when one runs past the body or lacks its terminator.
    func walkSourceDescription(
        _ bytes: UnsafeRawBufferPointer, onChunk: (UInt32) -> Void,
        onItem: (RTCPSDESItemType, Range<Int>) -> Void
    ) -> Bool {
        let end = bodyRange.upperBound
        var position = bodyRange.lowerBound
        for _ in 0..<count {
            guard position + 4 <= end else { return false }
            onChunk(RTPWire.uint32(bytes, position))
            position += 4
            while true {
                guard position < end else { return false }
                let type = bytes[position]
                if type == 0 {
                    // Null octets pad the chunk to the next 32-bit boundary of the packet.
                    let relative = position + 1 - range.lowerBound
                    position = range.lowerBound + (relative + 3) & ~3
                    guard position <= end else { return false }
                    break
                }
                guard position + 2 <= end else { return false }
                let valueEnd = position + 2 + Int(bytes[position + 1])
                guard valueEnd <= end else { return false }
                onItem(RTCPSDESItemType(rawValue: type), (position + 2)..<valueEnd)
                position = valueEnd
            }
        }
        return true
    }

    /// BYE: how many sources leave (0 for other types).
    public var goodbyeSourceCount: Int { packetType == RTCPPacketType.goodbye ? count : 0 }

    /// BYE: the leaving source at `index` (0..<goodbyeSourceCount).
    public func goodbyeSource(at index: Int, in bytes: UnsafeRawBufferPointer) -> UInt32 {
        precondition(index >= 0 && index < goodbyeSourceCount, "BYE source index out of range")
        return RTPWire.uint32(bytes, bodyRange.lowerBound + 4 * index)
    }

    /// BYE: where the reason text lies, if the packet has one.
    public func goodbyeReasonRange(in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        guard packetType == RTCPPacketType.goodbye else { return nil }
        let listEnd = bodyRange.lowerBound + 4 * count
        guard listEnd < bodyRange.upperBound else { return nil }
        return (listEnd + 1)..<(listEnd + 1 + Int(bytes[listEnd]))
    }
}

// MARK: - Owned packets

/// One individual RTCP packet as an owned value.
public enum RTCPPacket: Sendable, Equatable, Hashable {
    /// SR.
    case senderReport(RTCPSenderReport)
    /// RR.
    case receiverReport(RTCPReceiverReport)
    /// SDES.
    case sourceDescription(RTCPSourceDescription)
    /// BYE.
    case goodbye(RTCPGoodbye)
    /// Any other type, kept as is.
    case opaque(RTCPOpaquePacket)

    /// The packet type on the wire.
    public var packetType: UInt8 {
        switch self {
        case .senderReport: return RTCPPacketType.senderReport
        case .receiverReport: return RTCPPacketType.receiverReport
        case .sourceDescription: return RTCPPacketType.sourceDescription
        case .goodbye: return RTCPPacketType.goodbye
        case .opaque(let packet): return packet.packetType
        }
    }

    /// Decodes the packet `view` found in `bytes` (already checked by `RTCPPacketView.parse`).
    public init(_ view: RTCPPacketView, in bytes: UnsafeRawBufferPointer) {
        let extensions = { (range: Range<Int>?) -> [UInt8] in range.map { Array(bytes[$0]) } ?? [] }
        let blocks = { (0..<view.reportBlockCount).map { view.reportBlock(at: $0, in: bytes) } }
        switch view.packetType {
        case RTCPPacketType.senderReport:
            self = .senderReport(
                RTCPSenderReport(
                    ssrc: view.senderSSRC(in: bytes) ?? 0,
                    senderInfo: view.senderInfo(in: bytes)
                        ?? RTCPSenderInfo(
                            ntpTimestamp: NTPTimestamp(rawValue: 0), rtpTimestamp: 0, packetCount: 0, octetCount: 0),
                    reportBlocks: blocks(), profileExtensions: extensions(view.profileExtensionRange())))
        case RTCPPacketType.receiverReport:
            self = .receiverReport(
                RTCPReceiverReport(
                    ssrc: view.senderSSRC(in: bytes) ?? 0, reportBlocks: blocks(),
                    profileExtensions: extensions(view.profileExtensionRange())))
        case RTCPPacketType.sourceDescription:
            var chunks: [RTCPSDESChunk] = []
            _ = view.walkSourceDescription(
                bytes,
                onChunk: { chunks.append(RTCPSDESChunk(ssrc: $0, items: [])) },
                onItem: { type, range in
                    chunks[chunks.count - 1].items.append(RTCPSDESItem(type: type, value: Array(bytes[range])))
                })
            self = .sourceDescription(RTCPSourceDescription(chunks: chunks))
        case RTCPPacketType.goodbye:
            let ssrcs = (0..<view.goodbyeSourceCount).map { view.goodbyeSource(at: $0, in: bytes) }
            let reason = view.goodbyeReasonRange(in: bytes).map { String(decoding: bytes[$0], as: UTF8.self) }
            self = .goodbye(RTCPGoodbye(ssrcs: ssrcs, reason: reason))
        default:
            self = .opaque(
                RTCPOpaquePacket(
                    packetType: view.packetType, count: UInt8(view.count), body: Array(bytes[view.bodyRange])))
        }
    }
}

extension RTCPPacket {
    /// Octets this packet takes on the wire (header included, no padding).
    public var encodedLength: Int {
        switch self {
        case .senderReport(let sr):
            return 8 + RTCPSenderInfo.encodedLength + 24 * sr.reportBlocks.count + sr.profileExtensions.count
        case .receiverReport(let rr):
            return 8 + 24 * rr.reportBlocks.count + rr.profileExtensions.count
        case .sourceDescription(let sdes):
            return 4 + sdes.chunks.reduce(0) { $0 + Self.chunkLength($1) }
        case .goodbye(let bye):
            let reason = bye.reason.map { (1 + $0.utf8.count + 3) & ~3 } ?? 0
            return 4 + 4 * bye.ssrcs.count + reason
        case .opaque(let packet):
            return 4 + packet.body.count
        }
    }

    /// SSRC, items, then at least one null octet up to a 32-bit boundary.
    private static func chunkLength(_ chunk: RTCPSDESChunk) -> Int {
        let items = chunk.items.reduce(0) { $0 + 2 + $1.value.count }
        return 4 + ((items + 1 + 3) & ~3)
    }

    /// Checks counts and lengths against what the wire can carry.
    private func check() throws(RTCPBuildError) {
        let count: Int
        switch self {
        case .senderReport(let sr):
            count = sr.reportBlocks.count
            guard sr.profileExtensions.count % 4 == 0 else { throw .invalidBodyLength(sr.profileExtensions.count) }
        case .receiverReport(let rr):
            count = rr.reportBlocks.count
            guard rr.profileExtensions.count % 4 == 0 else { throw .invalidBodyLength(rr.profileExtensions.count) }
        case .sourceDescription(let sdes):
            count = sdes.chunks.count
            for chunk in sdes.chunks {
                for item in chunk.items where item.value.count > 255 { throw .textTooLong(item.value.count) }
            }
        case .goodbye(let bye):
            count = bye.ssrcs.count
            if let reason = bye.reason, reason.utf8.count > 255 { throw .textTooLong(reason.utf8.count) }
        case .opaque(let packet):
            count = Int(packet.count)
            guard packet.body.count % 4 == 0 else { throw .invalidBodyLength(packet.body.count) }
        }
        guard count <= 31 else { throw .countTooLarge(count) }
        guard encodedLength <= 4 * 65536 else { throw .invalidBodyLength(encodedLength - 4) }
    }

    /// Writes the packet at `offset` in `buffer`; returns the offset just past it.
    public func write(into buffer: UnsafeMutableRawBufferPointer, at offset: Int = 0) throws(RTCPBuildError) -> Int {
        try check()
        let length = encodedLength
        guard offset >= 0, offset + length <= buffer.count else {
            throw .bufferTooSmall(needed: offset + length, available: buffer.count)
        }
        func header(_ count: Int) {
            buffer[offset] = 0x80 | UInt8(count)
            buffer[offset + 1] = packetType
            RTPWire.store(UInt16(length / 4 - 1), buffer, offset + 2)
        }
        func copy(_ bytes: [UInt8], at position: Int) {
            bytes.withUnsafeBytes { RTPWire.copy($0, buffer, position) }
        }
        var position = offset + 4
        switch self {
        case .senderReport(let sr):
            header(sr.reportBlocks.count)
            RTPWire.store(sr.ssrc, buffer, position)
            sr.senderInfo.write(buffer, at: position + 4)
            position += 4 + RTCPSenderInfo.encodedLength
            for block in sr.reportBlocks {
                block.write(buffer, at: position)
                position += RTCPReportBlock.encodedLength
            }
            copy(sr.profileExtensions, at: position)
        case .receiverReport(let rr):
            header(rr.reportBlocks.count)
            RTPWire.store(rr.ssrc, buffer, position)
            position += 4
            for block in rr.reportBlocks {
                block.write(buffer, at: position)
                position += RTCPReportBlock.encodedLength
            }
            copy(rr.profileExtensions, at: position)
        case .sourceDescription(let sdes):
            header(sdes.chunks.count)
            for chunk in sdes.chunks {
                let chunkEnd = position + Self.chunkLength(chunk)
                RTPWire.store(chunk.ssrc, buffer, position)
                position += 4
                for item in chunk.items {
                    buffer[position] = item.type.rawValue
                    buffer[position + 1] = UInt8(item.value.count)
                    copy(item.value, at: position + 2)
                    position += 2 + item.value.count
                }
                for index in position..<chunkEnd { buffer[index] = 0 }
                position = chunkEnd
            }
        case .goodbye(let bye):
            header(bye.ssrcs.count)
            for ssrc in bye.ssrcs {
                RTPWire.store(ssrc, buffer, position)
                position += 4
            }
            if let reason = bye.reason {
                let text = Array(reason.utf8)
                buffer[position] = UInt8(text.count)
                copy(text, at: position + 1)
                for index in (position + 1 + text.count)..<(offset + length) { buffer[index] = 0 }
            }
        case .opaque(let packet):
            header(Int(packet.count))
            copy(packet.body, at: position)
        }
        return offset + length
    }
}

/// A compound RTCP packet (RFC 3550 §6.1): individual packets back to back in one datagram,
/// the first an SR or RR (unless reduced-size RTCP, RFC 5506, is in use).
public struct RTCPCompoundPacket: Sendable, Equatable, Hashable {
    /// The individual packets, in wire order.
    public var packets: [RTCPPacket]

    /// A compound of `packets`. Build order per §6.1: SR or RR first, then SDES with CNAME.
    public init(packets: [RTCPPacket]) { self.packets = packets }

    /// Checks a compound packet without allocating and returns how many packets it holds.
    ///
    /// RFC 3550 A.2: every packet has version 2; the first is SR or RR with the padding bit
    /// clear; the lengths add up to the datagram exactly. Also: only the last packet may be
    /// padded (§6.4.1), and SR/RR/SDES/BYE bodies hold what their counts announce.
    /// `allowReducedSize` lifts the SR/RR-first rule (RFC 5506).
    public static func validate(
        _ bytes: UnsafeRawBufferPointer, allowReducedSize: Bool = false
    ) throws(RTCPParseError) -> Int {
        guard !bytes.isEmpty else { throw .empty }
        var offset = 0
        var count = 0
        while offset < bytes.count {
            let view = try RTCPPacketView.parse(bytes, at: offset)
            if count == 0, !allowReducedSize {
                guard
                    view.packetType == RTCPPacketType.senderReport
                        || view.packetType == RTCPPacketType.receiverReport
                else { throw .firstPacketNotReport(packetType: view.packetType) }
                guard !view.hasPadding else { throw .paddingNotAllowed(offset: offset) }
            }
            if view.hasPadding, view.range.upperBound != bytes.count { throw .paddingNotAllowed(offset: offset) }
            offset = view.range.upperBound
            count += 1
        }
        return count
    }

    /// Validates (see `validate`) and decodes a compound packet.
    public init(parsing bytes: UnsafeRawBufferPointer, allowReducedSize: Bool = false) throws(RTCPParseError) {
        let count = try Self.validate(bytes, allowReducedSize: allowReducedSize)
        var packets: [RTCPPacket] = []
        packets.reserveCapacity(count)
        var offset = 0
        while offset < bytes.count {
            let view = try RTCPPacketView.parse(bytes, at: offset)
            packets.append(RTCPPacket(view, in: bytes))
            offset = view.range.upperBound
        }
        self.init(packets: packets)
    }

    /// Validates and decodes a compound packet held in an array.
    public init(parsing bytes: [UInt8], allowReducedSize: Bool = false) throws(RTCPParseError) {
        self = try RTPWire.withBytes(bytes) { (raw) throws(RTCPParseError) -> RTCPCompoundPacket in
            try RTCPCompoundPacket(parsing: raw, allowReducedSize: allowReducedSize)
        }
    }

    /// Octets the compound takes on the wire.
    public var encodedLength: Int { packets.reduce(0) { $0 + $1.encodedLength } }

    /// Writes every packet into `buffer`, back to back; returns the total length.
    public func write(into buffer: UnsafeMutableRawBufferPointer) throws(RTCPBuildError) -> Int {
        let needed = encodedLength
        guard needed <= buffer.count else { throw .bufferTooSmall(needed: needed, available: buffer.count) }
        var offset = 0
        for packet in packets { offset = try packet.write(into: buffer, at: offset) }
        return offset
    }

    /// The compound's wire octets.
    public func serialize() throws(RTCPBuildError) -> [UInt8] {
        try RTPWire.makeBytes(count: encodedLength) { (raw) throws(RTCPBuildError) -> Int in
            try write(into: raw)
        }
    }
}
