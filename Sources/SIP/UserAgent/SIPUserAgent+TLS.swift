// TLS at the agent's level: what it does when a stream connection fails (fail what was sent
// over it, remember why), certificate reloads, and the default TLS target of peers that
// carry none. The TLS layer itself is the transports' (SIPStreamConnections.swift).

extension SIPUserAgent {
    /// Which name and trust a TLS peer without its own target gets (an in-dialog hop, a BYE
    /// after a restart): the gateway answers from its trunks; nil (or no closure) takes the
    /// address as the name and the system trust store. Set before `start`.
    public var tlsTarget: ((SocketAddress) -> SIPTLSTarget?)? {
        get { transports.tlsTarget }
        set { transports.tlsTarget = newValue }
    }

    /// Why the last stream connection toward `peer` (its transport and address, and for TLS
    /// its name) failed, if it did within the last `within` seconds. On the loop (asserted in debug builds).
    public func connectionFailure(toward peer: SIPPeer, within: Double = 30) -> SIPConnectionFailureReport? {
        loop.assertInLoop()
        guard peer.transport.isStream, let report = recentConnectionFailures[transports.key(for: peer)],
            SIPEventLoop.now() - report.at <= within
        else { return nil }
        return report
    }

    /// Reads the TLS listeners' certificate and key again (and every trunk's client
    /// certificate at its next connection): new connections use them, open ones (and their
    /// calls) go on with the old. On an error nothing changes. From any thread.
    public func reloadTLSCertificates() throws(TLSFailure) {
        let server = configuration.tlsServer
        let result: Result<Void, TLSFailure> = loop.sync { [self] in
            do throws(TLSFailure) {
                try transports.reloadTLS(server: server)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Checks that TLS client settings can be used (the CA file, our certificate and key read
    /// and match), without connecting anywhere: a profile with a bad file fails at start.
    public static func checkTLSClient(_ settings: SIPTLSClientSettings) throws(TLSFailure) {
        _ = try TLSContext(client: settings)
    }

    /// Checks a TLS listener's settings the same way.
    public static func checkTLSServer(_ settings: SIPTLSServerSettings) throws(TLSFailure) {
        _ = try TLSContext(server: settings)
    }

    /// A stream connection failed: the client transactions waiting over it fail now (a
    /// transport error: the call fails over to the next target), and the failure is kept
    /// for the caller to read.
    func connectionFailed(_ report: SIPConnectionFailureReport) {
        let key = transports.key(for: report.peer)
        if report.outbound || report.peer.transport == .tls {
            if recentConnectionFailures.count >= 1024 {
                let now = SIPEventLoop.now()
                recentConnectionFailures = recentConnectionFailures.filter { now - $0.value.at < 30 }
                if recentConnectionFailures.count >= 1024 { recentConnectionFailures.removeAll() }
            }
            recentConnectionFailures[key] = report
        }
        // Only a connection that carried something of ours can have requests waiting on it:
        // a flood of peers' connections that close costs no walk of the transactions.
        if report.carried { transactions.failClientTransactions(toward: report.peer, failedAt: report.at) }
        onConnectionFailure?(report)
    }
}
