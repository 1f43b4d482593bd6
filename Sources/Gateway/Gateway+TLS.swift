import SIP

// TLS toward the trunks: which name a proxy's certificate must carry and what trust checks
// it (the trunk's `sip.tls`), checked at start so a bad file stops it; certificate reloads;
// and the log lines that say why a TLS connection failed (docs/operations.md, "SIP over TLS").

extension Gateway {
    /// The TLS target of a trunk's proxy: `sip.tls.serverName`, else the proxy's host as
    /// written (RFC 5922 §4: the name given to DNS, not the SRV target's).
    static func tlsTarget(_ profile: TrunkProfile, _ proxy: ProxyAddress) -> SIPTLSTarget {
        SIPTLSTarget(serverName: profile.sip.tls.serverName ?? proxy.host, client: profile.sip.tls.client)
    }

    /// The transport a proxy's URI asks for (its own `transport=`, `sips:`, or the trunk's).
    static func transport(_ profile: TrunkProfile, _ proxy: ProxyAddress) -> SIPTransportProtocol {
        if proxy.secure { return .tls }
        switch proxy.transport ?? profile.sip.transport {
        case .udp: return .udp
        case .tcp: return .tcp
        case .tls: return .tls
        }
    }

    /// The peer for a located target of `proxy`: TLS ones carry the trunk's name and trust.
    /// Its address is remembered (loop only), so in-dialog requests to it keep the trunk's
    /// trust.
    func peer(for target: SIPTarget, profile: TrunkProfile, proxy: ProxyAddress) -> SIPPeer? {
        guard var peer = target.peer else { return nil }
        if peer.transport == .tls {
            let tls = Self.tlsTarget(profile, proxy)
            peer.tls = tls
            if tlsTargets.count >= 4096 { tlsTargets.removeAll() }
            tlsTargets[peer.address] = tls
        }
        return peer
    }

    /// Every trunk that may use TLS must have usable files: the CA, our certificate and its
    /// key. Throws the first problem as a profile error (file, `sip.tls`, what failed).
    static func checkTLS(_ profiles: [TrunkProfile]) throws {
        for p in profiles {
            let usesTLS = p.sip.transport == .tls || (p.outbound?.proxies ?? []).contains { $0.isTLS }
            let tls = p.sip.tls
            guard usesTLS || tls != .init() else { continue }
            do throws(TLSFailure) {
                try SIPUserAgent.checkTLSClient(tls.client)
            } catch {
                throw ProfileError(
                    file: p.source.isEmpty ? p.name : p.source, keyPath: "sip.tls", message: error.description)
            }
        }
    }

    /// The trunk TLS target for a dialog a crashed process left (its stored name), so its
    /// BYE goes with the trunk's trust.
    func tlsTarget(forStoredName name: String) -> SIPTLSTarget {
        for p in profiles.values.sorted(by: { $0.name < $1.name }) {
            for proxy in p.outbound?.proxies ?? [] where proxy.isTLS || p.sip.transport == .tls {
                let t = Self.tlsTarget(p, proxy)
                if t.serverName == name { return t }
            }
        }
        return SIPTLSTarget(serverName: name)
    }

    /// Reads the TLS listener's certificate and key (and the trunks' client certificates)
    /// again, for new connections; calls in progress keep theirs. From any thread
    /// (`irisgw serve` calls it on SIGHUP). On an error nothing changes.
    public func reloadTLSCertificates() throws(TLSFailure) {
        try ua.reloadTLSCertificates()
    }

    /// One log line per TLS failure: ours toward trunks always, peers' at most
    /// `TLSLogBudget.perMinute` a minute (a scanner must not flood the log). Never a key,
    /// never a certificate's content: the name, the address, what failed.
    func logConnectionFailure(_ report: SIPConnectionFailureReport) {
        guard case .tls(let failure) = report.failure else { return }
        metrics.tlsFailure(failure.kind)
        if report.outbound {
            Log.tls.warning(
                "TLS to \(report.peer.address) (\(report.peer.tls?.serverName ?? "?")): \(failure)",
                ["peer": "\(report.peer.address)", "serverName": "\(report.peer.tls?.serverName ?? "")"])
        } else if tlsLogBudget.take(now: EventLoop.now()) {
            Log.tls.notice("TLS from \(report.peer.address): \(failure)", ["peer": "\(report.peer.address)"])
        }
    }
}

/// A small budget of log lines per minute for failures peers cause.
struct TLSLogBudget {
    static let perMinute = 20
    private var windowStart = 0.0
    private var used = 0

    mutating func take(now: Double) -> Bool {
        if now - windowStart >= 60 {
            windowStart = now
            used = 0
        }
        used += 1
        return used <= Self.perMinute
    }
}
