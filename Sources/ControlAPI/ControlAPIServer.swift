import Formats
import Foundation
import Gateway
import IrisAPI
import Synchronization
import TLS

/// The control API (docs/api.md) over HTTP: routes requests onto `Gateway`, streams events over
/// WebSocket, answers `/healthz` and `/metrics`. Every error is JSON with an Iris code;
/// a refused request changes nothing.
public final class ControlAPIServer: Sendable {
    let attached = Mutex<Gateway?>(nil)
    let key: String
    private let server: Mutex<HTTPServer?> = Mutex(nil)
    private let subscriptions = Mutex<[Int: EventHub.Subscription]>([:])
    private let configuration: HTTPServerConfiguration
    /// The dialer page's files, served at `/app` without a key; nil: `/app` is 404.
    private let webFiles: StaticFiles?
    /// What one routing id's page tokens may hold at once (a reload may change it).
    var pageLimits: PageTokenLimits { pageLimitsSlot.withLock { $0 } }
    let pageLimitsSlot: Mutex<PageTokenLimits>
    /// What `POST /v1/admin/reload` runs (ControlAPIServer+Admin.swift); nil: 503.
    let reloader = Mutex<Reloader?>(nil)

    /// The server can listen before the gateway exists (the gateway's notifications name
    /// the API's address); until `attach`, requests get 503. `webFiles`: the dialer page.
    /// `pageLimits`: the page tokens' quotas per routing id.
    public init(
        key: String, configuration: HTTPServerConfiguration, webFiles: StaticFiles? = nil,
        pageLimits: PageTokenLimits = PageTokenLimits()
    ) {
        self.key = key
        self.configuration = configuration
        self.webFiles = webFiles
        pageLimitsSlot = Mutex(pageLimits)
    }

    public convenience init(gateway: Gateway, key: String, configuration: HTTPServerConfiguration) {
        self.init(key: key, configuration: configuration)
        attach(gateway)
    }

    public func attach(_ gateway: Gateway) { attached.withLock { $0 = gateway } }

    private var current: Gateway {
        get throws(GatewayError) {
            guard let g = attached.withLock({ $0 }) else { throw .unavailable("the gateway is starting") }
            return g
        }
    }

    /// Starts listening; returns the bound port.
    public func start() throws -> Int {
        let s = HTTPServer(
            configuration: configuration,
            handler: { [self] in handle($0) },
            webSocket: { [self] in upgrade($0) },
            onWebSocketOpen: { [self] in opened($0) },
            onWebSocketClose: { [self] in closed($0) })
        let port = try s.start()
        server.withLock { $0 = s }
        return port
    }

    /// Rereads the HTTPS certificate and key (SIGHUP): new connections use them, open ones
    /// go on. Throws why when a file cannot be used (the old certificate stays). Nothing to do
    /// for plain HTTP.
    public func reloadTLS() throws(TLSFailure) {
        try server.withLock { $0 }?.reloadTLS()
    }

    /// The listener speaks HTTPS and WSS.
    public var isTLS: Bool { configuration.tls != nil }

    public func stop() {
        let s = server.withLock { s -> HTTPServer? in
            defer { s = nil }; return s
        }
        s?.stop()
    }

    // MARK: HTTP

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    static func json<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        .json(status, Array((try? encoder.encode(value)) ?? Data("{}".utf8)))
    }

    static func error(_ e: GatewayError) -> HTTPResponse {
        var response = json(e.refusal.httpStatus, APIErrorBody(code: e.irisCode, message: e.message))
        if let seconds = e.retryAfter { response.headers.append(("Retry-After", String(seconds))) }
        return response
    }

    private func decode<T: Decodable>(_ type: T.Type, _ request: HTTPRequest) throws(GatewayError) -> T {
        guard !request.body.isEmpty else { throw .badRequest("a JSON body is required") }
        do {
            try JSONLimits(maxBytes: configuration.maxBodyBytes, maxDepth: JSONLimits.api.maxDepth).check(request.body)
        } catch {
            attached.withLock({ $0 })?.metrics.refused(error.metricLabel)
            throw .badRequest(error.description)
        }
        return try Self.decodeBody(T.self, from: request.body)
    }

    /// A body read into `T`; what cannot be read is 400 naming the key path.
    static func decodeBody<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(GatewayError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let DecodingError.keyNotFound(key, _) {
            throw .badRequest("missing key \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .badRequest("wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch let DecodingError.valueNotFound(_, context) {
            throw .badRequest("null at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch let DecodingError.dataCorrupted(context) where context.underlyingError is RequestFieldError {
            // A field the body's type reads itself (an unknown key in `opus`, a bitrate word).
            let problem = context.underlyingError as? RequestFieldError
            throw .badRequest(
                "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(problem?.message ?? context.debugDescription)"
            )
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw .badRequest("bad value at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch {
            throw .badRequest("the body is not valid JSON")
        }
    }

    /// Every HTTP request: matched against `ControlAPIRoutes` (405 for a path served with
    /// another method, 404 for a path not served, both after the key), the caller checked
    /// unless the endpoint is open, then served.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let match = ControlAPIRoutes.match(method: request.method, path: request.path)
        do throws(GatewayError) {
            switch match {
            case .endpoint(let endpoint, let variables):
                let caller =
                    endpoint.access == .open ? nil : try caller(authorization: request.headers["authorization"])
                return try serve(endpoint, variables, request, caller)
            // The dialer page's folder needs no key, whatever is asked of it.
            case .wrongMethod where Self.isPagePath(request.path):
                throw Self.notAllowed(request)
            case .none where Self.isPagePath(request.path):
                throw GatewayError(IrisCode.incorrectParams, .notFound, "no such file")
            // Nothing about the API's paths is said to a caller without a key.
            case .wrongMethod:
                _ = try caller(authorization: request.headers["authorization"])
                throw Self.notAllowed(request)
            case .none:
                _ = try caller(authorization: request.headers["authorization"])
                throw GatewayError(
                    IrisCode.incorrectParams, .notFound, "no such endpoint: \(request.method) \(request.path)")
            }
        } catch {
            return Self.error(error)
        }
    }

    private static func isPagePath(_ path: String) -> Bool {
        path == StaticFiles.prefix || path.hasPrefix(StaticFiles.prefix + "/")
    }

    /// The dialer page's files: no key (the page holds none; it asks for a page token).
    private func page(_ request: HTTPRequest) -> HTTPResponse {
        guard let webFiles else {
            return Self.error(
                GatewayError(IrisCode.incorrectParams, .notFound, "the dialer page is not installed (serve --web-dir)"))
        }
        return webFiles.response(path: request.path)
            ?? Self.error(GatewayError(IrisCode.incorrectParams, .notFound, "no such file"))
    }

    /// 200 only when the gateway takes sessions and its SIP loop, media threads and record
    /// store each answered within a second; 503 with the status otherwise (starting,
    /// draining, unhealthy), so a balancer stops sending before anything fails.
    private func health() -> HTTPResponse {
        guard let gateway = attached.withLock({ $0 }) else { return Self.json(503, ["status": "starting"]) }
        let health = gateway.health()
        var body = ["status": health.status]
        if case .unhealthy(let reason) = health { body["reason"] = reason }
        return Self.json(health == .ok ? 200 : 503, body)
    }

    /// One endpoint's answer. `caller` is nil for the open endpoints only.
    private func serve(
        _ endpoint: ControlAPIEndpoint, _ variables: [String: String], _ request: HTTPRequest, _ caller: APICaller?
    ) throws(GatewayError) -> HTTPResponse {
        switch endpoint {
        case .health, .ready: return health()
        case .app, .appFile: return page(request)
        case .openAPI: return Self.openAPIResponse()
        default: break
        }
        guard let caller else { throw Self.notAllowed(request) }  // only the open endpoints come without one
        if case .keyOnly(let what) = endpoint.access, caller != .apiKey { throw Self.forbidden(what) }
        // This node's own, never forwarded; the reloader reaches the gateway itself.
        if endpoint == .adminReload { return try adminRoute(request, ["v1", "admin", "reload"], caller) }
        let gateway = try self.current
        let room = variables["roomId"] ?? ""
        if let answer = try clusterRoute(request, caller, endpoint, room: variables["roomId"], gateway: gateway) {
            return answer
        }
        // A page acts only on its own routing id's sessions.
        if variables["roomId"] != nil { try authorize(caller, room: room, gateway: gateway) }
        switch endpoint {
        case .createSession:
            var create = try decode(CreateSessionRequest.self, request)
            guard case .page(let scope, _) = caller else { return Self.json(201, try gateway.create(create)) }
            try Self.scope(&create, to: scope, defaultProfile: gateway.defaultProfileName)
            return Self.json(201, try gateway.create(create, routingIdQuota: pageLimits.sessionsPerRoutingId))
        case .listSessions:
            return Self.json(200, SessionList(sessions: gateway.list()))
        case .getSession:
            return Self.json(200, try gateway.snapshot(roomId: room))
        case .closeSession:
            try gateway.close(roomId: room)
            return Self.json(202, ["roomId": room])
        case .sipTrace:
            return Self.json(200, try gateway.sipTrace(roomId: room))
        case .pcap:
            let capture = try gateway.capturePcap(roomId: room)
            return HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/vnd.tcpdump.pcap"),
                    ("Content-Disposition", "attachment; filename=\"\(room).pcap\""),
                    ("X-Capture-Dropped", String(capture.dropped)),
                    ("X-Capture-Ignored", String(capture.ignored))
                ],
                stream: capture.pcap)
        case .recordingFile:
            let file = try gateway.recordingFile(roomId: room)
            return HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", file.contentType),
                    (
                        "Content-Disposition",
                        "attachment; filename=\"\(room).\(file.contentType == "audio/ogg" ? "ogg" : "wav")\""
                    )
                ], body: file.bytes)
        case .join, .reject, .hold, .unhold, .mute, .unmute, .merge, .dtmf, .transfer, .acceptTransfer,
            .declineTransfer, .recording, .startStream:
            return try verbRequest(room, endpoint, request, caller, gateway: gateway)
        case .stopStream:
            let stream = variables["streamId"] ?? ""
            try gateway.stopStream(roomId: room, streamId: stream)
            return Self.json(202, ["roomId": room, "streamId": stream])
        case .events:
            throw GatewayError(IrisCode.incorrectParams, .invalid, "/v1/events is a WebSocket: send an Upgrade request")
        case .pageTokens:
            return Self.json(201, try mintPageToken(try decode(PageTokenRequest.self, request), gateway: gateway))
        case .metrics:
            return metrics(gateway)
        case .health, .ready, .app, .appFile, .openAPI, .adminReload:
            throw Self.notAllowed(request)  // answered above
        }
    }

    /// `GET /metrics`: the gateway's, the HTTP server's and the cluster's, Prometheus text.
    private func metrics(_ gateway: Gateway) -> HTTPResponse {
        let load = gateway.sipLoad()
        var text = gateway.metrics.render(
            statuses: gateway.list().map(\.status), sipResponses: gateway.sipResponseCounts(),
            lateFrames: gateway.media.measurements().lateFrames,
            refusals: gateway.sipRefusalCounts(),
            recordWrites: (gateway.records.writeFailures, gateway.records.pendingWrites),
            sipTransactions: load.transactions, heapTrims: load.heapTrims,
            mediaThreads: gateway.media.configuration.threads,
            mediaLoad: (gateway.media.loads(), gateway.configuration.mediaLoadBudget))
        if let http = server.withLock({ $0 })?.statistics { text += Self.metricsText(http) }
        if let cluster = gateway.cluster?.statusWaiting() {
            var out = PrometheusText()
            cluster.render(into: &out)
            text += out.text
        }
        return .text(200, text, contentType: "text/plain; version=0.0.4; charset=utf-8")
    }

    static func notAllowed(_ request: HTTPRequest) -> GatewayError {
        GatewayError(IrisCode.incorrectParams, .methodNotAllowed, "\(request.method) is not allowed on \(request.path)")
    }

    private func verbRequest(
        _ room: String, _ verb: ControlAPIEndpoint, _ request: HTTPRequest, _ caller: APICaller, gateway: Gateway
    ) throws(GatewayError) -> HTTPResponse {
        switch verb {
        case .join:
            let join = try decode(JoinRequest.self, request)
            if case .page(let scope, _) = caller { try Self.scope(join, to: scope) }
            return Self.json(200, try gateway.join(roomId: room, join))
        case .reject:
            try gateway.reject(roomId: room, try decode(RejectRequest.self, request))
            return Self.json(200, ["roomId": room])
        case .hold:
            try gateway.hold(roomId: room)
            return Self.json(202, ["roomId": room])
        case .unhold:
            try gateway.unhold(roomId: room)
            return Self.json(202, ["roomId": room])
        case .mute, .unmute:
            try gateway.setMuted(roomId: room, verb == .mute)
            return Self.json(200, ["roomId": room])
        case .merge:
            try gateway.merge(roomId: room, try decode(MergeRequest.self, request))
            return Self.json(202, ["roomId": room])
        case .dtmf:
            try gateway.sendDTMF(roomId: room, try decode(DTMFRequest.self, request))
            return Self.json(202, ["roomId": room])
        case .transfer:
            try gateway.transfer(roomId: room, try decode(TransferRequest.self, request))
            return Self.json(202, ["roomId": room])
        case .recording:
            try gateway.recording(roomId: room, try decode(RecordingRequest.self, request))
            return Self.json(202, ["roomId": room])
        case .startStream:
            return Self.json(201, try gateway.startStream(roomId: room, try decode(StreamRequest.self, request)))
        case .acceptTransfer, .declineTransfer:
            try gateway.answerTransfer(roomId: room, accept: verb == .acceptTransfer)
            return Self.json(202, ["roomId": room])
        default:
            throw Self.notAllowed(request)
        }
    }

    /// The HTTP server's gauges and refusal counters, Prometheus text.
    static func metricsText(_ s: HTTPServerStatistics) -> String {
        var out = PrometheusText()
        out.metric(
            "irisgw_http_connections", "gauge", "Control API connections open (HTTP and WebSocket).", s.openConnections)
        out.metric("irisgw_websockets", "gauge", "Event WebSockets open.", s.openWebSockets)
        out.metric("irisgw_http_accepted_total", "counter", "Control API connections accepted.", s.acceptedConnections)
        out.metric(
            "irisgw_http_requests_total", "counter", "Requests handed to the control API's handlers.", s.requests)
        out.metric(
            "irisgw_http_idle_closed_total", "counter", "Keep-alive connections closed after the idle timeout.",
            s.idleClosed)
        out.metric(
            "irisgw_http_accept_backoff_total", "counter",
            "Connections shed (pauses when none was pending) as accept ran out of descriptors.", s.acceptBackoffs)
        out.metric(
            "irisgw_http_refused_total", "counter",
            "Connections, requests and WebSockets refused or dropped, by reason.",
            HTTPServerStatistics.Refusal.allCases.map {
                (labels: "{reason=\"\($0.rawValue)\"}", value: String(s.refusals($0)))
            })
        if s.tls {
            out.metric(
                "irisgw_api_tls_handshakes_total", "counter", "TLS handshakes completed on the HTTPS control API.",
                s.tlsHandshakes)
            let kinds = Set(TLSFailure.serverKinds).union(s.tlsFailures.keys).sorted()
            out.metric(
                "irisgw_api_tls_failures_total", "counter",
                "TLS handshakes of the HTTPS control API that failed or timed out, and TLS connections that broke, by reason.",
                kinds.map { (labels: "{reason=\"\($0)\"}", value: String(s.tlsFailures[$0] ?? 0)) })
        }
        return out.text
    }

    // MARK: WebSocket events

    /// The WebSocket cap group of keyed subscribers. Every client that holds the API key is
    /// one client as far as `maxWebSocketsPerClient` goes (the key itself is never used as
    /// the name: group names are not secret).
    static let apiKeyGroup = "api-key"

    private func upgrade(_ request: HTTPRequest) -> WebSocketUpgrade {
        guard case .endpoint(.events, _) = ControlAPIRoutes.match(method: request.method, path: request.path) else {
            return .refuse(
                Self.error(GatewayError(IrisCode.incorrectParams, .notFound, "WebSocket only on /v1/events")))
        }
        let caller: APICaller
        do throws(GatewayError) {
            caller = try webSocketCaller(request)
        } catch {
            return .refuse(Self.error(error))
        }
        if let since = request.query["since"], Int(since) == nil || Int(since)! < 0 {
            return .refuse(Self.error(.badRequest("since must be a non-negative integer")))
        }
        guard case .page(let scope, let expiresAt) = caller else { return .accept(group: Self.apiKeyGroup) }
        // A page sees its own routing id's events only (roomId may narrow them further).
        if let asked = request.query["routingId"], asked != scope.routingId {
            return .refuse(Self.error(Self.forbidden("subscribe to another routing id")))
        }
        // Every token of a routing id shares its quota; the socket ends with its token.
        return .accept(
            group: "page:" + scope.routingId, limit: pageLimits.webSocketsPerRoutingId,
            expiry: WebSocketExpiry(at: expiresAt, reason: "the page token has expired"))
    }

    /// Browsers cannot set headers on a WebSocket: `access_token=` in the query works too.
    private func webSocketCaller(_ request: HTTPRequest) throws(GatewayError) -> APICaller {
        try caller(
            authorization: request.headers["authorization"] ?? request.query["access_token"].map { "Bearer " + $0 })
    }

    private func opened(_ connection: WebSocketConnection) {
        let q = connection.request.query
        var filter = EventHub.Filter(routingId: q["routingId"], roomId: q["roomId"])
        // Checked at the upgrade; a page's filter is always its routing id.
        guard let caller = try? webSocketCaller(connection.request) else {
            connection.close()
            return
        }
        if case .page(let scope, _) = caller { filter.routingId = scope.routingId }
        let since = q["since"].flatMap { Int($0) }
        guard let gateway = attached.withLock({ $0 }) else {
            connection.close()
            return
        }
        let sub = gateway.events.subscribe(filter, since: since) { event in
            guard let data = try? Self.encoder.encode(event) else { return }
            connection.send(text: String(decoding: data, as: UTF8.self))
        }
        subscriptions.withLock { $0[connection.id] = sub }
        // Closed while we subscribed: the close callback found nothing to remove.
        if !connection.isOpen { closed(connection) }
    }

    private func closed(_ connection: WebSocketConnection) {
        if let sub = subscriptions.withLock({ $0.removeValue(forKey: connection.id) }) {
            attached.withLock { $0 }?.events.unsubscribe(sub)
        }
    }
}

/// The pcap endpoint streams the file (docs/api.md, "Capture").
extension CaptureFile: HTTPBodyStream {}
