import Foundation
import Gateway
import IrisAPI

/// Who sent a request: a holder of the API key, or the dialer page with a page token
/// (docs/api.md, "Page tokens").
enum APICaller: Equatable, Sendable {
    /// The API key: everything.
    case apiKey
    /// A page token for this routing id: createWithTN for it, the verbs and state of its
    /// sessions, join and reject of calls routed to it, its events. Nothing else (403).
    case page(routingId: String)
}

extension ControlAPIServer {
    /// The caller behind an `Authorization: Bearer ...` value: the API key, else a valid page
    /// token. 401 for neither (-103), or for an expired page token (-105).
    func caller(authorization header: String?) throws(GatewayError) -> APICaller {
        if APIKey.matches(header: header, key: key) { return .apiKey }
        let wrongKey = GatewayError(IrisCode.incorrectParams, 401, "missing or wrong API key (Authorization: Bearer <key>)")
        guard let header, header.lowercased().hasPrefix("bearer "), let gateway = attached.withLock({ $0 }) else { throw wrongKey }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        do throws(RoomTokenError) {
            return .page(routingId: try gateway.tokens.verifyPageToken(token, now: Date().timeIntervalSince1970))
        } catch {
            if error == .expired { throw GatewayError(IrisCode.tokenExpired, 401, "the page token has expired") }
            throw wrongKey
        }
    }

    /// 403 for what a page token may not do.
    static func forbidden(_ what: String) -> GatewayError {
        GatewayError(IrisCode.incorrectParams, 403, "a page token cannot \(what)")
    }

    /// A page caller may touch only sessions of its routing id (outbound ones it created,
    /// inbound ones routed to it).
    func authorize(_ caller: APICaller, room: String, gateway: Gateway) throws(GatewayError) {
        guard case .page(let routingId) = caller else { return }
        guard try gateway.snapshot(roomId: room).routingId == routingId else {
            throw Self.forbidden("act on a session of another routing id")
        }
    }

    /// `POST /v1/page-tokens`: a page token for `routingId`, valid `ttlSec` (default 3600).
    func mintPageToken(_ request: PageTokenRequest, gateway: Gateway) throws(GatewayError) -> PageTokenResponse {
        guard RoomTokenSigner.isValidRoutingId(request.routingId) else {
            throw .badRequest("routingId must be 1-128 of A-Z a-z 0-9 . _ : @ -")
        }
        let ttl = request.ttlSec ?? 3600
        guard (1...RoomTokenSigner.maxPageTokenLifetime).contains(ttl) else {
            throw .badRequest("ttlSec must be 1-\(RoomTokenSigner.maxPageTokenLifetime)")
        }
        let expires = Int64(Date().timeIntervalSince1970.rounded(.down)) + Int64(ttl)
        let token = gateway.tokens.issuePageToken(routingId: request.routingId, expiresAt: Double(expires))
        return PageTokenResponse(token: token, routingId: request.routingId, expiresAt: expires, appPath: "/app#token=" + token)
    }
}
