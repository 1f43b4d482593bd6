import Foundation
import Media
import Synchronization

/// What `/healthz` and `/readyz` report.
public enum GatewayHealth: Sendable, Equatable {
    /// Not taking sessions yet: the SIP sockets are not open.
    case starting
    /// Every part answered in time and the gateway takes sessions.
    case ok
    /// SIGTERM: calls in progress go on, new ones are refused; balancers should stop sending.
    case draining
    /// A part did not answer within the bound (named in the text).
    case unhealthy(String)

    /// The text of the JSON `status` field.
    public var status: String {
        switch self {
        case .starting: "starting"
        case .ok: "ok"
        case .draining: "draining"
        case .unhealthy: "unhealthy"
        }
    }
}

extension Gateway {
    /// Asks the SIP loop, every media thread and the record store's writer to run a no-op,
    /// each within `timeout` seconds. Blocks the caller (an API worker) at most about
    /// 3 x `timeout`; never blocks the loops themselves.
    public func health(timeout: Double = 1) -> GatewayHealth {
        let sipAnswered = DispatchSemaphore(value: 0)
        let state = Mutex((started: false, draining: false))
        ua.loop.execute { [self] in
            state.withLock { $0 = (self.started, self.draining) }
            sipAnswered.signal()
        }
        guard sipAnswered.wait(timeout: .now() + timeout) == .success else {
            return .unhealthy("the SIP loop did not answer")
        }
        guard media.responds(within: timeout) else { return .unhealthy("a media thread did not answer") }
        guard records.responds(within: timeout) else { return .unhealthy("the call record store did not answer") }
        let (started, draining) = state.withLock { $0 }
        return !started ? .starting : draining ? .draining : .ok
    }
}
