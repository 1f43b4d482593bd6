import DNS
import IOCore

/// The one event loop every client connection runs on (`HTTPClient`, `WebSocketClient`, the
/// webhook): a thread of its own, started on first use, never the SIP or media loops. Names
/// are resolved there with the DNS module, one resolver per DNS configuration in use.
/// Callers off the loop hand it work with `execute` and wait on their own side.
final class ClientLoop: Sendable {
    /// Made and started on first use (a `static let` is initialised once, thread-safely).
    static let shared = ClientLoop()

    let loop: EventLoop
    /// Resolvers by configuration (a handful at most: the default and a test's or the gateway's).
    private let resolvers: LoopBoundBox<[(DNSResolverConfiguration, DNSResolver)]>

    private init() {
        do {
            loop = try EventLoop()
        } catch {
            fatalError("irisgw: cannot create the client event loop: \(error)")
        }
        // Bound before the loop's thread runs: this thread owns its state until `start`.
        resolvers = LoopBoundBox([], loop: loop)
        loop.start(name: "irisgw-client")
    }

    /// The resolver for `configuration`, opened on first use. On the loop.
    func resolver(_ configuration: DNSResolverConfiguration) -> DNSResolver {
        if let found = resolvers.value.first(where: { $0.0 == configuration }) { return found.1 }
        let made = DNSResolver(loop: loop, configuration: configuration)
        resolvers.value.append((configuration, made))
        return made
    }

    /// The addresses to try for `host`, in order: a numeric host as it is, `localhost` as
    /// 127.0.0.1 then ::1, a name its A then its AAAA records (asked at once, through
    /// `dns`). `completion` runs on the loop, possibly before this returns. On the loop.
    func addresses(
        of host: String, port: Int, dns: DNSResolverConfiguration,
        _ completion: @escaping (Result<[SocketAddress], IrisTransportError>) -> Void
    ) {
        if SocketAddress.isNumericHost(host) { return completion(.success([SocketAddress(host: host, port: port)])) }
        if host == "localhost" {
            return completion(.success(["127.0.0.1", "::1"].map { SocketAddress(host: $0, port: port) }))
        }
        let resolver = resolver(dns)
        var answers: [DNSRecordType: DNSAnswer] = [:]
        let answered = { (type: DNSRecordType, answer: DNSAnswer) in
            answers[type] = answer
            guard let a = answers[.a], let aaaa = answers[.aaaa] else { return }
            let found = ((try? a.get().addresses) ?? []) + ((try? aaaa.get().addresses) ?? [])
            guard !found.isEmpty else {
                // The A answer says why (a host without IPv6 would otherwise hide it).
                let why: String = if case .failure(let f) = a { f.description } else { "no address" }
                return completion(
                    .failure(.connectFailed(host: host, port: port, reason: "cannot resolve the name: \(why)")))
            }
            completion(.success(found.map { SocketAddress(host: $0, port: port) }))
        }
        for type in [DNSRecordType.a, .aaaa] {
            if let now = resolver.lookup(DNSQuestion(host, type), completion: { answered(type, $0) }) {
                answered(type, now)
            }
        }
    }
}

extension EventLoop {
    /// Traps in debug builds on this loop's thread: for the client's waiting calls, which
    /// would wait for the loop they block.
    func assertNotHere(file: StaticString = #fileID, line: UInt = #line) {
        assert(!isInLoop, "a waiting client call on the client loop: use the completion form", file: file, line: line)
    }
}
