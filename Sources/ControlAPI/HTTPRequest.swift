// The value types the control API's handlers see: the server parses the wire into an
// `HTTPRequest` (the HTTP module's HTTPRequestParser) and writes an `HTTPResponse` back
// (HTTPResponseEncoder.swift).

import IrisAPI

/// One HTTP request (or the upgrade request of a WebSocket).
public struct HTTPRequest: Sendable {
    /// "GET", "POST", ... as sent.
    public var method: String
    /// The percent-decoded path without the query, with dot segments removed ("/calls/42").
    public var path: String
    /// Query parameters, percent-decoded ('+' is a space). When a name repeats, the last value wins.
    public var query: [String: String]
    /// Header fields with lowercased names; repeated fields are joined with ", ".
    public var headers: [String: String]
    /// The whole body (empty for a WebSocket upgrade).
    public var body: [UInt8]
    /// The client's IP address, without the port ("127.0.0.1", "::1"; an IPv4 client of a
    /// dual-stack `[::]` listener is shown as IPv4).
    public var remoteAddress: String
    /// The client's TCP port.
    public var remotePort: Int

    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String = "", remotePort: Int = 0
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
    }
}

/// application/x-www-form-urlencoded decoding for query strings.
enum QueryString {
    /// "a=1&b=x%20y&flag" -> ["a": "1", "b": "x y", "flag": ""].
    static func parse(_ raw: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in raw.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard !name.isEmpty else { continue }
            result[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return result
    }

    /// Percent-decodes `s`, turning '+' into a space. A malformed escape stays as written.
    static func decode(_ s: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count)
        var it = s.utf8.makeIterator()
        var pending: [UInt8] = []
        while let b = it.next() {
            switch b {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                pending = [b]
                guard let h = it.next() else { bytes += pending; continue }
                pending.append(h)
                guard let l = it.next() else { bytes += pending; continue }
                pending.append(l)
                if let hi = hexValue(h), let lo = hexValue(l) {
                    bytes.append(hi << 4 | lo)
                } else {
                    bytes += pending
                }
            default:
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
