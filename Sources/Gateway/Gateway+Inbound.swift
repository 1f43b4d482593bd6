import Foundation
import IOCore
import IrisAPI
import Media
import SIP

/// Calls from trunks to DIDs (docs/events.md, "Inbound: SIP to events").
extension Gateway: SIPUserAgentDelegate {
    public func userAgent(_ ua: SIPUserAgent, didReceiveCall call: SIPCall) {
        metrics.inboundInvite()
        // An INVITE with Replaces (RFC 3891) is a new leg for a call we hold, not a new call.
        if let replaces = call.invite.replaces {
            takeReplacing(call, replaces)
            return
        }
        if call.invite[.replaces] != nil {
            call.reject(status: 400, reason: "Bad Replaces")
            return
        }
        let allowed = inboundTrunks(source: call.source.address.host, authenticatedAs: call.authenticatedUsername)
        guard !allowed.isEmpty else {
            call.reject(status: 403, reason: "Forbidden")
            return
        }
        let did = call.invite.calledNumber
        let caller = call.invite.callingNumber
        // Before any route: a `*` route would take any called number, and both numbers go
        // into the record, the events and the webhook.
        if let refusal = InboundLimits.numberRefusal(calling: caller, called: did) {
            call.reject(status: refusal.status, reason: refusal.reason)
            return
        }
        guard
            let (profile, route) = allowed.lazy.compactMap({ p in p.inbound!.route(forDID: did).map { (p, $0) } }).first
        else {
            call.reject(status: 404, reason: "Not Found")
            return
        }
        if draining || sessions.count >= configuration.maxSessions {
            call.reject(
                status: 503, reason: "Service Unavailable",
                headers: [SIPHeader(.retryAfter, String(Self.drainingRetryAfter))])
            return
        }
        var trunk: NegotiatedLeg
        let lateOffer = call.remoteSDP == nil
        var sdes = SDESExchange(media: profile.media, overTLS: call.peer.transport == .tls)
        if let offer = call.remoteSDP {
            do {
                trunk = try MediaNegotiation.trunkLeg(
                    offer, codecs: profile.media.trunkCodecs(opus: configuration.opus))
                try MediaNegotiation.applySDES(offer, isOffer: true, to: &sdes, leg: &trunk)
            } catch {
                if error.secure { metrics.srtpRefused() }
                call.reject(status: 488, reason: "Not Acceptable Here", headers: [SIPHeader("Warning", error.warning)])
                return
            }
        } else {
            // Late offer (RFC 3261 §13.2.1): we offer in the 200, the ACK answers. Media opens
            // with our first codec and follows the answer.
            guard let first = Self.openingLeg(profile.media.codecs.first?.rawValue, profile: profile, configuration)
            else {
                call.reject(status: 488, reason: "Not Acceptable Here")
                return
            }
            trunk = first
        }
        if let refusal = admitInbound(profile) {
            call.reject(status: 503, reason: "Service Unavailable (\(refusal))", headers: [SIPHeader(.retryAfter, "5")])
            return
        }
        let roomId = Self.newRoomId()
        admitInboundInCluster(profile, roomId: roomId) { [self] refusal in
            if let refusal {
                inboundAdmissions[profile.name]?.release()
                call.reject(
                    status: 503, reason: "Service Unavailable (\(refusal))", headers: [SIPHeader(.retryAfter, "5")])
                return
            }
            acceptInbound(
                call, roomId: roomId, profile: profile, route: route, trunk: trunk, sdes: sdes, lateOffer: lateOffer,
                caller: caller, did: did)
        }
    }

    /// An admitted INVITE becomes a ringing session: its room token, record and the
    /// notification to the routing id's apps (and the webhook). On the SIP loop.
    private func acceptInbound(
        _ call: SIPCall, roomId: String, profile: TrunkProfile, route: TrunkProfile.Inbound.Route, trunk: NegotiatedLeg,
        sdes: SDESExchange, lateOffer: Bool, caller: String, did: String
    ) {
        let carrier = CarrierCallInfo(invite: call.invite)
        let traceId = Self.newTraceId()
        let ring = Double(profile.inbound?.ringTimeoutSec ?? 45)
        let expiry = Date().timeIntervalSince1970 + (configuration.roomTokenLifetime ?? ring + 15)
        let token = tokens.issue(roomId: roomId, expiresAt: expiry)
        let s = GatewaySession(
            direction: .inbound, roomId: roomId, traceId: traceId, routingId: route.routingId, profile: profile,
            sourceTN: caller, targetTN: did, notificationData: nil,
            capture: newCapture(roomId: roomId, recordsMedia: false), gateway: self)
        captures.open(s.capture)
        captures.bind(callID: call.callID, to: s.capture, peer: call.peer.address.host)
        s.call = call
        s.trunkLeg = trunk
        s.sdes = sdes
        s.lateOffer = lateOffer
        s.roomToken = token
        s.carrier = carrier
        call.delegate = s
        sessions[roomId] = s
        clusterSessionStarted(s)
        events.open(roomId: roomId, routingId: route.routingId)
        records.started(
            CallRecord(
                roomId: roomId, traceId: traceId, direction: "inbound", sourceTN: caller, targetTN: did,
                profile: profile.name, startedAt: s.startedAt))
        metrics.started()
        var n = SessionEvent(event: .onNotification, roomId: roomId, traceId: traceId)
        n.type = "notify"
        n.roomid = roomId
        n.roomtoken = token
        n.roomtokenexpirytime = Int64(expiry)
        n.rtcserver = configuration.publicURL
        n.traceid = traceId
        n.routingid = route.routingId
        n.userdata = NotificationUserData(caller: caller, did: did)
        n.carrier = carrier
        s.handle(.started(notification: n))
        s.logStarted()
        notifyOnce(n, callID: call.callID)
    }

    /// The trunks an INVITE from `source` may belong to, by name: matched by source first
    /// (an `allowFrom` of a trunk without `inbound.auth`), then by the digest username it
    /// authenticated as (a trunk with `inbound.auth` whose `allowFrom` holds the source).
    func inboundTrunks(source: String, authenticatedAs user: String?) -> [TrunkProfile] {
        let byAddress = profiles.values.filter { p in
            p.inbound.map { $0.auth == nil && $0.allows(source: source) } ?? false
        }
        if !byAddress.isEmpty { return byAddress.sorted { $0.name < $1.name } }
        guard let user else { return [] }
        return profiles.values.filter { p in
            p.inbound.map { $0.auth?.username == user && $0.allows(source: source) } ?? false
        }.sorted { $0.name < $1.name }
    }

    /// Checks a room token for `roomId`: expired is -105, anything else wrong -103.
    func verifyToken(_ token: String, roomId: String) throws(GatewayError) {
        do {
            try tokens.verify(token, roomId: roomId, now: Date().timeIntervalSince1970)
        } catch {
            throw GatewayError(error.irisCode, error == .expired ? .unauthenticated : .forbidden, "roomToken: \(error)")
        }
    }

    /// Iris `join`: answers the inbound call with media toward the app's offer.
    public func join(roomId: String, _ request: JoinRequest) throws(GatewayError) -> SessionResponse {
        try verifyToken(request.roomToken, roomId: roomId)
        // The trunk has chosen its codec: the app's leg takes the same when offered.
        let chosen = configuration.preferPassthrough ? ua.loop.sync { [self] in sessions[roomId]?.trunkLeg } : nil
        let asked = try platformRequest(
            request.media, prefer: chosen?.rtpMap.encodingName, opus: opusSettings(joining: roomId))
        let platform = asked.leg
        let (trunk, profile, traceId, capture) = try withSession(roomId) { s throws(GatewayError) in
            guard s.machine.direction == .inbound else {
                throw .wrongState("session \(roomId) is outbound: nothing to join")
            }
            guard s.media == nil, s.machine.status == .initializing, let t = s.trunkLeg else {
                throw .wrongState("session \(roomId) was already joined")
            }
            if request.capture == true { s.capture.recordMedia() }
            return (t, s.profile, s.traceId, s.capture)
        }
        let services = try serviceRequest(recording: request.recording, amd: nil, profile: profile)
        let mediaCall = try openMedia(
            trunk: trunk, platform: platform, profile: profile, roomId: roomId, capture: capture)
        let answer = MediaNegotiation.answer(
            for: platform, address: platformSDPAddress(mediaCall.platformAddress), session: SDPSessionIdentity())
        do {
            try withSession(roomId) { s throws(GatewayError) in
                guard s.media == nil, !s.machine.isEnded else {
                    throw .wrongState("session \(roomId) was already joined")
                }
                s.media = mediaCall
                s.platformLeg = platform
                s.startServices(services, agent: asked.agent)
                s.handle(.join)
            }
        } catch {
            mediaCall.close()
            throw error
        }
        if asked.agent != nil {
            return SessionResponse(roomId: roomId, traceId: request.traceId ?? traceId, media: nil)
        }
        return SessionResponse(
            roomId: roomId, traceId: request.traceId ?? traceId, media: MediaBody(sdp: answer.serialize()))
    }

    /// Iris `reject`: 603 (or 486 for busy) to the caller.
    public func reject(roomId: String, _ request: RejectRequest) throws(GatewayError) {
        try verifyToken(request.roomToken, roomId: roomId)
        try withSession(roomId) { s throws(GatewayError) in
            guard s.machine.direction == .inbound else { throw .wrongState("session \(roomId) is outbound: use close") }
            guard s.media == nil, s.machine.status == .initializing else {
                throw .wrongState("session \(roomId) was already joined")
            }
            s.handle(.reject(busy: request.reason == .busy))
        }
    }
}
