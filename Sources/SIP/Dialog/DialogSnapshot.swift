/// What it takes to end a dialog from another process: its identifiers, addresses, route
/// and where its requests go, as plain strings that survive a crash (the gateway keeps one
/// per answered call in its record store; the next process BYEs what a crash left up).
public struct DialogSnapshot: Codable, Sendable, Equatable {
    public var callID: String
    public var localTag: String
    public var remoteTag: String?
    /// Our From (UAC) or To (UAS), without the tag.
    public var localAddress: String
    public var remoteAddress: String
    public var localSequence: UInt32
    public var remoteTarget: String
    public var routeSet: [String]
    public var localContact: String
    /// Where in-dialog requests went: "udp", "tcp" or "tls", host and port.
    public var transport: String
    public var host: String
    public var port: Int
    /// TLS: the name the server's certificate was checked against (absent in older records).
    public var tlsServerName: String?

    public init(_ dialog: Dialog, peer: SIPPeer) {
        callID = dialog.callID
        localTag = dialog.localTag
        remoteTag = dialog.remoteTag
        localAddress = dialog.localAddress.serialize()
        remoteAddress = dialog.remoteAddress.serialize()
        localSequence = dialog.localSequence
        remoteTarget = dialog.remoteTarget.serialize()
        routeSet = dialog.routeSet.map { $0.serialize() }
        localContact = dialog.localContact.serialize()
        transport = peer.transport.rawValue.lowercased()
        host = peer.address.host
        port = peer.address.port
        tlsServerName = peer.tls?.serverName
    }

    /// The dialog again, or nil when a stored field no longer parses.
    public var dialog: Dialog? {
        guard let local = try? NameAddress.parse(localAddress), let remote = try? NameAddress.parse(remoteAddress),
            let target = try? SIPURI.parse(remoteTarget), let contact = try? SIPURI.parse(localContact)
        else { return nil }
        var routes: [NameAddress] = []
        for r in routeSet {
            guard let route = try? NameAddress.parse(r) else { return nil }
            routes.append(route)
        }
        return Dialog(
            callID: callID, localTag: localTag, remoteTag: remoteTag, localAddress: local, remoteAddress: remote,
            localSequence: localSequence, remoteSequence: nil, remoteTarget: target, routeSet: routes,
            localContact: contact)
    }

    /// The in-dialog peer.
    public var peer: SIPPeer {
        let t = SIPTransportProtocol(rawValue: transport.uppercased()) ?? .udp
        // The name is kept; the trust settings are the trunk's, which the caller adds.
        return SIPPeer(
            transport: t, address: SocketAddress(host: host, port: port),
            tls: t == .tls ? tlsServerName.map { SIPTLSTarget(serverName: $0) } : nil)
    }
}

extension SIPCall {
    /// The confirmed dialog as a snapshot, for the record store; nil before it is confirmed.
    public var dialogSnapshot: DialogSnapshot? {
        guard state == .confirmed, let dialog else { return nil }
        return DialogSnapshot(dialog, peer: resolve(.uri(dialog.nextHop)))
    }
}

extension SIPUserAgent {
    /// Sends a BYE in a dialog another process (a crashed gateway) left up, with `headers`
    /// (a Reason). The CSeq jumps well past the stored one: the dead process may have sent
    /// re-INVITEs after the snapshot was written. Fire and forget: `completion` gets the
    /// final status, or nil for no answer. On the loop (asserted in debug builds).
    /// `peer`: where to send it instead of `snapshot.peer` (the same address with the trunk's
    /// TLS settings).
    public func sendBye(
        in snapshot: DialogSnapshot, to peer: SIPPeer? = nil, headers: [SIPHeader],
        completion: @escaping (Int?) -> Void = { _ in }
    ) -> Bool {
        loop.assertInLoop()
        guard var dialog = snapshot.dialog else { return false }
        dialog.localSequence &+= 1000
        var bye = dialog.makeRequest("BYE")
        bye.headers.append(contentsOf: headers)
        send(bye, to: peer ?? snapshot.peer) { event in
            switch event {
            case .response(let r):
                if let code = r.statusCode, code >= 200 { completion(code) }
            case .timeout, .transportError:
                completion(nil)
            }
        }
        return true
    }
}
