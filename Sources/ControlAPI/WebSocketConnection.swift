// One server-side WebSocket as the application sees it: a bounded queue of outgoing text
// messages. `send(text:)` only enqueues; the server's event loop takes the messages when the
// socket can take them (HTTPConnection+WebSocketFrames.swift), so a client that does not read never
// blocks a sender or another connection. When the queue overflows, the client is dropped.

import Synchronization

/// A WebSocket opened by a client. `send(text:)` and `close()` may be called from any thread.
public final class WebSocketConnection: Sendable {
    /// Unique per server, in accept order.
    public let id: Int
    /// The upgrade request (path, query, headers; no body).
    public let request: HTTPRequest
    /// The client group the upgrade callback chose (`WebSocketUpgrade.accept(group:)`).
    public let group: String

    /// What the connection asks of the event loop.
    enum Notice: Sendable {
        /// Messages are waiting (sent once per empty-to-non-empty change).
        case pending
        /// `close(code:)`: send what is queued, then a close frame.
        case close
        /// The queue overflowed: cut the connection now.
        case overflow
    }

    private enum Phase: Equatable {
        case open
        /// No more sends; the loop flushes the queue, then sends a close frame with this code.
        case closing(code: UInt16, reason: String)
        /// Dropped, closed by the client, or gone: nothing more goes out.
        case finished
    }

    private struct State {
        var queue: [String] = []
        var head = 0
        var phase = Phase.open
        /// A `.pending` notice is on its way or the loop is still draining the queue.
        var pendingNoticed = false
        var queued: Int { queue.count - head }
    }

    private let queueLimit: Int
    private let state = Mutex(State())
    private let notify: @Sendable (Notice) -> Void

    init(id: Int, request: HTTPRequest, group: String, queueLimit: Int, notify: @escaping @Sendable (Notice) -> Void) {
        self.id = id
        self.request = request
        self.group = group
        self.queueLimit = max(1, queueLimit)
        self.notify = notify
    }

    /// True until the connection is closing, dropped or closed.
    public var isOpen: Bool { state.withLock { $0.phase == .open } }

    /// Queues a text message; never blocks the caller. Returns false (and drops the
    /// connection) when the queue is at the limit, or false when the connection is closed.
    @discardableResult
    public func send(text: String) -> Bool {
        let (accepted, notice) = state.withLock { s -> (Bool, Notice?) in
            guard s.phase == .open else { return (false, nil) }
            guard s.queued < queueLimit else {
                s.phase = .finished
                s.queue = []
                s.head = 0
                return (false, .overflow)
            }
            s.queue.append(text)
            guard !s.pendingNoticed else { return (true, nil) }
            s.pendingNoticed = true
            return (true, .pending)
        }
        if let notice { notify(notice) }
        return accepted
    }

    /// Closes the connection: messages already queued are sent, then a close frame (1000);
    /// the connection ends when the client answers, or after `webSocketCloseGrace` seconds.
    public func close() {
        close(code: 1000)
    }

    // MARK: - The event loop's side

    /// Like `close()` with a specific close code (1001 when the server stops) and reason.
    func close(code: UInt16, reason: String = "") {
        let changed = state.withLock { s -> Bool in
            guard s.phase == .open else { return false }
            s.phase = .closing(code: code, reason: reason)
            return true
        }
        if changed { notify(.close) }
    }

    /// Messages queued and not yet taken by the loop: how far behind the client is.
    var queuedCount: Int { state.withLock { $0.queued } }

    /// Takes queued messages, at least one when any, until about `maxBytes`. `close` is set
    /// once the queue is empty and a close was asked: time for the close frame.
    func take(maxBytes: Int) -> (messages: [String], close: (code: UInt16, reason: String)?) {
        state.withLock { s in
            var taken: [String] = []
            var bytes = 0
            while s.head < s.queue.count, taken.isEmpty || bytes < maxBytes {
                let message = s.queue[s.head]
                s.head += 1
                bytes += message.utf8.count
                taken.append(message)
            }
            if s.head == s.queue.count {
                s.queue.removeAll(keepingCapacity: true)
                s.head = 0
                // The next send notices the loop again.
                s.pendingNoticed = false
            } else if s.head >= 256, s.head >= s.queue.count / 2 {
                s.queue.removeFirst(s.head)
                s.head = 0
            }
            if case .closing(let code, let reason) = s.phase, s.queued == 0 { return (taken, (code, reason)) }
            return (taken, nil)
        }
    }

    /// The client closed, the connection was dropped or cut: nothing more is sent.
    func finish() {
        state.withLock { s in
            s.phase = .finished
            s.queue = []
            s.head = 0
        }
    }
}
