/// The state of one dialog (RFC 3261 §12): identifiers, sequence numbers, remote target and
/// route set. A plain value: building requests in it and checking requests against it need
/// no socket and no clock.
public struct Dialog: Sendable, Equatable {
    public let callID: String
    public let localTag: String
    public var remoteTag: String?
    /// Our From (UAC) or To (UAS) address, without the tag.
    public var localAddress: NameAddress
    public var remoteAddress: NameAddress
    public var localSequence: UInt32
    public var remoteSequence: UInt32?
    /// Where in-dialog requests go: the peer's Contact (refreshed by re-INVITE and UPDATE).
    public var remoteTarget: SIPURI
    /// Route set from Record-Route, in the order our requests must carry it.
    public var routeSet: [NameAddress]
    public var localContact: SIPURI

    public init(
        callID: String, localTag: String, remoteTag: String?, localAddress: NameAddress, remoteAddress: NameAddress,
        localSequence: UInt32, remoteSequence: UInt32?, remoteTarget: SIPURI, routeSet: [NameAddress],
        localContact: SIPURI
    ) {
        self.callID = callID
        self.localTag = localTag
        self.remoteTag = remoteTag
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
        self.localSequence = localSequence
        self.remoteSequence = remoteSequence
        self.remoteTarget = remoteTarget
        self.routeSet = routeSet
        self.localContact = localContact
    }

    /// The UAC side, from our request and a response with a To tag (§12.1.2): the route set is
    /// the response's Record-Route in reverse.
    public static func uac(request: SIPMessage, response: SIPMessage, localContact: SIPURI) -> Dialog? {
        guard let callID = request.callID, var from = request.from, let localTag = from.tag, var to = response.to,
            let cseq = request.cseq
        else { return nil }
        let remoteTag = to.tag
        from.tag = nil
        to.tag = nil
        let target = response.contacts.first?.uri ?? request.requestURI ?? to.uri
        return Dialog(
            callID: callID, localTag: localTag, remoteTag: remoteTag, localAddress: from, remoteAddress: to,
            localSequence: cseq.sequence, remoteSequence: nil, remoteTarget: target,
            routeSet: response.recordRoutes.reversed(), localContact: localContact)
    }

    /// The UAS side, from a request that creates a dialog (§12.1.1): Record-Route in order.
    /// `localSequence` is the base of our CSeq numbers (§12.1.1 lets it be random).
    public static func uas(
        request: SIPMessage, localTag: String, localContact: SIPURI,
        localSequence: UInt32 = UInt32.random(in: 1...10_000)
    ) -> Dialog? {
        guard let callID = request.callID, var from = request.from, var to = request.to, let cseq = request.cseq else {
            return nil
        }
        let remoteTag = from.tag
        from.tag = nil
        to.tag = nil
        let target = request.contacts.first?.uri ?? from.uri
        return Dialog(
            callID: callID, localTag: localTag, remoteTag: remoteTag, localAddress: to, remoteAddress: from,
            localSequence: localSequence, remoteSequence: cseq.sequence, remoteTarget: target,
            routeSet: request.recordRoutes, localContact: localContact)
    }

    /// True when `message` belongs to this dialog (Call-ID and both tags match, §12.2.2).
    public func matches(_ message: SIPMessage) -> Bool {
        guard message.callID == callID else { return false }
        let incomingRequest = message.isRequest
        let ours = incomingRequest ? message.to?.tag : message.from?.tag
        let theirs = incomingRequest ? message.from?.tag : message.to?.tag
        return ours == localTag && (remoteTag == nil || theirs == remoteTag)
    }

    /// A request within the dialog (§12.2.1.1). ACK and CANCEL reuse `cseq`; other methods take
    /// the next local sequence number. The caller adds Via, Contact and a body.
    public mutating func makeRequest(_ method: String, cseq: UInt32? = nil) -> SIPMessage {
        let number: UInt32
        if let cseq {
            number = cseq
        } else {
            localSequence &+= 1
            number = localSequence
        }
        var requestURI = remoteTarget
        var routes = routeSet
        // Strict router (no ;lr): it goes in the Request-URI and the target at the end (§12.2.1.1).
        if let first = routes.first, !first.uri.isLooseRouter {
            requestURI = first.uri
            routes.removeFirst()
            routes.append(NameAddress(uri: remoteTarget))
        }
        // A Contact may carry URI headers (<sip:b@h?subject=x>); a Request-URI may not
        // (§19.1.1), and our own parser refuses the request. Found by fuzz-sip-session.
        requestURI.headers = nil
        var m = SIPMessage.request(method, requestURI)
        var from = localAddress
        from.tag = localTag
        var to = remoteAddress
        to.tag = remoteTag
        m.addHeader(.from, from.serialize())
        m.addHeader(.to, to.serialize())
        m.addHeader(.callID, callID)
        m.addHeader(.cseq, CSeq(number, method).serialize())
        m.addHeader(.maxForwards, "70")
        for r in routes { m.addHeader(.route, r.serialize()) }
        return m
    }

    /// The next hop for in-dialog requests: the first route, else the remote target.
    public var nextHop: SIPURI { routeSet.first?.uri ?? remoteTarget }

    /// Checks an incoming request's CSeq (§12.2.2): a number not above the last one is
    /// answered 500 (an equal one is a retransmission, which the transaction layer absorbs
    /// before it gets here); otherwise it is recorded.
    public mutating func acceptRemoteSequence(_ message: SIPMessage) -> Bool {
        guard let cseq = message.cseq else { return false }
        if message.method == "ACK" || message.method == "CANCEL" { return true }
        if let last = remoteSequence, cseq.sequence <= last { return false }
        remoteSequence = cseq.sequence
        return true
    }

    /// Target refresh from a re-INVITE or UPDATE (or its 2xx): the new Contact becomes the target.
    public mutating func refreshTarget(from message: SIPMessage) {
        if let contact = message.contacts.first?.uri { remoteTarget = contact }
    }
}
