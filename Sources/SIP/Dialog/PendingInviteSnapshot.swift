/// An INVITE we sent that has had a provisional response and no final one, kept so that
/// another process can CANCEL it (RFC 3261 §9.1) when the one that sent it died: a node of a
/// cluster ends a dead node's ringing calls this way. The INVITE is kept as sent (its Via
/// and branch are what the CANCEL must carry), without its body.
public struct PendingInviteSnapshot: Codable, Sendable, Equatable {
    /// The INVITE's head as sent.
    public var invite: String
    /// Where it went: "udp", "tcp" or "tls", host and port.
    public var transport: String
    public var host: String
    public var port: Int

    public init(_ invite: SIPMessage, peer: SIPPeer) {
        var head = invite
        head.body = []
        head.setHeader(.contentLength, "0")
        head.removeHeaders(.contentType)
        self.invite = String(decoding: head.serialize(), as: UTF8.self)
        transport = peer.transport.rawValue.lowercased()
        host = peer.address.host
        port = peer.address.port
    }

    /// Where the CANCEL goes: where the INVITE went.
    public var peer: SIPPeer {
        SIPPeer(
            transport: SIPTransportProtocol(rawValue: transport.uppercased()) ?? .udp,
            address: SocketAddress(host: host, port: port))
    }
}

extension SIPMessage {
    /// The CANCEL of this INVITE (RFC 3261 §9.1): its Request-URI, Call-ID, From, To, CSeq
    /// number and Route, method CANCEL; nil when the INVITE lacks one of them. The Via (the
    /// INVITE's top one, same branch) is the sender's to add.
    public var cancelRequest: SIPMessage? {
        guard let uri = requestURI, let cseq else { return nil }
        var c = SIPMessage.request("CANCEL", uri)
        for name: SIPHeaderName in [.from, .to, .callID] { if let v = self[name] { c.addHeader(name, v) } }
        c.addHeader(.cseq, CSeq(cseq.sequence, "CANCEL").serialize())
        for route in values(.route) { c.addHeader(.route, route) }
        c.addHeader(.maxForwards, "70")
        return c
    }
}

extension SIPCall {
    /// Our INVITE while it rings (a provisional response came, no final one), for another
    /// process to CANCEL; nil otherwise.
    public var pendingInviteSnapshot: PendingInviteSnapshot? {
        guard !isIncoming, state == .early, let sent = sentInvite else { return nil }
        return PendingInviteSnapshot(sent, peer: peer)
    }
}

extension SIPUserAgent {
    /// CANCELs an INVITE another process sent and left ringing, with `headers` (a Reason):
    /// the INVITE's own top Via, so the server matches it to the INVITE's transaction. The
    /// answer goes to that Via, the dead sender: fire and forget. On the loop (asserted in
    /// debug builds). False when the stored INVITE cannot be read.
    public func sendCancel(for snapshot: PendingInviteSnapshot, headers: [SIPHeader]) -> Bool {
        loop.assertInLoop()
        guard let invite = try? SIPMessage.parse(Array(snapshot.invite.utf8)), invite.method == "INVITE",
            let via = invite.values(.via).first, var cancel = invite.cancelRequest
        else { return false }
        cancel.prependHeader(.via, via)
        cancel.headers.append(contentsOf: headers)
        send(cancel, to: snapshot.peer) { _ in }
        return true
    }
}
