/// How a `SIPCall` drives its `InviteSessionMachine`: events in (from the agent, the
/// transactions, the loop timers), actions out (to the transactions, the transports, the
/// loop and the delegate).
extension SIPCall {
    typealias Machine = InviteSessionMachine

    /// Feeds one event and carries out the actions, run to completion: an event raised while
    /// actions are being carried out (a delegate calling back, say) waits its turn.
    func run(_ event: Machine.Event) {
        ua.loop.assertInLoop()
        queue.append(event)
        guard !running else { return }
        running = true
        defer { running = false }
        while !queue.isEmpty {
            let next = queue.removeFirst()
            for action in loopState.value.handle(next, now: SIPEventLoop.now()) { perform(action) }
        }
    }

    private func perform(_ action: Machine.Action) {
        switch action {
        case let .send(request, kind, hop):
            send(request, kind, to: hop)
        case let .sendACK(ack, hop, remember):
            var m = ack
            let target = resolve(hop)
            m.prependHeader(.via, ua.makeVia(toward: target).serialize())
            m.addHeader(.userAgent, ua.configuration.userAgent)
            let bytes = m.serialize()
            ua.transports.send(bytes, to: target)
            if remember { rememberedACK = (bytes, target) }
        case .resendACK:
            if let ack = rememberedACK { ua.transports.send(ack.bytes, to: ack.peer) }
        case let .respond(response, tx):
            ua.transactions.respond(response, in: tx)
        case .retransmit(let response):
            ua.transports.send(response.serialize(), to: peer)
        case let .startTimer(timer, at):
            ua.loop.cancel(timers[timer])
            timers[timer] = ua.loop.schedule(after: at - SIPEventLoop.now()) { [weak self] in
                guard let self else { return }
                self.timers[timer] = nil
                self.run(.timerFired(timer))
            }
        case .cancelTimer(let timer):
            ua.loop.cancel(timers.removeValue(forKey: timer))
        case .terminateInviteTransaction:
            if let tx = inviteTransaction { ua.transactions.terminate(tx) }
        case .report(let report):
            deliver(report)
        case let .askForResponse(request, tx):
            let choice = delegate?.call(self, responseTo: request) ?? SIPRequestResponse.refusal(for: request)
            ua.respond(request, tx, choice.status, reason: choice.reason, headers: choice.headers)
        case let .askForAnswer(offer, request):
            // Before anything queued meanwhile: the machine waits for this answer.
            queue.insert(.offerAnswer(delegate?.call(self, answerFor: offer, in: request)), at: 0)
        case .remove:
            // Ended transactions are gone already; terminating them again does nothing.
            for tx in clientTransactions { ua.transactions.terminate(tx) }
            clientTransactions = []
            ua.remove(self)
        }
    }

    /// Sends in a new client transaction; its outcome comes back tagged with `kind`.
    private func send(_ request: SIPMessage, _ kind: Machine.ClientRequest, to hop: Machine.Hop) {
        var m = request
        if kind == .cancel, let via = sentInvite?.values(.via).first { m.prependHeader(.via, via) }
        let (tx, sent) = ua.send(m, to: resolve(hop)) { [self] event in
            switch event {
            case .response(let r): run(.response(r, to: kind))
            case .timeout: run(.requestTimeout(kind))
            case .transportError: run(.transportError(kind))
            }
        }
        if let tx { clientTransactions.append(tx) }
        if kind == .invite {
            sentInvite = sent
            inviteTransaction = tx
        }
        if tx == nil { queue.append(.notSent(kind)) }
    }

    /// The peer for a hop: the INVITE's peer, or the dialog's next hop over the call's
    /// transport (on the call's stream connection, and with its TLS name, when it is the same
    /// address and transport). A hop named by
    /// a host name comes from the DNS cache; while the cache has no answer yet the call keeps
    /// the peer it has (a request never waits for DNS).
    func resolve(_ hop: Machine.Hop) -> SIPPeer {
        guard case .uri(let uri) = hop, var p = ua.peerWithoutWaiting(for: uri, defaultTransport: peer.transport) else {
            return peer
        }
        if p.address == peer.address && p.transport == peer.transport {
            p.connection = peer.connection
            p.tls = peer.tls
        } else if p.transport == .tls, let callTLS = peer.tls {
            // Another TLS hop of this dialog: checked with the trunk's trust, against the
            // hop's host name (RFC 5922 §4); an address (an SBC's Contact) keeps the name
            // the dialog's server proved, since it came over that authenticated connection.
            p.tls =
                SIPDestination.isNumeric(uri.host)
                ? callTLS : SIPTLSTarget(serverName: uri.host, client: callTLS.client)
        }
        return p
    }

    private func deliver(_ report: Machine.Report) {
        switch report {
        case .incomingCall:
            if let agentDelegate = ua.delegate {
                agentDelegate.userAgent(ua, didReceiveCall: self)
            } else {
                run(.reject(status: 480, reason: nil, headers: []))
            }
        case .provisional(let r): delegate?.call(self, didReceiveProvisional: r)
        case .trying(let r): delegate?.call(self, didReceiveTrying: r)
        case .connected(let m): delegate?.call(self, didConnect: m)
        case let .answer(sdp, m): delegate?.call(self, didReceiveAnswer: sdp, in: m)
        case .request(let m): delegate?.call(self, didReceiveRequest: m)
        case .offerCompleted(let status): delegate?.call(self, didCompleteOffer: status)
        case let .requestCompleted(method, cseq, status, response):
            delegate?.call(self, didCompleteRequest: method, cseq: cseq, status: status, response: response)
        case let .ended(end, m): delegate?.call(self, didEnd: end, message: m)
        }
    }

    // MARK: From the agent

    /// A new incoming call, or our INVITE to send.
    func start() { run(.start) }

    func dialogMatches(_ m: SIPMessage) -> Bool { machine.dialogMatches(m) }

    /// A CANCEL whose branch is our INVITE's.
    var inviteBranch: String? { machine.inviteBranch }

    func handleInDialogRequest(_ m: SIPMessage, _ tx: ServerTransaction) { run(.request(m, in: tx)) }

    func handleCancel(_ m: SIPMessage, _ tx: ServerTransaction) { run(.cancel(m, in: tx)) }

    /// A response no transaction matched: true when it was ours (a retransmitted 2xx).
    func handleStrayResponse(_ r: SIPMessage) -> Bool {
        guard machine.claims(strayResponse: r) else { return false }
        run(.strayResponse(r))
        return true
    }

    /// An ACK outside any transaction: true when it belongs to this call.
    func handleACK(_ ack: SIPMessage) -> Bool {
        guard machine.dialogMatches(ack) else { return false }
        run(.ack(ack))
        return true
    }

    /// An INVITE after its server transaction ended: true when it is ours again.
    func handleRetransmission(_ m: SIPMessage) -> Bool {
        guard machine.isRetransmission(of: m) else { return false }
        run(.inviteRetransmission(m))
        return true
    }
}
