import Foundation
import IrisAPI
import Media
import SIP

extension Gateway {
    /// Iris `createWithTN`: validates the numbers against the profile, admits the call
    /// under the trunk's limits, opens media and sends the INVITE. The response carries the
    /// platform leg's SDP answer; events follow on the hub. `routingIdQuota`: the most live
    /// sessions the request's routing id may hold, this one included (a page token's quota);
    /// at it, 429 and nothing is created.
    public func create(
        _ request: CreateSessionRequest, routingIdQuota: Int? = nil
    ) throws(GatewayError) -> SessionResponse {
        let profile = try profile(named: request.profile)
        guard profile.outbound != nil else {
            throw .forbidden("call forbidden: trunk \(profile.name) takes no outbound calls")
        }
        let target: String, source: String
        do {
            target = try profile.normalize(request.targetTN)
        } catch {
            throw GatewayError(
                error.code, error.code == IrisCode.callForbidden ? .forbidden : .invalid, "targetTN: " + error.message)
        }
        let asked = request.sourceTN.filter { !" \t-.()".contains($0) }
        guard TrunkProfile.Outbound.isDialable(asked) else {
            throw .badRequest(
                "sourceTN: \"\(request.sourceTN)\" is not a phone number (digits, optionally after + or *)")
        }
        // The presented number is checked (or chosen) before anything is dialled.
        do {
            source = try profile.outbound!.callerId.present(sourceTN: asked, target: target)
        } catch {
            throw GatewayError(error.code, .forbidden, "sourceTN: " + error.message)
        }
        let caller = try Self.callerRequest(request, profile.outbound!)
        if let r = request.routingId, !Self.isValidID(r) {
            throw .badRequest("routingId must be 1-128 of [A-Za-z0-9._:@-]")
        }
        if let t = request.traceId, !Self.isValidID(t) {
            throw .badRequest("traceId must be 1-128 of [A-Za-z0-9._:@-]")
        }
        let opus = try opusSettings(profile, request: request.opus)
        let platformAsked = try platformRequest(
            request.media, prefer: configuration.preferPassthrough ? profile.media.codecs.first?.rawValue : nil,
            opus: opus)
        let platform = platformAsked.leg
        let services = try serviceRequest(recording: request.recording, amd: request.amd, profile: profile)
        // The trunk's codec is known only from its answer: open with our first choice, and
        // switch when the answer says otherwise (same sockets, so the SDP stays true).
        guard let provisional = Self.openingLeg(profile.media.codecs.first?.rawValue, profile: profile, configuration)
        else {
            throw .unavailable("trunk \(profile.name) has no usable codec")
        }

        let traceId = request.traceId ?? Self.newTraceId()
        let (roomId, mediaCall) = try place(
            OutboundPlacement(
                profile: profile, target: target, source: source, caller: caller, platform: platform,
                provisionalTrunk: provisional, routingId: request.routingId, routingIdQuota: routingIdQuota,
                traceId: traceId, notificationData: request.notificationData, capture: request.capture == true),
            prepare: { s in s.startServices(services, agent: platformAsked.agent) })
        guard platformAsked.agent == nil else { return SessionResponse(roomId: roomId, traceId: traceId, media: nil) }
        let answer = MediaNegotiation.answer(
            for: platform, address: platformSDPAddress(mediaCall.platformAddress), session: SDPSessionIdentity())
        return SessionResponse(roomId: roomId, traceId: traceId, media: MediaBody(sdp: answer.serialize()))
    }

    /// An outbound call the gateway places, its numbers and media checked: from the API
    /// (`create`), or for a transfer (the bridge's own call to the target).
    struct OutboundPlacement {
        var profile: TrunkProfile
        /// Normalised (`TrunkProfile.normalize`).
        var target: String
        /// The number presented (`CallerID.present`).
        var source: String
        var caller: OutboundCallerRequest
        var platform: NegotiatedLeg
        /// The trunk leg the call opens with, until the carrier's answer says otherwise.
        var provisionalTrunk: NegotiatedLeg
        var routingId: String?
        var routingIdQuota: Int?
        var traceId: String
        var notificationData: String?
        var capture: Bool
    }

    /// Admits the call under the trunk's and the gateway's limits, opens its media, writes its
    /// record and sends the INVITE. `prepare` runs on the SIP loop with the new session before
    /// its first event. Not on the SIP loop: the cluster's admission asks Redis.
    func place(
        _ p: OutboundPlacement, prepare: (@Sendable (GatewaySession) -> Void)? = nil
    ) throws(GatewayError) -> (roomId: String, media: MediaCall) {
        let profile = p.profile
        let roomId = Self.newRoomId()
        let traceId = p.traceId
        let counted = try admitInCluster(profile, roomId: roomId)
        // Admission and the session's creation happen in one hop, so limits hold under races.
        let admitted: Result<Void, GatewayError> = ua.loop.sync { [self] in
            if draining { return .failure(.unavailable("the gateway is shutting down")) }
            if sessions.count >= configuration.maxSessions {
                return .failure(.unavailable("the gateway is at capacity"))
            }
            if let r = p.routingId, let quota = p.routingIdQuota, sessionsHeld(routingId: r) >= quota {
                return .failure(Self.overQuota(r, quota))
            }
            switch admissions[profile.name]?.admit(now: EventLoop.now()) {
            case .concurrency?:
                return .failure(
                    .unavailable(
                        "trunk \(profile.name) is at its limit of \(profile.outbound!.maxConcurrentCalls) calls"))
            case .rate?:
                return .failure(
                    .unavailable(
                        "trunk \(profile.name) is at its limit of \(profile.outbound!.callsPerSecond) new calls per second"
                    ))
            case nil:
                if let r = p.routingId { creating[r, default: 0] += 1 }
                return .success(())
            }
        }
        if case .failure(let refusal) = admitted {
            releaseInCluster(profile, roomId: roomId, counted: counted)
            throw refusal
        }
        let capture = newCapture(roomId: roomId, recordsMedia: p.capture)
        let mediaCall: MediaCall
        do {
            mediaCall = try openMedia(
                trunk: p.provisionalTrunk, platform: p.platform, profile: profile, roomId: roomId, capture: capture,
                admitting: true)
        } catch {
            ua.loop.sync { [self] in
                admissions[profile.name]?.release()
                created(routingId: p.routingId)
            }
            releaseInCluster(profile, roomId: roomId, counted: counted)
            throw error
        }
        let credentials = profile.outbound.flatMap { self.credentials($0) }
        events.open(roomId: roomId, routingId: p.routingId)
        records.started(
            CallRecord(
                roomId: roomId, traceId: traceId, direction: "outbound", sourceTN: p.source, targetTN: p.target,
                profile: profile.name, startedAt: Date().timeIntervalSince1970))
        metrics.started()
        ua.loop.sync { [self] in
            let s = GatewaySession(
                direction: .outbound, roomId: roomId, traceId: traceId, routingId: p.routingId,
                profile: profile, sourceTN: p.source, targetTN: p.target,
                notificationData: p.notificationData, capture: capture, gateway: self)
            captures.open(capture)
            s.media = mediaCall
            s.platformLeg = p.platform
            s.trunkLeg = p.provisionalTrunk
            s.credentials = credentials
            s.callerRequest = p.caller
            sessions[roomId] = s
            clusterSessionStarted(s)
            created(routingId: p.routingId)
            prepare?(s)
            s.handle(.started(notification: nil))
            s.sendInvite()
            s.logStarted()
        }
        return (roomId, mediaCall)
    }

    /// The app's `callerName`, `privacy` and `headers`, checked against the trunk's policy;
    /// a refusal is -103 before any INVITE.
    static func callerRequest(
        _ request: CreateSessionRequest, _ outbound: TrunkProfile.Outbound
    ) throws(GatewayError) -> OutboundCallerRequest {
        do throws(InviteFieldError) {
            return OutboundCallerRequest(
                callerName: try request.callerName.map { name throws(InviteFieldError) in
                    try InviteFields.callerName(name)
                },
                privacy: try request.privacy.map { text throws(InviteFieldError) in try InviteFields.privacy(text) },
                headers: try InviteFields.appHeaders(
                    request.headers ?? [:], allowed: outbound.appHeaders, fixed: outbound.headers))
        } catch {
            throw GatewayError(error.irisCode, error.refusal, error.description)
        }
    }

    /// Live sessions of `routingId` (either direction) and its creates under way. On the SIP loop (its state checks it).
    func sessionsHeld(routingId: String) -> Int {
        sessions.values.reduce(creating[routingId, default: 0]) { $0 + ($1.routingId == routingId ? 1 : 0) }
    }

    /// A create of `routingId` is no longer under way (now in `sessions`, or failed). On the SIP loop (its state checks it).
    func created(routingId: String?) {
        guard let r = routingId, let n = creating[r] else { return }
        creating[r] = n > 1 ? n - 1 : nil
    }

    static func overQuota(_ routingId: String, _ quota: Int) -> GatewayError {
        GatewayError(
            IrisCode.serviceUnavailable, .quotaExceeded,
            "routing id \(routingId) has \(quota) live sessions, the most a page token may hold (pageTokens.sessionsPerRoutingId)"
        )
    }

    /// Routing and trace ids go into URLs and logs: a conservative alphabet.
    static func isValidID(_ s: String) -> Bool {
        (1...128).contains(s.utf8.count)
            && s.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                    || ".-_:@".utf8.contains(c)
            }
    }

    /// A leg of `codec` with nothing negotiated yet (no remote, no telephone-event): what a call
    /// opens its media with before an answer says more. A trunk's Opus (`profile` given)
    /// encodes with the profile's settings and answers with its fmtp.
    static func openingLeg(
        _ codec: String?, profile: TrunkProfile? = nil, _ configuration: GatewayConfiguration? = nil
    ) -> NegotiatedLeg? {
        let codecs = profile.map { $0.media.trunkCodecs(opus: configuration?.opus ?? .init()) }
        guard let codec, let (c, map) = MediaNegotiation.trunkCodec(named: codec, opus: codecs?.opus ?? .init())
        else { return nil }
        var leg = NegotiatedLeg(codec: c, rtpMap: map, telephoneEvent: nil, remote: nil, direction: .sendrecv)
        if case .opus = c { leg.formatParameters = codecs?.opusFormat.fmtp }
        return leg
    }
}
