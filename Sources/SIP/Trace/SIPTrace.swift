/// The SIP messages of one call as they crossed the wire, in order: what a carrier engineer
/// needs to argue a call with a carrier (issue 14: `GET /v1/sessions/{roomId}/sip`, the
/// ladder of the test report). A plain value, bounded in entries and bytes; credentials and
/// SDES keys are redacted on the way in, so a trace can be shown, stored and sent without
/// leaking them.
public struct SIPTrace: Sendable, Equatable {
    public enum Direction: String, Sendable, Codable { case sent, received }

    /// One message on the wire.
    public struct Entry: Sendable, Equatable, Codable {
        /// Seconds since 1970 when it was sent or read.
        public var time: Double
        public var direction: Direction
        /// `UDP`, `TCP` or `TLS`.
        public var transport: String
        /// Our address and the peer's, `host:port`.
        public var local: String
        public var remote: String
        /// The message, with `Authorization` and `Proxy-Authorization` credentials and
        /// `a=crypto` keys redacted (`SIPTrace.redact`).
        public var text: String
        /// The same bytes went the same way before (a retransmission).
        public var retransmission: Bool

        /// The request or status line.
        public var firstLine: Substring { text.prefix { $0 != "\r\n" && $0 != "\n" && $0 != "\r" } }
    }

    /// At most this many entries and this many bytes of text are kept (defaults 200 and
    /// 256 KiB); past either, messages from the middle of the call go first, so the setup
    /// and the end stay.
    public let maxEntries: Int
    public let maxBytes: Int
    public private(set) var entries: [Entry] = []
    /// Messages left out to stay within the bounds.
    public private(set) var dropped = 0
    private var bytes = 0

    public init(maxEntries: Int = 200, maxBytes: Int = 256 * 1024) {
        self.maxEntries = max(2, maxEntries)
        self.maxBytes = max(1024, maxBytes)
    }

    /// Adds a message (its raw text as sent or read).
    public mutating func record(
        time: Double, direction: Direction, transport: String, local: String, remote: String, text: String
    ) {
        let clean = Self.redact(text)
        let repeated = entries.contains { $0.direction == direction && $0.remote == remote && $0.text == clean }
        entries.append(
            Entry(
                time: time, direction: direction, transport: transport, local: local, remote: remote,
                text: clean, retransmission: repeated))
        bytes += clean.utf8.count
        while entries.count > maxEntries || (bytes > maxBytes && entries.count > 2) {
            let gone = entries.remove(at: entries.count / 2)
            bytes -= gone.text.utf8.count
            dropped += 1
        }
    }

    /// `text` with the credentials of every `Authorization` and `Proxy-Authorization`
    /// header replaced: the scheme and the `username`, `realm` and `uri` parameters stay
    /// (they say who tried what), `response`, `cnonce`, `nonce` and any other go. The SDES
    /// keys of the body's `a=crypto` lines go too (`redactedCryptoLine`), letter for letter,
    /// so Content-Length stays true.
    public static func redact(_ text: String) -> String {
        let credentials = text.range(of: "authorization", options: .caseInsensitive) != nil
        let keys = text.range(of: "a=crypto:", options: .caseInsensitive) != nil
        guard credentials || keys else { return text }
        var out: [Substring] = []
        var bodyStart: Int?
        // "\r\n" is one Character in Swift; a message with bare LF line ends comes out with CRLF.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\r\n" || $0 == "\n" }) {
            if bodyStart == nil, line.isEmpty { bodyStart = out.count + 1 }
            if bodyStart != nil, keys, let clean = redactedCryptoLine(line) {
                out.append(clean)
                continue
            }
            guard bodyStart == nil, let colon = line.firstIndex(of: ":") else {
                out.append(line)
                continue
            }
            let name = trimmed(line[..<colon]).lowercased()
            guard name == "authorization" || name == "proxy-authorization" else {
                out.append(line)
                continue
            }
            out.append(Substring(line[...colon] + " " + redactedCredentials(String(line[line.index(after: colon)...]))))
        }
        return out.joined(separator: "\r\n")
    }

    private static func redactedCredentials(_ value: String) -> String {
        let body = trimmed(Substring(value))
        let scheme = body.prefix { $0 != " " }
        var kept: [Substring] = []
        for part in body.dropFirst(scheme.count).split(separator: ",") {
            let p = trimmed(part)
            let key = p.prefix { $0 != "=" }.lowercased()
            if ["username", "realm", "uri", "algorithm"].contains(key) { kept.append(p) }
        }
        return "\(scheme) " + (kept.map(String.init) + ["[credentials redacted]"]).joined(separator: ", ")
    }

    private static func trimmed(_ s: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = s.firstIndex(where: { !isSpace($0) }), let end = s.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return s[start...end]
    }
}
