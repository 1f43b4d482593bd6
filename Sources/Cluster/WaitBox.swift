import Dispatch
import Synchronization

/// One value handed from a loop to a thread that waits for it, with a bound on the wait.
final class WaitBox<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    /// The first value counts; later ones are dropped.
    func put(_ v: T) {
        let first = value.withLock { slot -> Bool in
            if slot != nil { return false }
            slot = v
            return true
        }
        if first { ready.signal() }
    }

    func take(within seconds: Double) -> T? {
        guard ready.wait(timeout: .now() + seconds) == .success else { return nil }
        return value.withLock { $0 }
    }
}
