/// Locating SIP servers (RFC 3263) without blocking the SIP loop: `SIPServerLocator` says
/// what to ask, the agent's `DNSResolver` asks it (c-ares on this loop, cached).
extension SIPUserAgent {
    /// The outcome of locating a destination: its targets in order, or why there are none.
    public typealias LocateResult = Result<[SIPTarget], SIPLocateError>

    /// The agent's resolver (made on first use; `start()` makes it). On the loop (asserted in debug builds).
    public var resolver: DNSResolver {
        loop.assertInLoop()
        if let dnsResolver { return dnsResolver }
        let r = DNSResolver(loop: loop, configuration: configuration.dns)
        dnsResolver = r
        return r
    }

    /// Locates `destination`: returns the result now when no question needs the network (a
    /// numeric host, or every answer cached); otherwise nil, and `completion` gets it later
    /// on the loop (never before this returns). `preferred` is our transport when neither
    /// the URI nor DNS chooses one. On the loop (asserted in debug builds).
    @discardableResult
    public func locate(
        _ destination: SIPDestination, preferred: SIPTransportProtocol = .udp,
        completion: @escaping (LocateResult) -> Void
    ) -> LocateResult? {
        loop.assertInLoop()
        var machine = SIPServerLocator(destination, preferred: SIPTargetTransport(preferred))
        let first = machine.start()
        if case .done(let targets) = first { return .success(targets) }
        if case .failed(let error) = first { return .failure(error) }
        return LocateJob(machine: machine, resolver: resolver, completion: completion).drive(first)
    }

    /// Where an in-dialog request for `uri` (a route or the remote target) goes, without
    /// waiting: a numeric host at once; a name from the cache, or nil when the cache has no
    /// answer yet (a lookup is started so a later request finds it). On the loop (asserted in debug builds).
    public func peerWithoutWaiting(for uri: SIPURI, defaultTransport: SIPTransportProtocol) -> SIPPeer? {
        loop.assertInLoop()
        let destination = SIPDestination(uri)
        var machine = SIPServerLocator(destination, preferred: SIPTargetTransport(defaultTransport))
        var step = machine.start()
        while true {
            switch step {
            case .done(let targets):
                return targets.lazy.compactMap(\.peer).first
            case .failed:
                return nil
            case .lookup(let questions):
                var next: SIPServerLocator.Step?
                for q in questions {
                    guard let answer = resolver.cached(q) else {
                        locate(destination, preferred: defaultTransport) { _ in }
                        return nil
                    }
                    if let n = machine.receive(q, answer) { next = n }
                }
                guard let next else { return nil }
                step = next
            }
        }
    }
}

/// One locate in progress: feeds the machine each answer as it arrives and moves it on.
/// The resolver's completions hold it until the last answer.
private final class LocateJob {
    private var machine: SIPServerLocator
    private let resolver: DNSResolver
    private let completion: (SIPUserAgent.LocateResult) -> Void
    /// False once an answer came from the network: the result goes to `completion`.
    private var synchronous = true

    init(machine: SIPServerLocator, resolver: DNSResolver, completion: @escaping (SIPUserAgent.LocateResult) -> Void) {
        self.machine = machine
        self.resolver = resolver
        self.completion = completion
    }

    /// Runs steps while answers come from the cache; the result when it is reached now.
    func drive(_ first: SIPServerLocator.Step) -> SIPUserAgent.LocateResult? {
        var step: SIPServerLocator.Step? = first
        while let current = step {
            step = nil
            switch current {
            case .done(let targets):
                return deliver(.success(targets))
            case .failed(let error):
                return deliver(.failure(error))
            case .lookup(let questions):
                for q in questions {
                    let cached = resolver.lookup(q) { [self] answer in
                        guard let next = machine.receive(q, answer) else { return }
                        synchronous = false
                        _ = drive(next)
                    }
                    if let cached, let next = machine.receive(q, cached) { step = next }
                }
            }
        }
        return nil
    }

    private func deliver(_ result: SIPUserAgent.LocateResult) -> SIPUserAgent.LocateResult? {
        if synchronous { return result }
        completion(result)
        return nil
    }
}
