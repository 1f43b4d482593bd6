// The request target as handlers see it: path percent-decoded with dot segments removed,
// query decoded into pairs. A path whose escapes hide a NUL, a control byte, a `/` or a `\`
// is answered 404 before any handler runs: a router (or anything it passes the path to)
// that splits on `/` or stops at NUL would otherwise see another path than the one checked.

/// A request target split into what `HTTPRequest` carries.
struct HTTPTarget: Equatable {
    var path: String
    var query: [String: String]

    enum Problem: Error, Equatable {
        /// Not a target this server serves (400).
        case malformed
        /// An unsafe escape or byte in the path (404 without the handler).
        case unsafePath
    }

    /// Origin-form ("/a/b?x=1"), absolute-form ("http://host/a", RFC 9112 §3.2.2: the
    /// authority is ignored) or "*" (OPTIONS). Bytes were checked to be visible ASCII.
    static func parse(_ target: String) throws(Problem) -> HTTPTarget {
        var rest = Substring(target)
        if target == "*" { return HTTPTarget(path: "*", query: [:]) }
        for scheme in ["http://", "https://"] where rest.lowercased().hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
            rest = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
            break
        }
        guard rest.hasPrefix("/") else { throw .malformed }
        // No fragment belongs in a request target; drop one a client sent anyway.
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let rawPath: Substring
        var query: [String: String] = [:]
        if let q = rest.firstIndex(of: "?") {
            rawPath = rest[..<q]
            query = QueryString.parse(String(rest[rest.index(after: q)...]))
        } else {
            rawPath = rest
        }
        return HTTPTarget(path: removeDotSegments(try decodePath(rawPath)), query: query)
    }

    /// Percent-decodes a path ('+' stays '+'); a malformed escape stays as written.
    static func decodePath(_ raw: Substring) throws(Problem) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.utf8.count)
        let bytes = Array(raw.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\\") { throw .unsafePath }
            if b == UInt8(ascii: "%"), i + 2 < bytes.count, let hi = QueryString.hexValue(bytes[i + 1]),
                let lo = QueryString.hexValue(bytes[i + 2])
            {
                let decoded = hi << 4 | lo
                guard decoded >= 0x20, decoded != 0x7F, decoded != UInt8(ascii: "/"), decoded != UInt8(ascii: "\\")
                else {
                    throw .unsafePath
                }
                out.append(decoded)
                i += 3
                continue
            }
            out.append(b)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 §5.2.4 on a decoded absolute path: "/a/./b/../c" -> "/a/c". Never climbs
    /// above "/".
    static func removeDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}
