import Glibc
import IOCore

/// One SIP message as it crossed the wire, handed to `SIPUserAgent.wireTap`: what a
/// session's trace, a capture file and a HEP collector are made of.
public struct SIPWireMessage: Sendable {
    public typealias Direction = SIPTrace.Direction

    /// Seconds since 1970 (UTC) when the message was sent or read.
    public var time: Double
    public var direction: Direction
    public var transport: SIPTransportProtocol
    /// Our address (the socket's; a wildcard listener names its wildcard) and the peer's.
    public var local: SocketAddress
    public var remote: SocketAddress
    /// The message as framed: one datagram, or one message of a stream.
    public var bytes: [UInt8]

    public init(
        time: Double, direction: Direction, transport: SIPTransportProtocol, local: SocketAddress,
        remote: SocketAddress, bytes: [UInt8]
    ) {
        self.time = time
        self.direction = direction
        self.transport = transport
        self.local = local
        self.remote = remote
        self.bytes = bytes
    }

    /// A response (its start line is `SIP/2.0 ...`, RFC 3261 §7.2), not a request.
    public var isResponse: Bool { bytes.starts(with: Self.responsePrefix) }

    /// How every response's start line begins (RFC 3261 §7.2).
    static let responsePrefix = Array("SIP/2.0 ".utf8)

    /// The wall clock now, as `time` takes it.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// The Call-ID, found by scanning the header lines (`Call-ID:` or compact `i:`, any
    /// case) without parsing the message; nil when there is none. A tap runs for every
    /// message, floods included, so this stays a byte scan.
    public var callID: String? { Self.callID(in: bytes) }

    static func callID(in bytes: [UInt8]) -> String? {
        var lineStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            guard bytes[i] == 0x0A else {
                i += 1
                continue
            }
            // A line ended at i; the next starts after it. An empty line ends the headers.
            lineStart = i + 1
            if lineStart >= n || bytes[lineStart] == 0x0D || bytes[lineStart] == 0x0A { return nil }
            if let value = headerValue(bytes, at: lineStart) { return value }
            i = lineStart
        }
        return nil
    }

    /// The value of a `Call-ID` / `i` header line starting at `start`, else nil.
    private static func headerValue(_ b: [UInt8], at start: Int) -> String? {
        func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c + 0x20 : c }
        var j = start
        let name: [UInt8]
        if lower(b[j]) == UInt8(ascii: "i") {
            name = Array("i".utf8)
        } else if lower(b[j]) == UInt8(ascii: "c") {
            name = Array("call-id".utf8)
        } else {
            return nil
        }
        for c in name {
            guard j < b.count, lower(b[j]) == c else { return nil }
            j += 1
        }
        while j < b.count, b[j] == 0x20 || b[j] == 0x09 { j += 1 }
        guard j < b.count, b[j] == UInt8(ascii: ":") else { return nil }
        j += 1
        while j < b.count, b[j] == 0x20 || b[j] == 0x09 { j += 1 }
        var end = j
        while end < b.count, b[end] != 0x0D, b[end] != 0x0A { end += 1 }
        while end > j, b[end - 1] == 0x20 || b[end - 1] == 0x09 { end -= 1 }
        return end > j ? String(decoding: b[j..<end], as: UTF8.self) : nil
    }
}
