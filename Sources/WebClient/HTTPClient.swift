import DNS
import Dispatch
import HTTP
import IOCore
import Synchronization

/// An HTTP/1.1 client for the gateway's control API at `http://host:port` or
/// `https://host:port` (the certificate checked against `caFile` or the system store, and
/// its name against the URL's host, RFC 6125).
///
/// Every request runs on the shared client event loop (a thread of its own, started on
/// first use): the name resolved with the DNS module, each address tried in turn, the
/// connection on IOCore's stream layer. `await request(...)` suspends until the answer is in,
/// holding no thread; the synchronous `request(...)` waits for it on the caller's thread;
/// `request(..., completion:)` does not wait. Each request opens a fresh
/// connection and sends `Connection: close`, so a request never sees another's bytes and
/// there is no pool to go stale. Safe to use from several threads at once (it holds no
/// mutable state).
public struct HTTPClient: Sendable {
    /// The URL the client was made with.
    public let baseURL: String
    /// Header fields sent with every request (e.g. `Authorization: Bearer <key>`); a
    /// request's own `headers` win over these.
    public var defaultHeaders: [String: String]
    /// Largest response body accepted, in bytes (default 64 MiB).
    public var maxBodyBytes: Int = 64 << 20

    /// Where names are resolved (default: the system's servers, /etc/hosts first).
    public let dns: DNSResolverConfiguration

    private let url: ClientURL
    private let tls: ClientTLS?

    /// A client for `baseURL`: `http://` or `https://` with an IPv4 literal, `[IPv6]`
    /// literal, `localhost` or a DNS name, an optional port (default 80, or 443 for https) and
    /// an optional path prefix that every request's `path` is appended to.
    ///
    /// - Parameter caFile: for `https://`, the PEM file of the CAs to trust; nil: the system
    ///   trust store. A file that cannot be read throws `.invalidURL` here.
    /// - Parameter dns: the DNS servers a host name is resolved with (default: the system's).
    public init(
        baseURL: String, defaultHeaders: [String: String] = [:], caFile: String? = nil,
        dns: DNSResolverConfiguration = DNSResolverConfiguration()
    ) throws(IrisTransportError) {
        let url = try ClientURL.parse(baseURL)
        guard url.scheme == .http || url.scheme == .https else {
            throw .invalidURL(baseURL, reason: "HTTPClient needs an http:// or https:// URL")
        }
        self.url = url
        self.baseURL = baseURL
        self.defaultHeaders = defaultHeaders
        self.dns = dns
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
        // On the client loop this would wait for itself: use the completion form there.
        ClientLoop.shared.loop.assertNotHere()
        let result = Mutex<Result<HTTPClientResponse, IrisTransportError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        try start(method: method, path: path, headers: headers, body: body, timeout: timeout) { answer in
            result.withLock { $0 = answer }
            done.signal()
        }
        // The loop finishes the exchange by its deadline; the margin only guards a stuck loop.
        if done.wait(timeout: .now() + max(0, timeout.isNaN ? 0 : timeout) + 5) == .timedOut {
            throw .timeout(operation: "\(method) \(path) (the client loop did not answer)", seconds: timeout)
        }
        let response = try result.withLock { $0! }.get()
        return (response.status, response.headers, response.body)
    }

    /// Sends one request and reads the whole response, suspended until it is in: the caller's
    /// thread is free meanwhile (an async test or server does not hold a thread of the
    /// cooperative pool while the client loop works). Parameters, result and errors are those
    /// of the synchronous `request`. The exchange ends by `timeout` (the client loop's own
    /// deadline), whether or not the calling task is cancelled.
    public func request(
        method: String, path: String, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Double = 10
    ) async throws(IrisTransportError) -> (status: Int, headers: [String: String], body: [UInt8]) {
        let answer = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<HTTPClientResponse, IrisTransportError>, Never>) in
            do throws(IrisTransportError) {
                try start(method: method, path: path, headers: headers, body: body, timeout: timeout) {
                    continuation.resume(returning: $0)
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        let response = try answer.get()
        return (response.status, response.headers, response.body)
    }

    /// Sends one request without waiting: `completion` gets the response (or why there is
    /// none, as `request` throws it) on the client event loop, within `timeout` seconds.
    /// Keep the completion short: it runs on the loop every client connection shares.
    /// A request that cannot be sent at all (a bad header) throws here.
    public func request(
        method: String, path: String, headers: [String: String] = [:], body: [UInt8]? = nil, timeout: Double = 10,
        completion:
            @escaping @Sendable (Result<(status: Int, headers: [String: String], body: [UInt8]), IrisTransportError>) ->
            Void
    ) throws(IrisTransportError) {
        try start(method: method, path: path, headers: headers, body: body, timeout: timeout) { answer in
            completion(answer.map { ($0.status, $0.headers, $0.body) })
        }
    }

    /// The loop the completions of `request(..., completion:)` run on.
    public static var loop: EventLoop { ClientLoop.shared.loop }

    private func start(
        method: String, path: String, headers: [String: String], body: [UInt8]?, timeout: Double,
        completion: @escaping @Sendable (Result<HTTPClientResponse, IrisTransportError>) -> Void
    ) throws(IrisTransportError) {
        let target = try joinedTarget(path)
        var fields: [String: (String, String)] = [
            "user-agent": ("User-Agent", "irisgw-client"), "accept": ("Accept", "*/*")
        ]
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
        do {
            message = try HTTPRequestWriter.head(method: method, target: target, host: url.hostHeader, headers: ordered)
        } catch {
            throw .invalidRequest(error.message)
        }
        if let body { message += body }
        let (url, tls, dns, maxBodyBytes) = (url, tls, dns, maxBodyBytes)
        let loop = ClientLoop.shared.loop
        loop.execute { [message] in
            HTTPExchange(
                url: url, tls: tls, dns: dns, method: method, target: target, message: message,
                maxBodyBytes: maxBodyBytes, timeout: timeout, loop: loop, completion: completion)
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
