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
/// undelivered notifications new ones are dropped and counted.
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
        let rest = configuration.url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        client = try HTTPClient(baseURL: "http://" + rest[..<slash], defaultHeaders: ["Content-Type": "application/json"])
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
        let ok: Bool
        do {
            let r = try client.request(method: "POST", path: path, body: body, timeout: Double(configuration.timeoutSec))
            ok = (200...299).contains(r.status)
        } catch {
            ok = false
        }
        if ok || number >= configuration.retries {
            counts.withLock { c in
                c.pending -= 1
                if ok { c.delivered += 1 } else { c.failed += 1 }
            }
            if !ok { writeToStandardError("irisgw: webhook \(configuration.url) failed after \(number + 1) attempts\n") }
            return
        }
        queue.asyncAfter(deadline: .now() + Double(1 << min(number, 5))) { [self] in attempt(body, number: number + 1) }
    }
}
