// What the agent admits before a request reaches a transaction (SIPDefence): scanners,
// sources it does not know, floods, and more open transactions than it will hold.

extension SIPUserAgent {
    func refuse(_ reason: SIPRefusal) { refusals[reason, default: 0] += 1 }

    func isTrusted(_ address: SocketAddress) -> Bool { isTrustedSource?(address) ?? true }

    /// Counts a trusted source's request against its rate: ACKs in a bucket of their own
    /// (`SourceGuard.admitAcknowledgement`), so the ACKs that end a flood's transactions are
    /// not dropped with the requests over the rate.
    func admitTrusted(_ host: String, ack: Bool, now: Double) -> SourceGuard.Verdict {
        ack ? sources.admitAcknowledgement(host, now: now) : sources.admit(host, trusted: true, now: now)
    }

    static let ackPrefix = Array("ACK ".utf8)

    /// True when `request` may go on to the transaction layer; otherwise it was dropped or
    /// answered statelessly here (to `peer`), and counted. `source` is who sent it: `peer`,
    /// or the carrier a trusted proxy names. A `trusted` source's request was counted
    /// against its rate before this (`receive`).
    func admit(_ request: SIPMessage, from peer: SIPPeer, source: SIPPeer, trusted: Bool, now: Double) -> Bool {
        let defence = self.defence
        let host = source.address.host
        if defence.isScanner(request) {
            refuse(.scanner)
            // A trunk's address is never banned: a spoofed datagram with a scanner's name
            // must not be able to cut a carrier off.
            if !trusted { sources.ban(host, now: now) }
            return false
        }
        // A request of a call we have (a BYE from a proxy we never listed, say) is the
        // call's business, whatever its source.
        let ours = request.callID.map { calls[$0] != nil } ?? false
        if !trusted, !ours, !defence.answerUnknownSources {
            // A source that may authenticate gets a stateless challenge instead of silence.
            if let verdict = admitAuthenticating(request, from: source, replyTo: peer, now: now) { return verdict }
            refuse(.unknownSource)
            // Counted all the same, so a persistent prober ends up banned and unparsed.
            if sources.admit(host, trusted: false, now: now) == .ban { refuse(.banned) }
            return false
        }
        // A source outside the trunks is counted here, once its request shows whether it
        // belongs to a call of ours (which gets the trusted rate, never a ban).
        if !trusted, sources.admit(host, trusted: ours, now: now) != .admit {
            refuse(.rateLimited)
            return false
        }
        if request.method != "ACK", transactions.serverCount >= defence.maxServerTransactions,
            !transactions.hasTransaction(for: request)
        {
            refuse(.transactionsFull)
            if trusted {
                var r = SIPMessage.response(
                    to: request, status: 503, toTag: request.to?.tag == nil ? SIPIdentifiers.tag() : nil)
                r.addHeader(.retryAfter, "5")
                r.addHeader(.server, configuration.userAgent)
                sendStateless(r, to: peer)
            }
            return false
        }
        return true
    }

    /// Requests that end or complete work in progress rather than start it (an ACK stops a
    /// final response's retransmissions, a BYE ends a call, a CANCEL a ringing one, a PRACK
    /// completes a reliable provisional, a NOTIFY reports our REFER): read by their method
    /// token, before any parse.
    static func finishesWork(_ bytes: UnsafeRawBufferPointer) -> Bool {
        finishingMethods.contains { m in bytes.count > m.count && bytes.starts(with: m) && bytes[m.count] == 0x20 }
    }

    /// NOTIFY too: in a dialog it reports a REFER of ours (RFC 3515), and shedding it costs the
    /// carrier's retransmission (0.5 s and more per transfer in a burst: `BENCH transfer`).
    static let finishingMethods: [[UInt8]] = ["ACK", "BYE", "CANCEL", "PRACK", "NOTIFY"].map { Array($0.utf8) }

    /// Every drop and refusal of the agent and its transports, keyed by the `/metrics` label.
    public var refusalCounts: [String: Int] {
        var out: [String: Int] = [:]
        for (k, v) in refusals { out[k.rawValue] = v }
        for (k, v) in transports.refusals { out[k.rawValue] = v }
        return out
    }
}
