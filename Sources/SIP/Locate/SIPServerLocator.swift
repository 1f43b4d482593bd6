// The resolver's types (configuration, failures, records) appear in SIP's API, this
// locator's first: users of SIP see them through this module.
@_exported import DNS

/// RFC 3263 §4 as a plain value: which DNS questions to ask for a destination, and the
/// ordered targets their answers give. No socket and no clock: answers come in with
/// `receive`, randomness (RFC 2782 weights) is injected. `SIPUserAgent.locate` drives it
/// with the resolver.
///
/// - a numeric host: that address, no DNS;
/// - an explicit port: A/AAAA of the host only;
/// - `transport=`: the SRV name of that transport, then A/AAAA;
/// - otherwise NAPTR (`SIP+D2U`, `SIP+D2T`, `SIPS+D2T`; only `SIPS+D2T` for `sips:`), then
///   SRV for each usable record in order and preference; without NAPTR, SRV for every
///   transport we support (the preferred first); without SRV, A/AAAA of the host on 5060.
///
/// Each SRV target expands to its addresses (A before AAAA), in RFC 2782 order. A target
/// whose transport is not in `supported` is skipped (`skipped` says why).
public struct SIPServerLocator: Sendable {
    /// What the driver does next.
    public enum Step: Sendable, Equatable {
        /// Ask these questions (at once); feed each answer to `receive`.
        case lookup([DNSQuestion])
        /// The targets, in the order to try them.
        case done([SIPTarget])
        case failed(SIPLocateError)
    }

    public let destination: SIPDestination
    /// Our transport when the URI names none and DNS does not choose (the profile's).
    public let preferred: SIPTargetTransport
    /// Transports we can send on; the others are skipped.
    public let supported: Set<SIPTargetTransport>
    /// Targets kept at most (each may cost a full INVITE timeout).
    public let maxTargets: Int
    /// Targets DNS gave that cannot be used, with why.
    public private(set) var skipped: [(target: String, reason: String)] = []

    private let random: @Sendable (ClosedRange<Int>) -> Int
    private var phase = Phase.start
    private var outstanding = Set<DNSQuestion>()
    private var answers: [DNSQuestion: DNSAnswer] = [:]

    /// An SRV name and the transport it carries.
    struct Service: Sendable, Equatable {
        var name: String
        var transport: SIPTargetTransport
    }

    /// A host to resolve, the port and the transport its targets get.
    struct Host: Sendable, Equatable {
        var name: String
        var port: Int
        var transport: SIPTargetTransport
    }

    enum Phase: Sendable, Equatable {
        case start
        case naptr
        case srv([Service])
        /// `fallback`: these hosts are the URI's own (no SRV), so an error is the host's.
        case address([Host], fallback: Bool)
        case finished
    }

    public init(
        _ destination: SIPDestination, preferred: SIPTargetTransport = .udp,
        supported: Set<SIPTargetTransport> = [.udp, .tcp, .tls], maxTargets: Int = 16,
        random: @escaping @Sendable (ClosedRange<Int>) -> Int = { Int.random(in: $0) }
    ) {
        self.destination = destination
        self.preferred = preferred
        self.supported = supported
        self.maxTargets = maxTargets
        self.random = random
    }

    /// The host as DNS names it: lower case, no trailing dot.
    private var host: String { DNSQuestion(destination.host, .a).name }

    /// The first step.
    public mutating func start() -> Step {
        let d = destination
        // A sips: URI wants TLS whatever transport= says (RFC 3261 §26.2.2).
        let explicit: SIPTargetTransport? = d.secure ? .tls : d.transport
        if d.isNumeric {
            let t = explicit ?? preferred
            return finish(
                [Host(name: d.host, port: d.port ?? t.defaultPort, transport: t)], addresses: [d.host: [d.host]])
        }
        if let port = d.port {
            return ask(.address([Host(name: host, port: port, transport: explicit ?? preferred)], fallback: true))
        }
        if let t = d.transport {
            // transport= names the SRV service directly (tcp in a sips: URI is TLS).
            let service: SIPTargetTransport = d.secure ? .tls : t
            return ask(.srv([Service(name: "\(service.srvPrefix).\(host)", transport: service)]))
        }
        return ask(.naptr)
    }

    /// One answer to a question of the current step. nil while others of the step are
    /// still out; the next step once all are in.
    public mutating func receive(_ question: DNSQuestion, _ answer: DNSAnswer) -> Step? {
        guard outstanding.remove(question) != nil else { return nil }
        answers[question] = answer
        guard outstanding.isEmpty else { return nil }
        return advance()
    }

    // MARK: Steps

    private mutating func ask(_ next: Phase) -> Step {
        phase = next
        answers = [:]
        var questions: [DNSQuestion] = []
        switch next {
        case .naptr:
            questions = [DNSQuestion(host, .naptr)]
        case .srv(let services):
            questions = services.map { DNSQuestion($0.name, .srv) }
        case .address(let hosts, _):
            for h in hosts where !SIPDestination.isNumeric(h.name) {
                questions += [DNSQuestion(h.name, .a), DNSQuestion(h.name, .aaaa)]
            }
        case .start, .finished:
            break
        }
        var seen = Set<DNSQuestion>()
        questions = questions.filter { seen.insert($0).inserted }
        outstanding = seen
        if questions.isEmpty { return advance() }
        return .lookup(questions)
    }

    private mutating func advance() -> Step {
        switch phase {
        case .naptr:
            return afterNAPTR(answers[DNSQuestion(host, .naptr)] ?? .failure(.noData))
        case .srv(let services):
            return afterSRV(services)
        case .address(let hosts, let fallback):
            return afterAddresses(hosts, fallback: fallback)
        case .start, .finished:
            return .failed(.noAddress(host))
        }
    }

    private mutating func afterNAPTR(_ answer: DNSAnswer) -> Step {
        switch answer {
        case .failure(.noSuchName):
            return fail(.noSuchDomain(host))
        case .failure(let f) where f.isNoAnswer:
            return fail(.lookupFailed(host, f))
        case .failure:
            // No NAPTR (or a server that mishandles the type): SRV for what we support.
            return ask(.srv(srvFallbackServices))
        case .success(let records):
            let wanted: [SIPTargetTransport] = destination.secure ? [.tls] : [.udp, .tcp, .tls]
            var seen = Set<String>()
            let services: [Service] = records.naptr
                .filter { $0.flags.lowercased() == "s" && !$0.replacement.isEmpty }
                .sorted { ($0.order, $0.preference) < ($1.order, $1.preference) }
                .compactMap { r in
                    guard let t = wanted.first(where: { $0.naptrService.caseInsensitiveCompare(r.service) }) else {
                        return nil
                    }
                    guard seen.insert(r.replacement + "|" + t.rawValue).inserted else { return nil }
                    return Service(name: r.replacement, transport: t)
                }
            // NAPTR records for nothing we know of: as if there were none (RFC 3263 §4.1).
            return ask(.srv(services.isEmpty ? srvFallbackServices : services))
        }
    }

    /// SRV names when NAPTR chose none: `_sips._tcp` for sips:, else each supported
    /// transport, the preferred one first.
    private var srvFallbackServices: [Service] {
        if destination.secure { return [Service(name: "_sips._tcp.\(host)", transport: .tls)] }
        let order = [preferred] + [SIPTargetTransport.udp, .tcp].filter { $0 != preferred }
        return order.filter { supported.contains($0) }.map { Service(name: "\($0.srvPrefix).\(host)", transport: $0) }
    }

    private mutating func afterSRV(_ services: [Service]) -> Step {
        var hosts: [Host] = []
        var notOffered = false
        var failures: [DNSFailure] = []
        for s in services {
            switch answers[DNSQuestion(s.name, .srv)] {
            case .success(let records)?:
                let srv = records.srv
                if srv.count == 1 && srv[0].target.isEmpty { notOffered = true }
                for r in SRVOrdering.order(srv, random: random) {
                    hosts.append(Host(name: r.target, port: Int(r.port), transport: s.transport))
                }
            case .failure(let f)?:
                failures.append(f)
            case nil:
                break
            }
        }
        if hosts.isEmpty {
            if notOffered { return fail(.serviceNotOffered(host)) }
            if let f = failures.first(where: \.isNoAnswer), failures.allSatisfy(\.isNoAnswer) {
                return fail(.lookupFailed(host, f))
            }
            // No SRV: the host itself, on the default port (RFC 3263 §4.2).
            let t: SIPTargetTransport = destination.secure ? .tls : (destination.transport ?? preferred)
            return usable(ask: [Host(name: host, port: t.defaultPort, transport: t)], fallback: true)
        }
        return usable(ask: hosts, fallback: false)
    }

    /// Drops the hosts whose transport we lack (noting why), then asks for the rest's addresses.
    private mutating func usable(ask hosts: [Host], fallback: Bool) -> Step {
        var keep: [Host] = []
        for h in hosts {
            if supported.contains(h.transport) {
                keep.append(h)
            } else {
                skipped.append(
                    (
                        "\(h.transport.rawValue):\(h.name):\(h.port)",
                        "needs \(h.transport.rawValue.uppercased()), not offered"
                    ))
            }
        }
        guard let first = hosts.first else { return fail(.noAddress(host)) }
        if keep.isEmpty { return fail(.unsupportedTransport(host, first.transport)) }
        return ask(.address(keep, fallback: fallback))
    }

    private mutating func afterAddresses(_ hosts: [Host], fallback: Bool) -> Step {
        var addresses: [String: [String]] = [:]
        var failures: [DNSFailure] = []
        for h in hosts where addresses[h.name] == nil {
            if SIPDestination.isNumeric(h.name) {
                addresses[h.name] = [h.name]
                continue
            }
            var found: [String] = []
            for type in [DNSRecordType.a, .aaaa] {
                switch answers[DNSQuestion(h.name, type)] {
                case .success(let r)?: found += r.addresses
                case .failure(let f)?: failures.append(f)
                case nil: break
                }
            }
            addresses[h.name] = found
        }
        let step = finish(hosts, addresses: addresses)
        guard case .done(let targets) = step, targets.isEmpty else { return step }
        if fallback, failures.contains(.noSuchName), failures.allSatisfy({ $0.isAuthoritativeNegative }) {
            return fail(.noSuchDomain(host))
        }
        if let f = failures.first(where: \.isNoAnswer) ?? failures.first(where: { !$0.isAuthoritativeNegative }) {
            return fail(.lookupFailed(fallback ? host : hosts[0].name, f))
        }
        return fail(.noAddress(host))
    }

    private mutating func finish(_ hosts: [Host], addresses: [String: [String]]) -> Step {
        if let t = hosts.first?.transport, !supported.contains(t), hosts.count == 1 {
            skipped.append(("\(t.rawValue):\(hosts[0].name)", "needs \(t.rawValue.uppercased()), not offered"))
            return fail(.unsupportedTransport(host, t))
        }
        var targets: [SIPTarget] = []
        var seen = Set<SIPTarget>()
        for h in hosts where supported.contains(h.transport) {
            for a in addresses[h.name] ?? [] {
                let t = SIPTarget(transport: h.transport, address: SocketAddress(host: a, port: h.port), name: h.name)
                if targets.count < maxTargets, seen.insert(t).inserted { targets.append(t) }
            }
        }
        phase = .finished
        return .done(targets)
    }

    private mutating func fail(_ error: SIPLocateError) -> Step {
        phase = .finished
        return .failed(error)
    }
}
