import HTTP

/// A blocking HTTP/1.1 client for the gateway's control API at `http://host:port` or
/// `https://host:port` (the certificate checked against `caFile` or the system store, and
/// its name against the URL's host, RFC 6125).
///
/// Each request opens a fresh TCP connection and sends `Connection: close`, so a request
/// never sees another's bytes and there is no pool to go stale. Safe to use from several
/// threads at once (it holds no mutable state).
public struct HTTPClient: Sendable {
    /// The URL the client was made with.
    public let baseURL: String
    /// Header fields sent with every request (e.g. `Authorization: Bearer <key>`); a
    /// request's own `headers` win over these.
    public var defaultHeaders: [String: String]
    /// Largest response body accepted, in bytes (default 64 MiB).
    public var maxBodyBytes: Int = 64 << 20

    private let url: ClientURL
    private let tls: ClientTLS?

    /// A client for `baseURL`: `http://` or `https://` with an IPv4 literal, `[IPv6]`
    /// literal, `localhost` or a DNS name, an optional port (default 80, or 443 for https) and
    /// an optional path prefix that every request's `path` is appended to.
    ///
    /// - Parameter caFile: for `https://`, the PEM file of the CAs to trust; nil: the system
    ///   trust store. A file that cannot be read throws `.invalidURL` here.
    public init(baseURL: String, defaultHeaders: [String: String] = [:], caFile: String? = nil) throws(IrisTransportError) {
        let url = try ClientURL.parse(baseURL)
        guard url.scheme == .http || url.scheme == .https else {
            throw .invalidURL(baseURL, reason: "HTTPClient needs an http:// or https:// URL")
        }
        self.url = url
        self.baseURL = baseURL
        self.defaultHeaders = defaultHeaders
        tls = url.scheme.isSecure ? try ClientTLS(host: url.host, caFile: caFile, url: baseURL) : nil
    }

    /// Sends one request and reads the whole response.
    ///
    /// - Parameters:
    ///   - method: `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD`, ...
    ///   - path: path and query, starting with `/`, appended to the base URL's path.
    ///   - headers: extra header fields. `Host`, `Content-Length` and `Connection` are set
    ///     by the client; `User-Agent` and `Accept` have defaults you may override.
    ///   - body: sent with a Content-Length; nil sends none (but `Content-Length: 0` for
    ///     POST, PUT and PATCH, which servers expect).
    ///   - timeout: seconds for the whole exchange (connect, send, response).
    /// - Returns: the status code, header fields with lower-cased names (repeated fields
    ///   joined with ", "), and the body (de-chunked). 1xx interim responses are skipped.
    /// - Throws: `IrisTransportError`: `.connectionRefused`, `.timeout`,
    ///   `.malformedResponse`, `.connectionClosed`, `.tls` (certificate, name), ...; never for
    ///   a 4xx/5xx status.
    public func request(
        method: String, path: String, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Double = 10
    ) throws(IrisTransportError) -> (status: Int, headers: [String: String], body: [UInt8]) {
        let deadline = Deadline(seconds: timeout)
        let target = try joinedTarget(path)
        var fields: [String: (String, String)] = ["user-agent": ("User-Agent", "irisgw-client"), "accept": ("Accept", "*/*")]
        for (name, value) in defaultHeaders { fields[name.lowercased()] = (name, value) }
        for (name, value) in headers { fields[name.lowercased()] = (name, value) }
        for reserved in ["host", "content-length", "connection", "transfer-encoding"] { fields[reserved] = nil }
        var ordered = fields.values.sorted { $0.0.lowercased() < $1.0.lowercased() }
        if let body {
            ordered.append(("Content-Length", String(body.count)))
        } else if ["POST", "PUT", "PATCH"].contains(method) {
            ordered.append(("Content-Length", "0"))
        }
        ordered.append(("Connection", "close"))
        var message: [UInt8]
        do { message = try HTTPRequestWriter.head(method: method, target: target, host: url.hostHeader, headers: ordered) } catch {
            throw .invalidRequest(error.message)
        }
        if let body { message += body }

        let stream = try TCPStream.connect(host: url.host, port: url.port, deadline: deadline, tls: tls)
        defer { stream.shutdown() }
        try stream.send(message, deadline: deadline, operation: "sending \(method) \(target)")
        var reader = StreamReader(stream: stream)
        while true {
            let bytes = try reader.readHead(limit: 64 * 1024, deadline: deadline, operation: "waiting for the response to \(method) \(target)")
            let head: HTTPResponseHead
            do { head = try HTTPResponseHead.parse(bytes) } catch { throw .malformedResponse(error.message) }
            // 100 Continue and other interim answers precede the real one (RFC 9110 §15.2).
            if head.status < 200 && head.status != 101 { continue }
            let responseBody = try HTTPBodyReader.read(for: head, method: method, from: &reader, limit: maxBodyBytes, deadline: deadline)
            return (head.status, head.headers, responseBody)
        }
    }

    /// The base URL's path prefix (without a trailing "/") followed by `path`.
    private func joinedTarget(_ path: String) throws(IrisTransportError) -> String {
        guard path.hasPrefix("/") else { throw .invalidRequest("path \"\(path)\" must start with /") }
        var prefix = url.target
        if let query = prefix.firstIndex(of: "?") { prefix = String(prefix[..<query]) }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return prefix + path
    }
}
