import IOCore

/// An `http://` or `ws://` URL taken apart: the only forms the client speaks (no TLS, no
/// DNS: the gateway is reached by address).
struct ClientURL: Sendable, Equatable {
    enum Scheme: String, Sendable { case http, ws }

    let scheme: Scheme
    /// IPv4/IPv6 literal (no brackets) or `localhost`.
    let host: String
    let port: Int
    /// Path and query, starting with "/" (no trailing "/" added).
    let target: String

    /// `Host` header value: brackets around IPv6, the port always (it is never implied
    /// here, and servers accept it).
    var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `text`; `http` and `ws` both default to port 80.
    static func parse(_ text: String) throws(IrisTransportError) -> ClientURL {
        guard let marker = text.range(of: "://") else {
            throw .invalidURL(text, reason: "expected scheme://host:port")
        }
        let schemeText = text[..<marker.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            let reason = schemeText == "https" || schemeText == "wss"
                ? "TLS (\(schemeText)) is not supported; use http:// or ws://"
                : "unsupported scheme \"\(schemeText)\" (http or ws)"
            throw .invalidURL(text, reason: reason)
        }
        let rest = text[marker.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        var target = String(rest[authorityEnd...])
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        guard !authority.isEmpty, !authority.contains("@") else {
            throw .invalidURL(text, reason: "expected host[:port] after the scheme (no user info)")
        }
        guard let address = SocketAddress.parse(authority, defaultPort: 80) else {
            throw .invalidURL(text, reason: "bad host or port in \"\(authority)\"")
        }
        let host = address.host.lowercased()
        guard host == "localhost" || SocketAddress(host: host, port: 0).withSockAddr({ _, _ in true }) != nil else {
            throw .invalidURL(text, reason: "host must be an IPv4/IPv6 literal or localhost, got \"\(address.host)\"")
        }
        guard (1...65535).contains(address.port) else {
            throw .invalidURL(text, reason: "port \(address.port) is outside 1...65535")
        }
        return ClientURL(scheme: scheme, host: host, port: address.port, target: target)
    }
}
