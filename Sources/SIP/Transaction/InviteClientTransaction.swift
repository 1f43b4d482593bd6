/// The INVITE client transaction (RFC 3261 §17.1.1, with RFC 6026's Accepted state) as a
/// plain value: events in, actions out, no socket and no clock. The driver sends, runs the
/// timers it is asked to and tells the transaction user.
///
/// ```
///                     |INVITE from TU   Timer A fires: reset A, INVITE sent
///   Timer B fires     V                 INVITE sent
///   -> TU timeout +-----------+
///        +--------|  Calling  |--------+ 2xx: 2xx to TU
///        |        +-----------+        |
///        |   1xx to TU |               |
///        |             V               |
///        |        +-----------+        |     +-----------+ 2xx: 2xx to TU
///        |        |Proceeding |--------+---->| Accepted  |---+
///        |        +-----------+   2xx        +-----------+<--+
///        | 300-699: ACK sent, resp. to TU          | Timer M
///        |             V                           |
///        |        +-----------+ 300-699: ACK sent  |
///        |        | Completed |<--+                |
///        |        +-----------+---+                |
///        |             | Timer D                   |
///        +-----------> V <-------------------------+
///                  Terminated
/// ```
struct InviteClientTransaction: Equatable {
    enum State: Equatable { case calling, proceeding, accepted, completed, terminated }
    typealias Event = ClientTransactionInput
    typealias Action = ClientTransactionAction

    private(set) var state = State.calling
    let reliable: Bool
    let timers: TransactionTimers
    private var timerA: Double

    init(reliable: Bool, timers: TransactionTimers) {
        self.reliable = reliable
        self.timers = timers
        timerA = timers.t1
    }

    mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.calling, .start):
            var actions: [Action] = [.sendRequest]
            if !reliable { actions.append(.schedule(.a, after: timerA)) }
            return actions + [.schedule(.b, after: timers.timeout)]
        case (.calling, .timer(.a)):
            timerA *= 2
            return [.sendRequest, .schedule(.a, after: timerA)]
        case (.calling, .timer(.b)):
            return end([.timeout])
        case (.calling, .response(let status)), (.proceeding, .response(let status)):
            switch status {
            case 100..<200:
                let stop: [Action] = state == .calling ? [.cancel(.a), .cancel(.b)] : []
                state = .proceeding
                return stop + [.passResponse(retransmission: false)]
            case 200..<300:
                state = .accepted
                return [
                    .cancel(.a), .cancel(.b), .passResponse(retransmission: false), .schedule(.m, after: timers.timeout)
                ]
            default:
                state = .completed
                return [
                    .cancel(.a), .cancel(.b), .sendACK, .passResponse(retransmission: false),
                    .schedule(.d, after: timers.timerD(reliable: reliable))
                ]
            }
        case (.calling, .transportError), (.proceeding, .transportError):
            return end([.cancel(.a), .cancel(.b), .transportError])
        case (.accepted, .response(let status)) where (200..<300).contains(status):
            return [.passResponse(retransmission: true)]
        case (.accepted, .timer(.m)), (.completed, .timer(.d)):
            return end([])
        case (.completed, .response(let status)) where status >= 300:
            return [.sendACK]
        case (.accepted, .transportError), (.completed, .transportError):
            // Nothing is owed to the TU any more; the transaction just ends.
            return end([.cancel(.m), .cancel(.d)])
        default:
            // Stale timers, responses that do not fit the state (a 1xx after the final, a
            // non-2xx after a 2xx): absorbed.
            return []
        }
    }

    private mutating func end(_ actions: [Action]) -> [Action] {
        state = .terminated
        return actions + [.terminated]
    }
}
