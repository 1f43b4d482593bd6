/// A `multipart/mixed` body (RFC 2046 §5.1), as a SIPREC INVITE carries its SDP and metadata
/// (RFC 7866 §6.1): each part with its own headers, separated by `--boundary`, closed by
/// `--boundary--`.
public struct MultipartBody: Sendable, Equatable {
    public struct Part: Sendable, Equatable {
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public init(headers: [(name: String, value: String)], body: [UInt8]) {
            self.headers = headers
            self.body = body
        }

        public static func == (a: Part, b: Part) -> Bool {
            a.body == b.body && a.headers.map(\.name) == b.headers.map(\.name)
                && a.headers.map(\.value) == b.headers.map(\.value)
        }
    }

    public var boundary: String
    public var parts: [Part]

    public init(boundary: String, parts: [Part]) {
        self.boundary = boundary
        self.parts = parts
    }

    /// The message's Content-Type for this body.
    public var contentType: String { "multipart/mixed;boundary=" + boundary }

    public func serialize() -> [UInt8] {
        var out: [UInt8] = []
        for part in parts {
            out += Array("--\(boundary)\r\n".utf8)
            for h in part.headers { out += Array("\(h.name): \(h.value)\r\n".utf8) }
            out += Array("\r\n".utf8)
            out += part.body
            out += Array("\r\n".utf8)
        }
        out += Array("--\(boundary)--\r\n".utf8)
        return out
    }

    /// The parts of a `multipart/*` body with this boundary; nil when it has none or is not
    /// closed. Headers are split at their first colon and trimmed.
    public static func parse(_ body: [UInt8], boundary: String) -> MultipartBody? {
        let text = String(decoding: body, as: UTF8.self)
        let delimiter = "--" + boundary
        guard text.contains(delimiter + "--") else { return nil }
        var parts: [Part] = []
        let pieces = text.components(separatedBy: delimiter).dropFirst()
        for piece in pieces {
            if piece.hasPrefix("--") { break }
            // "\r\n" is one Character (a grapheme cluster): dropped as one.
            var chunk = Substring(piece)
            if chunk.hasPrefix("\r\n") { chunk = chunk.dropFirst() }
            guard let split = chunk.range(of: "\r\n\r\n") else { return nil }
            let lines = String(chunk[..<split.lowerBound]).components(separatedBy: "\r\n")
            let headers = lines.compactMap { line -> (String, String)? in
                let pair = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2 else { return nil }
                return (String(pair[0]).trimmingSIPWhitespace(), String(pair[1]).trimmingSIPWhitespace())
            }
            var content = chunk[split.upperBound...]
            if content.hasSuffix("\r\n") { content = content.dropLast() }
            parts.append(Part(headers: headers.map { (name: $0.0, value: $0.1) }, body: Array(content.utf8)))
        }
        return parts.isEmpty ? nil : MultipartBody(boundary: boundary, parts: parts)
    }
}
