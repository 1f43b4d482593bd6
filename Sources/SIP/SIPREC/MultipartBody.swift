import Crypto

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

    /// The parts of a body whose Content-Type is `multipart/*` with a `boundary` parameter
    /// (quoted or not); nil for any other type or a body that does not parse.
    public static func parse(_ body: [UInt8], contentType: String) -> MultipartBody? {
        guard mediaType(of: contentType).hasPrefix("multipart/") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, String(pair[0]).trimmingSIPWhitespace().lowercased() == "boundary" else {
                continue
            }
            var boundary = String(pair[1]).trimmingSIPWhitespace()
            if boundary.count >= 2, boundary.hasPrefix("\""), boundary.hasSuffix("\"") {
                boundary = String(boundary.dropFirst().dropLast())
            }
            return boundary.isEmpty ? nil : parse(body, boundary: boundary)
        }
        return nil
    }

    /// A Content-Type value's `type/subtype`, lowercased, without parameters.
    public static func mediaType(of contentType: String) -> String {
        let head = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(head).trimmingSIPWhitespace().lowercased()
    }

    /// The first part whose Content-Type is `mediaType` (`type/subtype`, any case).
    public func firstPart(ofType mediaType: String) -> Part? {
        parts.first { $0.contentType.map(Self.mediaType(of:)) == mediaType.lowercased() }
    }

    /// A boundary no part will contain by chance (RFC 2046 §5.1.1: at most 70 characters).
    public static func newBoundary() -> String {
        "irisgw-" + Crypto.hex(Crypto.randomBytes(count: 12))
    }
}

extension MultipartBody.Part {
    /// The value of this part's first header called `name` (any case).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) }?.value
    }

    /// The part's Content-Type, if it has one (RFC 2046 would default to text/plain).
    public var contentType: String? { header("Content-Type") }
}
