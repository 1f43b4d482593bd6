import SDP

/// Placing a call: the INVITE as the agent builds it; `InviteSessionMachine` does the rest.
extension SIPUserAgent {
    /// Places a call: sends an INVITE for `requestURI` to `peer` and returns the call, whose
    /// delegate hears the responses. `credentials` answer one 401/407 challenge (and one on BYE).
    /// `policy` overrides the agent's PRACK and session-timer policy for this call; whether
    /// Replaces is handled stays the agent's (`handlesReplaces`). `parts` go beside the SDP in a
    /// `multipart/mixed` body (RFC 5621); `contactParameters` (feature tags, RFC 3840) go on
    /// every Contact the call sends: a SIPREC session's `+sip.src` (RFC 7866 §6.1.1).
    public func invite(
        requestURI: SIPURI, from: NameAddress, to: NameAddress, peer: SIPPeer,
        sdp: SessionDescription?, parts: [MultipartBody.Part] = [], headers: [SIPHeader] = [],
        contactParameters: [SIPParameter] = [], credentials: DigestCredentials? = nil,
        policy: SIPCallPolicy? = nil, delegate: SIPCallDelegate?
    ) -> SIPCall {
        loop.assertInLoop()
        var policy = policy ?? configuration.callPolicy
        policy.replaces = configuration.handlesReplaces
        let localTag = SIPIdentifiers.tag()
        var m = SIPMessage.request("INVITE", requestURI)
        var f = from
        f.tag = localTag
        var t = to
        t.tag = nil
        m.addHeader(.from, f.serialize())
        m.addHeader(.to, t.serialize())
        m.addHeader(.callID, SIPIdentifiers.callID(host: localAddress(toward: peer).host))
        m.addHeader(.cseq, CSeq(1, "INVITE").serialize())
        m.addHeader(
            .contact,
            NameAddress(
                uri: contactURI(toward: peer, secure: requestURI.scheme == "sips"), parameters: contactParameters
            ).serialize())
        m.addHeader(.allow, SIPUserAgentConfiguration.allowedMethods.joined(separator: ", "))
        m.addHeader(.supported, policy.supportedOptionTags.joined(separator: ", "))
        m.headers.append(contentsOf: headers)
        // The machine adds the session-timer headers and the SDP, and sends it.
        let call = SIPCall(
            outgoing: m, sdp: sdp, parts: parts, contactParameters: contactParameters, credentials: credentials,
            peer: peer, policy: policy, ua: self)
        call.delegate = delegate
        calls[call.callID, default: []].append(call)
        call.start()
        return call
    }
}
