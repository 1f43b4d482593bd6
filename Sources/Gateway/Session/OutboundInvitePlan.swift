import SIP

/// What the app asked for an outbound call's INVITE, checked at `createWithTN`
/// (`InviteFields`): the caller name, RFC 3323 privacy and extra headers.
struct OutboundCallerRequest: Sendable, Equatable {
    var callerName: String?
    var privacy: PrivacyHeader?
    var headers: [SIPHeader]

    init(callerName: String? = nil, privacy: PrivacyHeader? = nil, headers: [SIPHeader] = []) {
        self.callerName = callerName
        self.privacy = privacy
        self.headers = headers
    }
}

/// An outbound INVITE's addressing and caller identity, from the trunk's policy and the
/// app's request: the Request-URI and To (tech prefix, `user=phone`), the From (number,
/// name, host, or anonymous), P-Asserted-/P-Preferred-Identity, Privacy, then the
/// profile's fixed headers and the app's. A plain value, so the table tests need no socket.
struct OutboundInvitePlan: Sendable, Equatable {
    var requestURI: SIPURI
    var to: NameAddress
    var from: NameAddress
    /// In the order they go after the headers the SIP stack writes.
    var headers: [SIPHeader]

    /// RFC 3323 §4.1.1.1: the From of a caller who withholds its identity.
    static let anonymous = NameAddress(
        displayName: "Anonymous", uri: SIPURI(user: "anonymous", host: "anonymous.invalid"))

    /// - Parameters:
    ///   - target: the normalised number (`TrunkProfile.normalize`).
    ///   - caller: the number to present (`CallerID.present`).
    ///   - host, port: the proxy's host reference and port, for the Request-URI and To.
    ///   - secure: a `sips:` proxy: the Request-URI and To are `sips:` (RFC 5630).
    init(
        outbound: TrunkProfile.Outbound, target: String, caller: String, request: OutboundCallerRequest,
        host: String, port: Int?, secure: Bool = false
    ) {
        let phone = outbound.userPhone ? [SIPParameter("user", "phone")] : []
        let user = outbound.techPrefix + outbound.dialString(forE164: target)
        let scheme = secure ? "sips" : "sip"
        requestURI = SIPURI(scheme: scheme, user: user, host: host, port: port, parameters: phone)
        to = NameAddress(uri: SIPURI(scheme: scheme, user: user, host: host, parameters: phone))
        let name = request.callerName ?? outbound.callerId.displayName
        let identity = NameAddress(
            displayName: name, uri: SIPURI(user: caller, host: outbound.fromDomain, parameters: phone))
        let privacy = request.privacy
        from = privacy?.hidesIdentity == true ? Self.anonymous : identity
        var headers: [SIPHeader] = []
        switch outbound.assertedIdentity {
        case .none: break
        case .pai: headers.append(SIPHeader("P-Asserted-Identity", identity.serialize()))
        case .ppi: headers.append(SIPHeader("P-Preferred-Identity", identity.serialize()))
        }
        if let privacy { headers.append(SIPHeader("Privacy", privacy.description)) }
        headers += outbound.headers
        headers += request.headers
        self.headers = headers
    }
}
