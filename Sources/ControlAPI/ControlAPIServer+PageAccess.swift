import Foundation
import Gateway
import IrisAPI

/// Who sent a request: a holder of the API key, or the dialer page with a page token
/// (docs/api.md, "Page tokens").
enum APICaller: Equatable, Sendable {
    /// The API key: everything.
    case apiKey
    /// A page token, valid until `expiresAt` (Unix seconds), with its scope: createWithTN for
    /// its routing id (WebRTC only, its profiles, capture and headers only when allowed), the
    /// verbs and state of its sessions, join and reject of calls routed to it, its events.
    /// Nothing else (403).
    case page(PageScope, expiresAt: Double)
}

extension ControlAPIServer {
    /// The caller behind an `Authorization: Bearer ...` value: the API key, else a valid page
    /// token. 401 for neither (-103), or for an expired page token (-105).
    func caller(authorization header: String?) throws(GatewayError) -> APICaller {
        if APIKey.matches(header: header, key: key) { return .apiKey }
        let wrongKey = GatewayError(
            IrisCode.incorrectParams, .unauthenticated, "missing or wrong API key (Authorization: Bearer <key>)")
        guard let header, header.lowercased().hasPrefix("bearer "), let gateway = attached.withLock({ $0 }) else {
            throw wrongKey
        }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        do throws(RoomTokenError) {
            let (scope, expires) = try gateway.tokens.verifyPageScope(token, now: Date().timeIntervalSince1970)
            return .page(scope, expiresAt: expires)
        } catch {
            if error == .expired {
                throw GatewayError(IrisCode.tokenExpired, .unauthenticated, "the page token has expired")
            }
            throw wrongKey
        }
    }

    /// 403 for what a page token may not do.
    static func forbidden(_ what: String) -> GatewayError {
        GatewayError(IrisCode.incorrectParams, .forbidden, "a page token cannot \(what)")
    }

    /// A page caller may touch only sessions of its routing id (outbound ones it created,
    /// inbound ones routed to it).
    func authorize(_ caller: APICaller, room: String, gateway: Gateway) throws(GatewayError) {
        guard case .page(let scope, _) = caller else { return }
        guard try gateway.snapshot(roomId: room).routingId == scope.routingId else {
            throw Self.forbidden("act on a session of another routing id")
        }
    }

    /// A page's createWithTN within its token's scope: its routing id, a WebRTC offer, one
    /// of its profiles (the first when none is named), capture and header fields only when
    /// allowed. Fills in the routing id and the profile; 403 for anything outside the scope.
    static func scope(
        _ create: inout CreateSessionRequest, to scope: PageScope, defaultProfile: String?
    ) throws(GatewayError) {
        // The page's sessions carry its routing id, so it sees their events and may act on them.
        guard create.routingId == nil || create.routingId == scope.routingId else {
            throw forbidden("create a session for another routing id")
        }
        create.routingId = scope.routingId
        try checkMedia(create.media, capture: create.capture, scope: scope)
        let allowed = scope.profiles.isEmpty ? [defaultProfile].compactMap { $0 } : scope.profiles
        if let asked = create.profile {
            guard allowed.contains(asked) else {
                let names = allowed.isEmpty ? "none" : allowed.map { "\"\($0)\"" }.joined(separator: ", ")
                throw forbidden("use profile \"\(asked)\" (its token allows \(names))")
            }
        } else {
            create.profile = allowed.first
        }
        let setsHeaders = !(create.headers ?? [:]).isEmpty || create.callerName != nil || create.privacy != nil
        if setsHeaders, !scope.allowHeaders {
            throw forbidden("set SIP header fields (headers, callerName, privacy) unless minted with allowHeaders")
        }
    }

    /// What a page's join may carry: a WebRTC offer, capture only when allowed.
    static func scope(_ join: JoinRequest, to scope: PageScope) throws(GatewayError) {
        try checkMedia(join.media, capture: join.capture, scope: scope)
    }

    /// A page's media goes only to the browser that holds the token: WebRTC (ICE, DTLS-SRTP),
    /// never a plain RTP or SDES offer whose `c=` line could name any address.
    private static func checkMedia(_ media: MediaBody, capture: Bool?, scope: PageScope) throws(GatewayError) {
        // A voice agent's URL would have the gateway connect wherever a page says: API key only.
        guard media.websocket == nil else { throw forbidden("connect a voice agent's WebSocket (media.websocket)") }
        guard let sdp = media.sdp, MediaNegotiation.isWebRTCOffer(sdp) else {
            throw forbidden(
                "offer plain RTP or SDES media: a page offers WebRTC only (UDP/TLS/RTP/SAVPF with ICE and DTLS-SRTP)")
        }
        if capture == true, !scope.allowCapture {
            throw forbidden("ask for a capture unless minted with allowCapture")
        }
    }

    /// `POST /v1/page-tokens`: a page token for `routingId`, valid `ttlSec` (default 3600),
    /// with the profiles and permissions asked (default: the default profile, nothing more).
    func mintPageToken(_ request: PageTokenRequest, gateway: Gateway) throws(GatewayError) -> PageTokenResponse {
        guard RoomTokenSigner.isValidRoutingId(request.routingId) else {
            throw .badRequest("routingId must be 1-128 of A-Z a-z 0-9 . _ : @ -")
        }
        let ttl = request.ttlSec ?? 3600
        guard (1...RoomTokenSigner.maxPageTokenLifetime).contains(ttl) else {
            throw .badRequest("ttlSec must be 1-\(RoomTokenSigner.maxPageTokenLifetime)")
        }
        let profiles: [String]
        if let asked = request.profiles {
            guard (1...Self.maxPageProfiles).contains(asked.count), Set(asked).count == asked.count else {
                throw .badRequest("profiles must name 1-\(Self.maxPageProfiles) different profiles")
            }
            for name in asked where gateway.profiles[name]?.outbound == nil {
                throw .badRequest(
                    gateway.profiles[name] == nil
                        ? "profiles: unknown profile \"\(name)\""
                        : "profiles: \"\(name)\" takes no outbound calls")
            }
            profiles = asked
        } else {
            // Without an outbound profile the page can still answer the calls routed to it.
            profiles = gateway.defaultProfileName.map { [$0] } ?? []
        }
        let scope = PageScope(
            routingId: request.routingId, profiles: profiles, allowCapture: request.allowCapture == true,
            allowHeaders: request.allowHeaders == true)
        guard scope.fitsInAToken else { throw .badRequest("profiles: the names are too long for a token") }
        let expires = Int64(Date().timeIntervalSince1970.rounded(.down)) + Int64(ttl)
        let token = gateway.tokens.issuePageToken(scope, expiresAt: Double(expires))
        return PageTokenResponse(
            token: token, routingId: request.routingId, expiresAt: expires, appPath: "/app#token=" + token,
            profiles: profiles, allowCapture: scope.allowCapture, allowHeaders: scope.allowHeaders)
    }

    /// Profiles one page token may name (keeps the token short).
    static let maxPageProfiles = 8
}
