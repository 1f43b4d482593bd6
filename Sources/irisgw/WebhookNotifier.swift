import DNS
import Foundation
import Gateway
import IOCore
import IrisAPI
import Logging
import Synchronization
import WebClient

/// POSTs inbound notifications (`onNotification` events, as JSON) to the configured URL,
/// with a timeout per attempt and retries with doubling delays. It never delays the call:
/// `post` only admits, and deliveries run on the shared client event loop, up to
/// `maxInFlight` at once (more wait their turn, in order), so one slow name or receiver
/// holds up only its own delivery. Beyond `maxPending` undelivered notifications new ones
/// are dropped and counted. An `https://` URL is delivered over TLS: the receiver's
/// certificate checked against `caFile` (or the system store) and its name against the URL's
/// host; a receiver that fails the check gets nothing, and the failure is logged with its
/// reason and retried like any other. A host name is resolved with the gateway's DNS
/// settings (`dnsServers`, default the system's).
public final class WebhookNotifier: Sendable {
    public let configuration: ServeConfiguration.Webhook
    private let client: HTTPClient
    private let path: String
    private let state = Mutex(State())
    /// Notifications waiting or being retried, at most. Default 1000.
    public let maxPending: Int
    /// Deliveries under way at once, at most (an attempt from its connect to its answer or
    /// timeout); the others wait for a free one. Default 16.
    public let maxInFlight: Int

    private struct State {
        var pending = 0, delivered = 0, failed = 0, dropped = 0
        var inFlight = 0
        /// Admitted (or due for a retry) while `maxInFlight` were under way, oldest first.
        var waiting: [Delivery] = []
    }

    private struct Delivery {
        var body: [UInt8]
        /// 0 for the first attempt.
        var number: Int
    }

    public init(
        configuration: ServeConfiguration.Webhook, maxPending: Int = 1000, maxInFlight: Int = 16,
        dns: DNSResolverConfiguration = DNSResolverConfiguration()
    ) throws(IrisTransportError) {
        self.configuration = configuration
        self.maxPending = maxPending
        self.maxInFlight = max(1, maxInFlight)
        // Split the URL into the client's base (scheme, host, port) and the request path.
        let url = configuration.url
        let schemeEnd = url.range(of: "://")?.upperBound ?? url.startIndex
        let rest = url[schemeEnd...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        client = try HTTPClient(
            baseURL: String(url[..<slash]), defaultHeaders: ["Content-Type": "application/json"],
            caFile: configuration.caFile, dns: dns)
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
    }

    /// Delivered, failed after every retry, dropped for lack of room.
    public var statistics: (delivered: Int, failed: Int, dropped: Int) {
        state.withLock { ($0.delivered, $0.failed, $0.dropped) }
    }

    /// Deliveries under way now, and waiting for a free place.
    public var inFlight: (running: Int, waiting: Int) { state.withLock { ($0.inFlight, $0.waiting.count) } }

    /// Admits `event` for delivery; returns at once.
    public func post(_ event: SessionEvent) {
        let admitted = state.withLock { s -> Bool in
            guard s.pending < maxPending else {
                s.dropped += 1
                return false
            }
            s.pending += 1
            return true
        }
        guard admitted else { return }
        guard let body = try? JSONEncoder().encode(event) else {
            state.withLock { $0.pending -= 1 }
            return
        }
        start(Delivery(body: Array(body), number: 0))
    }

    /// Runs `delivery` now if fewer than `maxInFlight` are under way, else queues it.
    private func start(_ delivery: Delivery) {
        let now = state.withLock { s -> Bool in
            guard s.inFlight < maxInFlight else {
                s.waiting.append(delivery)
                return false
            }
            s.inFlight += 1
            return true
        }
        if now { attempt(delivery) }
    }

    private func attempt(_ delivery: Delivery) {
        do {
            try client.request(
                method: "POST", path: path, body: delivery.body, timeout: Double(configuration.timeoutSec)
            ) {
                [self] result in
                // Why the attempt failed: a status, or the transport's reason (refused, timed
                // out, "TLS with host:port failed: certificate from an unknown CA").
                let failure: String? =
                    switch result {
                    case .success(let r): (200...299).contains(r.status) ? nil : "HTTP \(r.status)"
                    case .failure(let error): error.description
                    }
                finished(delivery, failure)
            }
        } catch {
            // The request cannot be made at all; it is reported on the loop like any failure.
            HTTPClient.loop.execute { [self] in finished(delivery, error.description) }
        }
    }

    /// On the client loop: frees the place (the next waiting delivery takes it), counts the
    /// outcome or schedules the retry.
    private func finished(_ delivery: Delivery, _ failure: String?) {
        let last = failure == nil || delivery.number >= configuration.retries
        let next = state.withLock { s -> Delivery? in
            if last {
                s.pending -= 1
                if failure == nil { s.delivered += 1 } else { s.failed += 1 }
            }
            guard !s.waiting.isEmpty else {
                s.inFlight -= 1
                return nil
            }
            return s.waiting.removeFirst()
        }
        if let next { attempt(next) }
        if last {
            if let failure {
                // Without the query, which may carry the receiver's token.
                let url = configuration.url.prefix { $0 != "?" }
                Logger(.webhook).warning(
                    "webhook \(url) failed after \(delivery.number + 1) attempts: \(failure)",
                    ["url": "\(url)", "attempts": .int(delivery.number + 1)])
            }
            return
        }
        let retry = Delivery(body: delivery.body, number: delivery.number + 1)
        HTTPClient.loop.schedule(after: Double(1 << min(delivery.number, 5))) { [self] in start(retry) }
    }
}
