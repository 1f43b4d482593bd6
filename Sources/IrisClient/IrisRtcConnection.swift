import Foundation
import IrisAPI
@_exported import WebClient

/// Where the gateway's control API is and the key to use: the Iris SDK's connection, over
/// HTTP or HTTPS (events over WS or WSS to match). Every call is blocking and returns the
/// decoded body or throws `IrisError`.
public final class IrisRtcConnection: Sendable {
    public let baseURL: String
    let http: HTTPClient
    let apiKey: String
    /// Seconds for each request. Default 10.
    public let timeout: Double
    /// For an https base URL: the PEM file of the CAs to trust (nil: the system store).
    public let caFile: String?

    /// - Parameters:
    ///   - baseURL: `http://host:port` or `https://host:port` (the certificate must name the
    ///     host: RFC 6125).
    ///   - caFile: for https, the CAs to trust, e.g. a private CA's; nil: the system store.
    public init(baseURL: String, apiKey: String, timeout: Double = 10, caFile: String? = nil) throws(IrisError) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.timeout = timeout
        self.caFile = caFile
        do {
            http = try HTTPClient(
                baseURL: baseURL, defaultHeaders: ["Authorization": "Bearer " + apiKey], caFile: caFile)
        } catch {
            throw .transport(error)
        }
    }

    /// The event socket's URL for `baseURL`: https becomes wss, http becomes ws.
    static func webSocketURL(_ baseURL: String) -> String {
        if baseURL.lowercased().hasPrefix("https://") { return "wss://" + baseURL.dropFirst("https://".count) }
        if baseURL.lowercased().hasPrefix("http://") { return "ws://" + baseURL.dropFirst("http://".count) }
        return baseURL
    }

    /// The key from `IRISGW_API_KEY`, else `<dataDir>/api-key` (written by `irisgw serve`).
    public static func apiKey(
        dataDir: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        if let k = environment["IRISGW_API_KEY"], !k.isEmpty { return k }
        return (try? String(contentsOfFile: dataDir + "/api-key", encoding: .utf8))?.trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Sends one request; a non-2xx answer throws `.api` with the gateway's Iris code.
    @discardableResult
    func call<Body: Encodable>(_ method: String, _ path: String, _ body: Body?) throws(IrisError) -> [UInt8] {
        var data: [UInt8]? = nil
        if let body {
            do { data = Array(try JSONEncoder().encode(body)) } catch {
                throw .decoding("cannot encode the request: \(error)")
            }
        }
        let r: (status: Int, headers: [String: String], body: [UInt8])
        do {
            r = try http.request(
                method: method, path: path, headers: data == nil ? [:] : ["Content-Type": "application/json"],
                body: data, timeout: timeout)
        } catch {
            throw .transport(error)
        }
        guard (200...299).contains(r.status) else {
            if let e = try? JSONDecoder().decode(APIErrorBody.self, from: Data(r.body)) {
                throw .api(status: r.status, code: e.error.code, message: e.error.message)
            }
            throw .api(status: r.status, code: 0, message: String(decoding: r.body.prefix(200), as: UTF8.self))
        }
        return r.body
    }

    @discardableResult
    func call(_ method: String, _ path: String) throws(IrisError) -> [UInt8] {
        try call(method, path, Optional<MediaBody>.none)
    }

    func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws(IrisError) -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(bytes)) } catch {
            throw .decoding("\(T.self): \(error)")
        }
    }

    /// The event stream for a routing id or a room, replaying from `since`.
    func events(routingId: String? = nil, roomId: String? = nil, since: Int? = nil) throws(IrisError) -> WebSocketClient
    {
        var query: [String] = []
        if let routingId { query.append("routingId=" + Self.escape(routingId)) }
        if let roomId { query.append("roomId=" + Self.escape(roomId)) }
        if let since { query.append("since=\(since)") }
        var base = Self.webSocketURL(baseURL)
        while base.hasSuffix("/") { base.removeLast() }
        let ws = base + "/v1/events" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        do {
            return try WebSocketClient(
                url: ws, headers: ["Authorization": "Bearer " + apiKey], timeout: timeout, caFile: caFile)
        } catch {
            throw .transport(error)
        }
    }

    static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? s
    }

    /// `GET /v1/sessions/{roomId}`.
    public func snapshot(roomId: String) throws(IrisError) -> SessionSnapshot {
        try decode(SessionSnapshot.self, try call("GET", "/v1/sessions/" + Self.escape(roomId)))
    }
}

/// What went wrong, from the client's side.
public enum IrisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The gateway refused the request: HTTP status, Iris code, message.
    case api(status: Int, code: Int, message: String)
    /// The request or the event stream could not be carried.
    case transport(IrisTransportError)
    case decoding(String)
    /// A verb used in a state where it does not apply (client side).
    case state(String)
    case media(String)

    public var description: String {
        switch self {
        case .api(let status, let code, let message): "gateway refused (HTTP \(status), \(code)): \(message)"
        case .transport(let e): "cannot reach the gateway: \(e)"
        case .decoding(let m): "unexpected answer: \(m)"
        case .state(let m): m
        case .media(let m): "media: \(m)"
        }
    }

    /// The Iris code of a refusal, if it was one.
    public var irisCode: Int? { if case .api(_, let code, _) = self { code } else { nil } }
}

extension IrisRtcConnection {
    /// `GET /v1/sessions`: the live sessions.
    public func sessions() throws(IrisError) -> [SessionSnapshot] {
        try decode(SessionList.self, try call("GET", "/v1/sessions")).sessions
    }
}

extension IrisRtcConnection {
    /// `GET /v1/sessions/{roomId}/sip`: the SIP messages of the session's trunk leg.
    public func sipTrace(roomId: String) throws(IrisError) -> SIPTraceDocument {
        try decode(SIPTraceDocument.self, try call("GET", "/v1/sessions/" + Self.escape(roomId) + "/sip"))
    }

    /// `GET /v1/sessions/{roomId}/pcap`: the capture of the session's trunk leg (libpcap
    /// format), for a session created with `capture: true`.
    public func capture(roomId: String) throws(IrisError) -> [UInt8] {
        try call("GET", "/v1/sessions/" + Self.escape(roomId) + "/pcap")
    }

    /// `GET /v1/sessions/{roomId}/recording`: the session's recording (WAV or Ogg/Opus), as
    /// written so far while the call lasts.
    public func recording(roomId: String) throws(IrisError) -> [UInt8] {
        try call("GET", "/v1/sessions/" + Self.escape(roomId) + "/recording")
    }
}
