import IOCore

/// Asynchronous DNS on an event loop: c-ares underneath, a TTL cache in front, and one query
/// for any number of concurrent lookups of the same name and type. Loop-confined: create,
/// use and close it on `loop`; completions run there.
///
/// A lookup never blocks the loop: a slow or silent server delays only the lookups waiting
/// for it, bounded by `timeoutMs` and `tries`.
public final class DNSResolver {
    public let loop: EventLoop
    public let configuration: DNSResolverConfiguration
    private var channel: CAresChannel?
    private var startFailure: DNSFailure?
    private var cache: DNSCache
    private var waiting: [DNSQuestion: [(DNSAnswer) -> Void]] = [:]
    /// Counts for `/metrics` and tests.
    public private(set) var statistics = Statistics()

    public struct Statistics: Sendable, Equatable {
        /// Lookups answered from the cache (failures included).
        public var cacheHits = 0
        /// Lookups that joined a query already on its way.
        public var joined = 0
        /// Queries sent to c-ares.
        public var queries = 0
        /// Queries that ended in a failure, by kind (`noSuchName`, `timeout` ...).
        public var failures: [String: Int] = [:]
    }

    /// Opens the c-ares channel. A channel that cannot open (a bad server list) leaves a
    /// resolver whose lookups fail with `.resolverUnavailable`; `startFailure` says why.
    /// On the loop (asserted in debug builds).
    public init(loop: EventLoop, configuration: DNSResolverConfiguration = DNSResolverConfiguration()) {
        self.loop = loop
        self.configuration = configuration
        cache = DNSCache(negativeTTL: configuration.negativeTTL, capacity: configuration.cacheCapacity)
        do throws(DNSFailure) {
            channel = try CAresChannel(loop: loop, configuration: configuration)
        } catch {
            startFailure = error
        }
    }

    /// Why the channel could not open, if it could not.
    public var failure: DNSFailure? { startFailure }

    /// The answer from the cache now, or nil: then `completion` gets it later, on the loop
    /// (never before this returns). On the loop (asserted in debug builds).
    @discardableResult
    public func lookup(_ question: DNSQuestion, completion: @escaping (DNSAnswer) -> Void) -> DNSAnswer? {
        loop.assertInLoop()
        let now = EventLoop.now()
        if let answer = cache.answer(for: question, now: now) {
            statistics.cacheHits += 1
            return answer
        }
        if waiting[question] != nil {
            statistics.joined += 1
            waiting[question]!.append(completion)
            return nil
        }
        if let hosts = hostsFileAnswer(question) {
            cache.store(.success(hosts), for: question, now: now)
            return .success(hosts)
        }
        waiting[question] = [completion]
        guard let channel else {
            let failure = startFailure ?? .resolverUnavailable("closed")
            loop.schedule(after: 0) { [weak self] in self?.answered(question, .failure(failure)) }
            return nil
        }
        statistics.queries += 1
        channel.query(question.name, question.type) { [weak self] answer in self?.answered(question, answer) }
        return nil
    }

    /// The cached answer, without asking anyone. On the loop (asserted in debug builds).
    public func cached(_ question: DNSQuestion) -> DNSAnswer? {
        loop.assertInLoop()
        return cache.answer(for: question, now: EventLoop.now())
    }

    /// Lookups in flight now.
    public var pending: Int { waiting.count }

    /// Cancels what is in flight (their completions get `.resolverUnavailable`) and closes
    /// c-ares's sockets. On the loop (asserted in debug builds).
    public func close() {
        loop.assertInLoop()
        channel?.close()
        channel = nil
    }

    private func answered(_ question: DNSQuestion, _ answer: DNSAnswer) {
        if case .failure(let f) = answer { statistics.failures[Self.kind(f), default: 0] += 1 }
        cache.store(answer, for: question, now: EventLoop.now())
        for completion in waiting.removeValue(forKey: question) ?? [] { completion(answer) }
    }

    /// /etc/hosts before DNS for addresses, as the system resolver does.
    private func hostsFileAnswer(_ question: DNSQuestion) -> DNSRecords? {
        guard question.type == .a || question.type == .aaaa, let channel else { return nil }
        let found = channel.hostsFile(question.name, question.type)
        guard !found.isEmpty else { return nil }
        let ttl = UInt32(max(0, min(configuration.hostsFileTTL, 86_400)))
        return DNSRecords(found.map { question.type == .a ? .a($0) : .aaaa($0) }, ttl: ttl)
    }

    static func kind(_ f: DNSFailure) -> String {
        switch f {
        case .noSuchName: "nxdomain"
        case .noData: "nodata"
        case .serverFailure: "servfail"
        case .timeout: "timeout"
        case .unreachable: "unreachable"
        case .badName: "badname"
        case .malformedAnswer: "malformed"
        case .resolverUnavailable: "unavailable"
        }
    }
}
