// RTP data packets (RFC 3550 §5.1): a zero-allocation view for the media loop's hot path,
// a header writer into caller-provided memory, and an owned value for tests and tools.

/// Big-endian loads and stores on raw buffers, shared by the RTP and RTCP codecs.
/// Callers check bounds first; these never read past what they were told is valid.
enum RTPWire {
    @inline(__always)
    static func uint16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    static func uint32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    static func store(_ value: UInt16, _ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) {
        bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt16.self)
    }

    @inline(__always)
    static func store(_ value: UInt32, _ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) {
        bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
    }

    /// `withUnsafeBytes` that keeps a typed error (the standard one rethrows `any Error`).
    static func withBytes<R, E: Error>(
        _ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let result: Result<R, E> = array.withUnsafeBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// A zeroed array of `count` octets filled by `body`, which returns how many it wrote.
    static func makeBytes<E: Error>(
        count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let result: Result<Int, E> = bytes.withUnsafeMutableBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        let written = try result.get()
        if written < count { bytes.removeLast(count - written) }
        return bytes
    }

    /// Copies `source` to `offset` in `destination`; overlapping memory is allowed, so a
    /// payload already encoded in place is left alone.
    @inline(__always)
    static func copy(
        _ source: UnsafeRawBufferPointer, _ destination: UnsafeMutableRawBufferPointer, _ offset: Int
    ) {
        guard let from = source.baseAddress, let to = destination.baseAddress, source.count > 0
        else { return }
        let target = to + offset
        if UnsafeRawPointer(target) != from { target.copyMemory(from: from, byteCount: source.count) }
    }
}

/// Why bytes are not a valid RTP packet (RFC 3550 §5.1, Appendix A.1).
public enum RTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer than the 12 octets of the fixed header.
    case truncatedHeader(length: Int)
    /// The version field is not 2.
    case unsupportedVersion(UInt8)
    /// The CC field announces more CSRC identifiers than the packet holds.
    case csrcListBeyondPacket(csrcCount: Int, length: Int)
    /// The X bit is set but the extension header or its data runs past the packet.
    case extensionBeyondPacket(needed: Int, length: Int)
    /// The P bit is set but the padding count octet is zero (it counts itself, so ≥ 1).
    case zeroPaddingCount
    /// The padding count is larger than what follows the header.
    case paddingBeyondPayload(paddingCount: Int, available: Int)

    public var description: String {
        switch self {
        case .truncatedHeader(let length):
            return "RTP packet of \(length) octets is shorter than the 12-octet fixed header"
        case .unsupportedVersion(let version):
            return "RTP version \(version) is not 2"
        case .csrcListBeyondPacket(let count, let length):
            return "RTP CSRC count \(count) needs \(12 + 4 * count) octets but the packet has \(length)"
        case .extensionBeyondPacket(let needed, let length):
            return "RTP header extension needs \(needed) octets but the packet has \(length)"
        case .zeroPaddingCount:
            return "RTP padding bit set but the padding count octet is 0"
        case .paddingBeyondPayload(let padding, let available):
            return "RTP padding count \(padding) exceeds the \(available) octets after the header"
        }
    }
}

/// Why an RTP packet could not be written.
public enum RTPBuildError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The destination buffer is smaller than the packet.
    case bufferTooSmall(needed: Int, available: Int)
    /// More than 15 CSRC identifiers (the CC field has 4 bits).
    case tooManyCSRCs(Int)
    /// A payload type outside 0...127 (the PT field has 7 bits).
    case payloadTypeOutOfRange(UInt8)
    /// Extension data must be a whole number of 32-bit words, at most 65535 of them.
    case invalidExtensionLength(Int)
    /// Padding must be 0 (none) or 1...255 octets, the last octet being the count.
    case invalidPaddingCount(Int)

    public var description: String {
        switch self {
        case .bufferTooSmall(let needed, let available):
            return "RTP packet needs \(needed) octets but the buffer has \(available)"
        case .tooManyCSRCs(let count):
            return "RTP allows at most 15 CSRC identifiers, got \(count)"
        case .payloadTypeOutOfRange(let pt):
            return "RTP payload type \(pt) is outside 0...127"
        case .invalidExtensionLength(let length):
            return "RTP header extension data of \(length) octets is not a whole number of 32-bit words (max 65535)"
        case .invalidPaddingCount(let count):
            return "RTP padding of \(count) octets is outside 0...255"
        }
    }
}

/// An RTP header extension (RFC 3550 §5.3.1): a 16-bit profile-defined value and data
/// that is a whole number of 32-bit words (RFC 8285 one- and two-byte forms live inside).
public struct RTPHeaderExtension: Sendable, Equatable, Hashable {
    /// The 16 "defined by profile" bits (0xBEDE for RFC 8285 one-byte headers).
    public var profile: UInt16
    /// The extension data, without the 4-octet extension header; length a multiple of 4.
    public var data: [UInt8]

    /// An extension with `profile` and `data` (padded by the caller to 32-bit words).
    public init(profile: UInt16, data: [UInt8]) {
        self.profile = profile
        self.data = data
    }
}

/// The RTP header of one packet (RFC 3550 §5.1); the version is always 2 and the P bit
/// is decided when the packet is written.
///
/// Empty `csrcs` and a nil `headerExtension` cost no allocation, so the media loop can keep
/// one of these per stream and bump `sequenceNumber`/`timestamp` per packet.
public struct RTPHeader: Sendable, Equatable, Hashable {
    /// M: profile-defined marker (talkspurt start for audio).
    public var marker: Bool
    /// PT: payload type, 0...127.
    public var payloadType: UInt8
    /// The 16-bit sequence number.
    public var sequenceNumber: UInt16
    /// The 32-bit media timestamp, in the payload's clock rate.
    public var timestamp: UInt32
    /// The synchronization source.
    public var ssrc: UInt32
    /// Contributing sources (at most 15).
    public var csrcs: [UInt32]
    /// The header extension, when the X bit is set.
    public var headerExtension: RTPHeaderExtension?

    /// A header with the given fields; no CSRCs and no extension by default.
    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
        ssrc: UInt32, csrcs: [UInt32] = [], headerExtension: RTPHeaderExtension? = nil
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
    }

    /// Octets this header takes on the wire: 12 + 4·CC (+ 4 + extension data).
    public var encodedLength: Int {
        12 + 4 * csrcs.count + (headerExtension.map { 4 + $0.data.count } ?? 0)
    }

    /// Writes the header at the start of `buffer` and returns its length; the payload goes
    /// right after it. Set `hasPadding` when padding will follow the payload.
    public func write(
        into buffer: UnsafeMutableRawBufferPointer, hasPadding: Bool = false
    ) throws(RTPBuildError) -> Int {
        guard csrcs.count <= 15 else { throw .tooManyCSRCs(csrcs.count) }
        guard payloadType <= 127 else { throw .payloadTypeOutOfRange(payloadType) }
        if let ext = headerExtension, ext.data.count % 4 != 0 || ext.data.count > 4 * 0xFFFF {
            throw .invalidExtensionLength(ext.data.count)
        }
        let length = encodedLength
        guard buffer.count >= length else { throw .bufferTooSmall(needed: length, available: buffer.count) }
        let first =
            0x80 | (hasPadding ? 0x20 : 0) | (headerExtension != nil ? 0x10 : 0)
            | UInt8(csrcs.count)
        buffer[0] = first
        buffer[1] = (marker ? 0x80 : 0) | payloadType
        RTPWire.store(sequenceNumber, buffer, 2)
        RTPWire.store(timestamp, buffer, 4)
        RTPWire.store(ssrc, buffer, 8)
        var offset = 12
        for csrc in csrcs {
            RTPWire.store(csrc, buffer, offset)
            offset += 4
        }
        if let ext = headerExtension {
            RTPWire.store(ext.profile, buffer, offset)
            RTPWire.store(UInt16(ext.data.count / 4), buffer, offset + 2)
            offset += 4
            ext.data.withUnsafeBytes { RTPWire.copy($0, buffer, offset) }
            offset += ext.data.count
        }
        return offset
    }
}

/// A validated RTP packet as offsets into the caller's buffer: parsing allocates nothing.
///
/// RFC 3550 §5.1:
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                             ....                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// With X set, §5.3.1: `defined by profile (16) | length in 32-bit words (16)`, then the
/// data. With P set, the last octet counts the padding octets, itself included.
///
/// The view holds no pointer: pass the same buffer back to `csrc(at:in:)` and friends.
public struct RTPPacketView: Sendable, Equatable, Hashable {
    /// M: the marker bit.
    public let marker: Bool
    /// PT: the payload type.
    public let payloadType: UInt8
    /// The 16-bit sequence number.
    public let sequenceNumber: UInt16
    /// The media timestamp.
    public let timestamp: UInt32
    /// The synchronization source.
    public let ssrc: UInt32
    /// CC: how many CSRC identifiers follow the fixed header (at offset 12).
    public let csrcCount: Int
    /// The extension's profile-defined 16 bits, when the X bit is set.
    public let extensionProfile: UInt16?
    /// Where the extension data (without its 4-octet header) lies, when the X bit is set.
    public let extensionRange: Range<Int>?
    /// Where the payload lies: after the header, before any padding.
    public let payloadRange: Range<Int>
    /// Padding octets at the end (0 when the P bit is clear).
    public let paddingCount: Int

    /// Length of the header (fixed part, CSRCs, extension): where the payload starts.
    public var headerLength: Int { payloadRange.lowerBound }

    /// Validates `bytes` as an RTP packet and returns where its parts lie.
    ///
    /// Checks (RFC 3550 A.1, per packet): at least 12 octets, version 2, the CSRC list and
    /// extension within the packet, a padding count of at least 1 that fits after the header.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RTPParseError) -> RTPPacketView {
        let length = bytes.count
        guard length >= 12 else { throw .truncatedHeader(length: length) }
        let first = bytes[0]
        let version = first >> 6
        guard version == 2 else { throw .unsupportedVersion(version) }
        let csrcCount = Int(first & 0x0F)
        var offset = 12 + 4 * csrcCount
        guard offset <= length else { throw .csrcListBeyondPacket(csrcCount: csrcCount, length: length) }
        var extensionProfile: UInt16?
        var extensionRange: Range<Int>?
        if first & 0x10 != 0 {
            guard offset + 4 <= length else { throw .extensionBeyondPacket(needed: offset + 4, length: length) }
            let words = Int(RTPWire.uint16(bytes, offset + 2))
            let end = offset + 4 + 4 * words
            guard end <= length else { throw .extensionBeyondPacket(needed: end, length: length) }
            extensionProfile = RTPWire.uint16(bytes, offset)
            extensionRange = (offset + 4)..<end
            offset = end
        }
        var padding = 0
        if first & 0x20 != 0 {
            guard offset < length else { throw .paddingBeyondPayload(paddingCount: 1, available: 0) }
            padding = Int(bytes[length - 1])
            guard padding > 0 else { throw .zeroPaddingCount }
            guard padding <= length - offset else {
                throw .paddingBeyondPayload(paddingCount: padding, available: length - offset)
            }
        }
        let second = bytes[1]
        return RTPPacketView(
            marker: second & 0x80 != 0, payloadType: second & 0x7F,
            sequenceNumber: RTPWire.uint16(bytes, 2), timestamp: RTPWire.uint32(bytes, 4),
            ssrc: RTPWire.uint32(bytes, 8), csrcCount: csrcCount,
            extensionProfile: extensionProfile, extensionRange: extensionRange,
            payloadRange: offset..<(length - padding), paddingCount: padding)
    }

    /// Same as `parse(_:)` over typed bytes.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(RTPParseError) -> RTPPacketView {
        try parse(UnsafeRawBufferPointer(bytes))
    }

    /// The CSRC identifier at `index` (0..<csrcCount) read from the buffer this view was
    /// parsed from.
    public func csrc(at index: Int, in bytes: UnsafeRawBufferPointer) -> UInt32 {
        precondition(index >= 0 && index < csrcCount, "CSRC index out of range")
        return RTPWire.uint32(bytes, 12 + 4 * index)
    }

    /// The payload as a slice of the buffer this view was parsed from (no copy).
    public func payload(in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[payloadRange])
    }

    /// The whole header as an owned value (allocates for CSRCs and extension data).
    public func header(in bytes: UnsafeRawBufferPointer) -> RTPHeader {
        let csrcs = (0..<csrcCount).map { csrc(at: $0, in: bytes) }
        var headerExtension: RTPHeaderExtension?
        if let profile = extensionProfile, let range = extensionRange {
            headerExtension = RTPHeaderExtension(profile: profile, data: Array(bytes[range]))
        }
        return RTPHeader(
            marker: marker, payloadType: payloadType, sequenceNumber: sequenceNumber,
            timestamp: timestamp, ssrc: ssrc, csrcs: csrcs, headerExtension: headerExtension)
    }
}

/// An RTP packet as an owned value: for tests, tools and anything off the hot path.
public struct RTPPacket: Sendable, Equatable, Hashable {
    /// The header fields.
    public var header: RTPHeader
    /// The payload octets (padding excluded).
    public var payload: [UInt8]
    /// Padding octets appended after the payload: 0 for none, else 1...255.
    public var paddingCount: Int

    /// A packet with `header`, `payload` and `paddingCount` octets of padding.
    public init(header: RTPHeader, payload: [UInt8], paddingCount: Int = 0) {
        self.header = header
        self.payload = payload
        self.paddingCount = paddingCount
    }

    /// Parses and validates `bytes` (see `RTPPacketView.parse(_:)`).
    public init(parsing bytes: [UInt8]) throws(RTPParseError) {
        self = try RTPWire.withBytes(bytes) { (raw) throws(RTPParseError) -> RTPPacket in
            let view = try RTPPacketView.parse(raw)
            return RTPPacket(
                header: view.header(in: raw), payload: Array(raw[view.payloadRange]),
                paddingCount: view.paddingCount)
        }
    }

    /// Octets this packet takes on the wire.
    public var encodedLength: Int { header.encodedLength + payload.count + paddingCount }

    /// Writes `header`, `payload` and `paddingCount` octets of padding into `buffer` and
    /// returns the packet length. `payload` may already sit at `header.encodedLength` in
    /// `buffer` (encoded in place): it is then not copied.
    public static func build(
        header: RTPHeader, payload: UnsafeRawBufferPointer, paddingCount: Int = 0,
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(RTPBuildError) -> Int {
        guard (0...255).contains(paddingCount) else { throw .invalidPaddingCount(paddingCount) }
        let needed = header.encodedLength + payload.count + paddingCount
        guard buffer.count >= needed else { throw .bufferTooSmall(needed: needed, available: buffer.count) }
        let headerLength = try header.write(into: buffer, hasPadding: paddingCount > 0)
        RTPWire.copy(payload, buffer, headerLength)
        let end = headerLength + payload.count
        if paddingCount > 0 {
            for index in end..<(end + paddingCount - 1) { buffer[index] = 0 }
            buffer[end + paddingCount - 1] = UInt8(paddingCount)
        }
        return needed
    }

    /// Writes this packet into `buffer` and returns its length.
    public func write(into buffer: UnsafeMutableRawBufferPointer) throws(RTPBuildError) -> Int {
        try RTPWire.withBytes(payload) { (raw) throws(RTPBuildError) -> Int in
            try RTPPacket.build(header: header, payload: raw, paddingCount: paddingCount, into: buffer)
        }
    }

    /// The packet's wire octets.
    public func serialize() throws(RTPBuildError) -> [UInt8] {
        try RTPWire.makeBytes(count: encodedLength) { (raw) throws(RTPBuildError) -> Int in
            try write(into: raw)
        }
    }
}

/// RTP/RTCP multiplexing on one port (RFC 5761 §4): RTCP packet types 192...223 sit where
/// RTP has M + PT, so the second octet tells them apart when RTP avoids PTs 64...95.
public enum RTPMultiplexing {
    /// True when `bytes` looks like RTCP rather than RTP (second octet in 192...223).
    public static func isRTCP(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 2 && (192...223).contains(bytes[1])
    }
}
