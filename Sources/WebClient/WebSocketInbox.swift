import Dispatch
import IOCore
import Synchronization

/// The caller's side of a `WebSocketClient`: messages the loop has read, waiting for
/// `receive`, and how the WebSocket ended. The loop posts; callers wait on their own thread
/// (a semaphore that says "something changed"; the state is always checked under the lock
/// before waiting, so no post is missed and a spare wake-up only costs a look). With a
/// `handler` (`WebSocketClient.connect`) nothing waits: messages and the end go to it on the
/// loop instead.
final class WebSocketInbox: Sendable {
    private struct State {
        var messages: [WebSocketMessage] = []
        var ended = false
        /// Why it ended, for the first receiver to see it; later ones get nil.
        var failure: IrisTransportError?
        var serverClose: WebSocketCloseFrame?
        /// Nothing more may be sent: our close frame went out or the connection ended.
        var sendClosed = false
    }

    private let state = Mutex(State())
    private let changed = DispatchSemaphore(value: 0)
    /// `close()` was called: receivers return nil from now on.
    let closeRequested = Atomic<Bool>(false)
    /// Where messages and the end go instead of the queue (called on the loop).
    private let handler: (@Sendable (WebSocketEvent) -> Void)?

    /// The upgrade succeeded: the end goes to the handler from now on (a failed opening is
    /// reported by `connect`'s completion alone).
    private let armed = Atomic<Bool>(false)

    init(handler: (@Sendable (WebSocketEvent) -> Void)? = nil) { self.handler = handler }

    /// The WebSocket is open (from the loop).
    func arm() { armed.store(true, ordering: .releasing) }

    var serverClose: WebSocketCloseFrame? { state.withLock { $0.serverClose } }
    var sendClosed: Bool { state.withLock { $0.sendClosed } }

    /// A whole message read (from the loop).
    func post(_ message: WebSocketMessage) {
        if let handler { return handler(.message(message)) }
        state.withLock { $0.messages.append(message) }
        changed.signal()
    }

    /// The server's close frame (from the loop).
    func noteServerClose(_ frame: WebSocketCloseFrame) { state.withLock { $0.serverClose = frame } }

    /// Nothing more may be sent (from the loop, before the end is posted).
    func closeSending() { state.withLock { $0.sendClosed = true } }

    /// The WebSocket ended: cleanly (nil) or for `failure` (from the loop).
    func end(_ failure: IrisTransportError?) {
        let first = state.withLock { s -> Bool in
            guard !s.ended else { return false }
            s.ended = true
            s.sendClosed = true
            s.failure = failure
            return true
        }
        if first, let handler, armed.load(ordering: .acquiring) {
            handler(failure.map { .failed($0) } ?? .closed(serverClose))
        }
        changed.signal()
    }

    /// Wakes the receivers (`close()` on the caller's side).
    func wake() { changed.signal() }

    /// The next message, nil once ended cleanly or closed by us; throws the failure once,
    /// or `.timeout` when nothing came within `timeout` seconds (nothing is lost).
    func next(timeout: Double) throws(IrisTransportError) -> WebSocketMessage? {
        let deadline = EventLoop.now() + (timeout.isNaN ? 0 : timeout)
        while true {
            if closeRequested.load(ordering: .acquiring) {
                changed.signal()  // the next receiver wakes too
                return nil
            }
            let taken = state.withLock { s -> Result<WebSocketMessage?, IrisTransportError>? in
                if !s.messages.isEmpty { return .success(s.messages.removeFirst()) }
                guard s.ended else { return nil }
                defer { s.failure = nil }
                return s.failure.map { .failure($0) } ?? .success(nil)
            }
            switch taken {
            case .success(let message?)?:
                return message
            case .success(nil)?:
                changed.signal()  // ended: the next receiver wakes too
                return nil
            case .failure(let error)?:
                changed.signal()
                throw error
            case nil:
                break
            }
            let left = deadline - EventLoop.now()
            guard left > 0 else { throw .timeout(operation: "waiting for a WebSocket message", seconds: timeout) }
            _ = changed.wait(timeout: .now() + left)
        }
    }
}
