import IOCore

/// An `http://`, `https://`, `ws://` or `wss://` URL taken apart: the forms the client
/// speaks.
struct ClientURL: Sendable, Equatable {
    enum Scheme: String, Sendable {
        case http, https, ws, wss

        /// TLS (`https`, `wss`).
        var isSecure: Bool { self == .https || self == .wss }
        /// 443 with TLS, else 80.
        var defaultPort: Int { isSecure ? 443 : 80 }
    }

    let scheme: Scheme
    /// IPv4/IPv6 literal (no brackets), `localhost` or a DNS name, lower case. Over TLS the
    /// server's certificate must name it (RFC 6125).
    let host: String
    let port: Int
    /// Path and query, starting with "/" (no trailing "/" added).
    let target: String

    /// `Host` header value: brackets around IPv6, the port always (it is never implied
    /// here, and servers accept it).
    var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `text`; `http` and `ws` default to port 80, `https` and `wss` to 443.
    static func parse(_ text: String) throws(IrisTransportError) -> ClientURL {
        guard let marker = text.range(of: "://") else {
            throw .invalidURL(text, reason: "expected scheme://host:port")
        }
        let schemeText = text[..<marker.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            throw .invalidURL(text, reason: "unsupported scheme \"\(schemeText)\" (http, https, ws or wss)")
        }
        let rest = text[marker.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        var target = String(rest[authorityEnd...])
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        guard !authority.isEmpty, !authority.contains("@") else {
            throw .invalidURL(text, reason: "expected host[:port] after the scheme (no user info)")
        }
        guard let address = SocketAddress.parse(authority, defaultPort: scheme.defaultPort) else {
            throw .invalidURL(text, reason: "bad host or port in \"\(authority)\"")
        }
        let host = address.host.lowercased()
        guard
            host == "localhost" || SocketAddress(host: host, port: 0).withSockAddr({ _, _ in true }) != nil
                || isDNSName(host)
        else {
            throw .invalidURL(
                text, reason: "host must be an IPv4/IPv6 literal, localhost or a DNS name, got \"\(address.host)\"")
        }
        guard (1...65535).contains(address.port) else {
            throw .invalidURL(text, reason: "port \(address.port) is outside 1...65535")
        }
        return ClientURL(scheme: scheme, host: host, port: address.port, target: target)
    }

    /// Letters, digits and hyphens in dot-separated labels of 1-63 (a trailing dot allowed).
    static func isDNSName(_ host: String) -> Bool {
        var name = Substring(host)
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        } && !name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }
    }
}
