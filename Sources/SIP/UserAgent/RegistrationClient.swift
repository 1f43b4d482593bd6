/// Keeps a registration at a registrar (RFC 3261 §10): REGISTER on start, refresh before
/// expiry, one authenticated retry per challenge, backoff on failure, unregister on stop.
/// The timing and retry policy live in `RegistrationMachine`; this class carries out its
/// actions over the user agent. Confined to the agent's loop (asserted in debug builds);
/// not Sendable: another thread holds it in a `LoopBound`.
public final class RegistrationClient {
    public struct Configuration: Sendable {
        /// Request-URI of the REGISTER: the registrar's domain (`sip:carrier.example`).
        public var registrar: SIPURI
        /// Where to send it.
        public var peer: SIPPeer
        /// The address of record (To and From).
        public var addressOfRecord: NameAddress
        public var credentials: DigestCredentials?
        public var machine: RegistrationMachine.Configuration

        public init(
            registrar: SIPURI, peer: SIPPeer, addressOfRecord: NameAddress, credentials: DigestCredentials? = nil,
            machine: RegistrationMachine.Configuration = .init()
        ) {
            self.registrar = registrar
            self.peer = peer
            self.addressOfRecord = addressOfRecord
            self.credentials = credentials
            self.machine = machine
        }
    }

    public let configuration: Configuration
    /// Called on the loop whenever the state changes.
    public var onStateChange: ((RegistrationMachine.State) -> Void)?
    public var state: RegistrationMachine.State { machine.state }
    /// The last final status the registrar answered.
    public var lastStatus: Int? { machine.lastStatus }

    private unowned let ua: SIPUserAgent
    private var machine: RegistrationMachine
    private let callID: String
    private let fromTag = SIPIdentifiers.tag()
    private var cseq: UInt32 = 0
    private var challenges: [DigestChallenge] = []
    private var digest = DigestClient()
    private var timer: SIPEventLoop.Timer?

    init(ua: SIPUserAgent, configuration: Configuration) {
        self.ua = ua
        self.configuration = configuration
        self.machine = RegistrationMachine(configuration: configuration.machine)
        self.callID = SIPIdentifiers.callID(host: ua.localAddress(toward: configuration.peer).host)
    }

    public func start() { apply(machine.handle(.start(now: SIPEventLoop.now()))) }

    /// Unregisters (Expires: 0) when a binding may be live, then stays unregistered.
    public func stop() { apply(machine.handle(.stop(now: SIPEventLoop.now()))) }

    /// Stops refreshing without unregistering: another node of the cluster registers the same
    /// contact now.
    public func handOver() { apply(machine.handle(.handOver)) }

    private func apply(_ actions: [RegistrationMachine.Action]) {
        ua.loop.assertInLoop()
        for action in actions {
            switch action {
            case .sendRegister(let expires, let authenticate):
                sendRegister(expires: expires, authenticate: authenticate)
            case .schedule(let at):
                ua.loop.cancel(timer)
                timer = ua.loop.schedule(after: at - SIPEventLoop.now()) { [weak self] in
                    guard let self else { return }
                    self.apply(self.machine.handle(.timerFired(now: SIPEventLoop.now())))
                }
            case .cancelTimer:
                ua.loop.cancel(timer)
            case .stateChanged(let s):
                onStateChange?(s)
            }
        }
    }

    private func sendRegister(expires: Int, authenticate: Bool) {
        cseq &+= 1
        var m = SIPMessage.request("REGISTER", configuration.registrar)
        var from = configuration.addressOfRecord
        from.tag = fromTag
        m.addHeader(.from, from.serialize())
        m.addHeader(.to, configuration.addressOfRecord.serialize())
        m.addHeader(.callID, callID)
        m.addHeader(.cseq, CSeq(cseq, "REGISTER").serialize())
        m.addHeader(.contact, NameAddress(uri: ua.registrationContact(toward: configuration.peer)).serialize())
        m.addHeader(.expires, String(expires))
        if authenticate, let creds = configuration.credentials,
            let auth = try? digest.authorization(
                for: challenges, method: "REGISTER", uri: configuration.registrar.serialize(), credentials: creds)
        {
            m.addHeader(lastChallengeWasProxy ? .proxyAuthorization : .authorization, auth.serialize())
        }
        ua.send(m, to: configuration.peer) { [weak self] event in self?.handle(event) }
    }

    private var lastChallengeWasProxy = false

    private func handle(_ event: ClientTransactionEvent) {
        let now = SIPEventLoop.now()
        switch event {
        case .timeout:
            apply(machine.handle(.timeout(now: now)))
        case .transportError:
            apply(machine.handle(.transportError(now: now)))
        case .response(let r):
            guard let status = r.statusCode, status >= 200 else { return }
            var stale = false
            if status == 401 || status == 407 {
                lastChallengeWasProxy = status == 407
                challenges = r.digestChallenges
                stale = challenges.contains(where: \.stale)
                // Without credentials a challenge cannot be answered: count it as a failure.
                if configuration.credentials == nil || challenges.isEmpty {
                    apply(machine.handle(.response(now: now, status: 403)))
                    return
                }
            }
            apply(
                machine.handle(
                    .response(
                        now: now, status: status, grantedExpires: grantedExpires(r),
                        minExpires: r[.minExpires].flatMap { Int($0) }, retryAfter: r.retryAfter, stale: stale)))
        }
    }

    /// The expiry the registrar granted our contact: its `expires` parameter, else Expires.
    private func grantedExpires(_ r: SIPMessage) -> Int? {
        let ours = ua.registrationContact(toward: configuration.peer)
        for c in r.contacts where c.uri.host == ours.host && c.uri.port == ours.port && c.uri.user == ours.user {
            if let e = c.parameters[parameter: "expires"] ?? nil, let n = Int(e) { return n }
        }
        return r.expires
    }
}

/// OPTIONS keepalive to one peer (a trunk proxy): up/down state with hysteresis, from
/// `OptionsKeepalive`. Confined to the agent's loop (asserted in debug builds); not
/// Sendable: another thread holds it in a `LoopBound`.
public final class KeepaliveClient {
    public let peer: SIPPeer
    public let target: SIPURI
    /// Called on the loop whenever the state changes.
    public var onStateChange: ((OptionsKeepalive.State) -> Void)?
    public var state: OptionsKeepalive.State { machine.state }

    private unowned let ua: SIPUserAgent
    private var machine: OptionsKeepalive
    private var timer: SIPEventLoop.Timer?
    private let from: NameAddress

    init(ua: SIPUserAgent, target: SIPURI, peer: SIPPeer, configuration: OptionsKeepalive.Configuration) {
        self.ua = ua
        self.target = target
        self.peer = peer
        self.machine = OptionsKeepalive(configuration: configuration)
        self.from = NameAddress(uri: SIPURI(user: "ping", host: ua.localAddress(toward: peer).host))
    }

    public func start() { apply(machine.handle(.start(now: SIPEventLoop.now()))) }
    public func stop() { apply(machine.handle(.stop)) }

    private func apply(_ actions: [OptionsKeepalive.Action]) {
        ua.loop.assertInLoop()
        for action in actions {
            switch action {
            case .sendOptions:
                ua.sendRequest("OPTIONS", to: target, peer: peer, from: from) { [weak self] event in
                    guard let self else { return }
                    let now = SIPEventLoop.now()
                    switch event {
                    case .response(let r):
                        guard let status = r.statusCode, status >= 200 else { return }
                        self.apply(self.machine.handle(.response(status: status, now: now)))
                    case .timeout:
                        self.apply(self.machine.handle(.timeout(now: now)))
                    case .transportError:
                        self.apply(self.machine.handle(.transportError(now: now)))
                    }
                }
            case .schedule(let at):
                ua.loop.cancel(timer)
                timer = ua.loop.schedule(after: at - SIPEventLoop.now()) { [weak self] in
                    guard let self else { return }
                    self.apply(self.machine.handle(.timerFired(now: SIPEventLoop.now())))
                }
            case .cancelTimer:
                ua.loop.cancel(timer)
            case .stateChanged(let s):
                onStateChange?(s)
            }
        }
    }
}

extension SIPUserAgent {
    /// A registration client for `configuration`; call `start()` on it (on the loop).
    public func registration(_ configuration: RegistrationClient.Configuration) -> RegistrationClient {
        RegistrationClient(ua: self, configuration: configuration)
    }

    /// An OPTIONS keepalive toward `peer`; call `start()` on it (on the loop).
    public func keepalive(
        target: SIPURI, peer: SIPPeer, configuration: OptionsKeepalive.Configuration = .init()
    ) -> KeepaliveClient {
        KeepaliveClient(ua: self, target: target, peer: peer, configuration: configuration)
    }
}
