/// Cuts SIP messages out of a TCP byte stream (RFC 3261 §18.3): the header section ends at
/// the first empty line and Content-Length (mandatory on streams) gives the body size.
/// Handles partial reads and several messages in one read; CRLF keep-alives between
/// messages (RFC 5626 §3.5.1) are skipped. Limits stop a peer from making us buffer forever.
/// The stream layer's framer for SIP (IOCore's `StreamFramer`).
public struct SIPStreamFramer: StreamFramer, Sendable {
    public enum FramingError: Error, Sendable, Equatable {
        case headerTooLarge
        case bodyTooLarge(Int)
        case missingContentLength
        case badContentLength
        /// The bytes cannot start a SIP message (a TLS ClientHello, HTTP, binary noise):
        /// nothing that follows on the stream can be framed either.
        case notSIP
    }

    public var maxHeaderBytes: Int
    public var maxBodyBytes: Int
    private var buffer: [UInt8] = []

    public init(maxHeaderBytes: Int = 16_384, maxBodyBytes: Int = 65_535) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Bytes received but not yet part of a complete message.
    public var pending: Int { buffer.count }
    /// Double-CRLF keep-alive pings (RFC 5626 §3.5.1) seen between messages by the last
    /// `append`; each wants a single-CRLF pong.
    public private(set) var pings = 0

    /// Appends `bytes` and returns every complete message now available.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(FramingError) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        pings = 0
        var out: [[UInt8]] = []
        while true {
            var start = 0
            while start < buffer.count, buffer[start] == 0x0D || buffer[start] == 0x0A { start += 1 }
            // A lone CRLF is a pong (or noise); two in a row are a ping.
            if buffer[..<start].lazy.filter({ $0 == 0x0A }).count >= 2 { pings += 1 }
            if start > 0 { buffer.removeFirst(start) }
            guard !buffer.isEmpty else { break }
            try Self.checkStartLine(buffer)
            guard let headerEnd = Self.headerEnd(buffer) else {
                if buffer.count > maxHeaderBytes { throw .headerTooLarge }
                break
            }
            if headerEnd > maxHeaderBytes { throw .headerTooLarge }
            let length = try Self.contentLength(buffer[..<headerEnd])
            guard length <= maxBodyBytes else { throw .bodyTooLarge(length) }
            let total = headerEnd + length
            guard buffer.count >= total else { break }
            out.append(Array(buffer[..<total]))
            buffer.removeFirst(total)
        }
        return out
    }

    /// `append` for bytes read from a socket (the stream layer's call), specialised here.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) throws(FramingError) -> [[UInt8]] {
        try append(bytes[...])
    }

    /// The longest start line we wait for before judging the stream.
    static let maxStartLine = 4096

    /// A start line is `Method SP Request-URI SP SIP-Version` or `SIP-Version SP ...`
    /// (RFC 3261 §7.1-7.2): it begins with a token character and, once complete, names
    /// "SIP/". Anything else is refused as soon as it shows, not after 16 KiB or never.
    static func checkStartLine(_ b: [UInt8]) throws(FramingError) {
        guard SIPScanner.isTokenChar(b[0]) else { throw .notSIP }
        let window = b.prefix(maxStartLine)
        guard let lf = window.firstIndex(of: 0x0A) else {
            if b.count >= maxStartLine { throw .notSIP }
            return
        }
        let line = window[..<lf]
        let sip: [UInt8] = Array("SIP/".utf8)
        let found = line.indices.contains { i in
            i + 4 <= lf && zip(line[i..<(i + 4)], sip).allSatisfy { ($0 & 0xDF) == ($1 & 0xDF) }
        }
        if !found { throw .notSIP }
    }

    /// Index just past the CRLFCRLF (or LFLF) that ends the header section.
    static func headerEnd(_ b: [UInt8]) -> Int? {
        var i = 0
        while i + 1 < b.count {
            if b[i] == 0x0A {
                if b[i + 1] == 0x0A { return i + 2 }
                if b[i + 1] == 0x0D, i + 2 < b.count, b[i + 2] == 0x0A { return i + 3 }
            }
            i += 1
        }
        return nil
    }

    /// Finds Content-Length (or its compact form `l`) at the start of a header line.
    static func contentLength(_ header: ArraySlice<UInt8>) throws(FramingError) -> Int {
        var found: Int? = nil
        var lineStart = header.startIndex
        for i in header.indices where header[i] == 0x0A {
            var end = i
            if end > lineStart, header[end - 1] == 0x0D { end -= 1 }
            let line = header[lineStart..<end]
            lineStart = i + 1
            // A line starting with SP/HT continues the previous header; it names none.
            if let first = line.first, first == 0x20 || first == 0x09 { continue }
            guard let colon = line.firstIndex(of: 0x3A) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self).trimmingSIPWhitespace().lowercased()
            guard name == "content-length" || name == "l" else { continue }
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSIPWhitespace()
            // 1*DIGIT only: Int("+5") and Int("-0") would otherwise pass.
            guard found == nil, !value.isEmpty, value.utf8.allSatisfy(isDigit), let n = Int(value) else {
                throw .badContentLength
            }
            found = n
        }
        guard let found else { throw .missingContentLength }
        return found
    }
}
