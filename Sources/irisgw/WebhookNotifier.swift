import Dispatch
import Foundation
import Gateway
import IOCore
import IrisAPI
import Synchronization
import WebClient

/// POSTs inbound notifications (`onNotification` events, as JSON) to the configured URL,
/// with a timeout per attempt and retries with doubling delays. It never delays the call:
/// `post` only enqueues, deliveries run on a queue of their own, and beyond `maxPending`
/// undelivered notifications new ones are dropped and counted. An `https://` URL is
/// delivered over TLS: the receiver's certificate checked against `caFile` (or the system
/// store) and its name against the URL's host; a receiver that fails the check gets nothing,
/// and the failure is logged with its reason and retried like any other.
public final class WebhookNotifier: Sendable {
    public let configuration: ServeConfiguration.Webhook
    private let client: HTTPClient
    private let path: String
    private let queue = DispatchQueue(label: "irisgw-webhook")
    private let counts = Mutex((pending: 0, delivered: 0, failed: 0, dropped: 0))
    /// Notifications waiting or being retried, at most. Default 1000.
    public let maxPending: Int

    public init(configuration: ServeConfiguration.Webhook, maxPending: Int = 1000) throws(IrisTransportError) {
        self.configuration = configuration
        self.maxPending = maxPending
        // Split the URL into the client's base (scheme, host, port) and the request path.
        let url = configuration.url
        let schemeEnd = url.range(of: "://")?.upperBound ?? url.startIndex
        let rest = url[schemeEnd...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        client = try HTTPClient(baseURL: String(url[..<slash]), defaultHeaders: ["Content-Type": "application/json"],
                                caFile: configuration.caFile)
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
    }

    /// Delivered, failed after every retry, dropped for lack of room.
    public var statistics: (delivered: Int, failed: Int, dropped: Int) {
        counts.withLock { ($0.delivered, $0.failed, $0.dropped) }
    }

    /// Queues `event` for delivery; returns at once.
    public func post(_ event: SessionEvent) {
        let admitted = counts.withLock { c -> Bool in
            guard c.pending < maxPending else {
                c.dropped += 1
                return false
            }
            c.pending += 1
            return true
        }
        guard admitted, let body = try? JSONEncoder().encode(event) else { return }
        queue.async { [self] in attempt(Array(body), number: 0) }
    }

    private func attempt(_ body: [UInt8], number: Int) {
        // Why the attempt failed: a status, or the transport's reason (refused, timed out,
        // "TLS with host:port failed: certificate from an unknown CA").
        let failure: String?
        do {
            let r = try client.request(method: "POST", path: path, body: body, timeout: Double(configuration.timeoutSec))
            failure = (200...299).contains(r.status) ? nil : "HTTP \(r.status)"
        } catch {
            failure = error.description
        }
        let ok = failure == nil
        if ok || number >= configuration.retries {
            counts.withLock { c in
                c.pending -= 1
                if ok { c.delivered += 1 } else { c.failed += 1 }
            }
            if let failure {
                writeToStandardError("irisgw: webhook \(configuration.url) failed after \(number + 1) attempts: \(failure)\n")
            }
            return
        }
        queue.asyncAfter(deadline: .now() + Double(1 << min(number, 5))) { [self] in attempt(body, number: number + 1) }
    }
}
