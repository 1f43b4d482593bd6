/// The RFC 4733 telephone-event payload could not be parsed.
public enum TelephoneEventError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The payload is shorter than the 4 bytes of one event report.
    case truncated(byteCount: Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .truncated(let count): "telephone-event payload of \(count) bytes; an event report is 4 bytes"
        }
    }
}

/// One RFC 4733 event report: the payload of an RTP packet of type `telephone-event`.
///
/// RFC 4733 §2.3:
///
///      0                   1                   2                   3
///      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |     event     |E|R| volume    |          duration             |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///
/// - event: the event code; DTMF keys 0-9 are 0-9, `*` 10, `#` 11, A-D 12-15 (§3.2).
/// - E: set in the report(s) that end the event.
/// - R: reserved; sent as 0, ignored on receipt (kept here only so a parse/serialize
///   round trip is exact).
/// - volume: the power level in -dBm0 (0...63); 0 is loudest.
/// - duration: the event's length so far, in RTP timestamp units, counted from the
///   packet's RTP timestamp (the event's start).
public struct TelephoneEvent: Sendable, Hashable {
    /// The byte length of one event report.
    public static let byteCount = 4

    /// The event code (0-15 for DTMF).
    public var event: UInt8
    /// The E bit: this report ends the event.
    public var isEnd: Bool
    /// The R bit (reserved).
    public var reserved: Bool
    /// The volume in -dBm0 (6 bits; larger values are truncated on serialisation).
    public var volume: UInt8
    /// The duration in RTP timestamp units.
    public var duration: UInt16

    /// An event report. `volume` defaults to 10 (-10 dBm0), a typical DTMF level.
    public init(event: UInt8, isEnd: Bool = false, reserved: Bool = false, volume: UInt8 = 10, duration: UInt16) {
        self.event = event
        self.isEnd = isEnd
        self.reserved = reserved
        self.volume = volume
        self.duration = duration
    }

    /// A report for a DTMF key.
    public init(digit: DTMFDigit, isEnd: Bool = false, volume: UInt8 = 10, duration: UInt16) {
        self.init(event: digit.event, isEnd: isEnd, volume: volume, duration: duration)
    }

    /// The DTMF key this report carries, or nil for non-DTMF events (codes above 15).
    public var digit: DTMFDigit? { DTMFDigit(event: event) }

    /// Parses the first event report of a telephone-event payload. Later reports (RFC 4733
    /// §2.5.1.5 multiple events, or RFC 2198 redundancy handled elsewhere) are ignored.
    public static func parse(_ bytes: some Collection<UInt8>) throws(TelephoneEventError) -> TelephoneEvent {
        guard bytes.count >= byteCount else { throw .truncated(byteCount: bytes.count) }
        var index = bytes.startIndex
        let b0 = bytes[index]; bytes.formIndex(after: &index)
        let b1 = bytes[index]; bytes.formIndex(after: &index)
        let b2 = bytes[index]; bytes.formIndex(after: &index)
        let b3 = bytes[index]
        return TelephoneEvent(
            event: b0, isEnd: b1 & 0x80 != 0, reserved: b1 & 0x40 != 0, volume: b1 & 0x3F,
            duration: UInt16(b2) << 8 | UInt16(b3))
    }

    /// The four wire bytes, in order.
    public var bytes: (UInt8, UInt8, UInt8, UInt8) {
        let flags: UInt8 = (isEnd ? 0x80 : 0) | (reserved ? 0x40 : 0) | (volume & 0x3F)
        return (event, flags, UInt8(truncatingIfNeeded: duration >> 8), UInt8(truncatingIfNeeded: duration))
    }

    /// The report as 4 bytes.
    public func serialize() -> [UInt8] {
        var out: [UInt8] = []
        serialize(into: &out)
        return out
    }

    /// Appends the 4 bytes to `out` (no allocation once `out` has the capacity).
    public func serialize(into out: inout [UInt8]) {
        let b = bytes
        out.append(b.0)
        out.append(b.1)
        out.append(b.2)
        out.append(b.3)
    }

    /// Writes the 4 bytes at the start of `buffer`; returns 4, or 0 when the buffer is
    /// too small (nothing written).
    @discardableResult
    public func serialize(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard buffer.count >= Self.byteCount else { return 0 }
        let b = bytes
        buffer[0] = b.0
        buffer[1] = b.1
        buffer[2] = b.2
        buffer[3] = b.3
        return Self.byteCount
    }
}
