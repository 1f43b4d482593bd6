/// The non-INVITE client transaction (RFC 3261 §17.1.2) as a plain value.
///
/// ```
///                    |Request from TU, request sent
///  Timer E fires:    V            Timer F fires or transport error: -> TU
///  reset E, resend +-----------+
///  +---------------|  Trying   |--------------------+
///  +-------------->+-----------+                    |
///        200-699 to TU |     | 1xx to TU            |
///                      |     V                      |
///                      | +-----------+ Timer E: reset at T2, resend
///                      | |Proceeding |------------->+
///                      | +-----------+ 1xx to TU    |
///                      | 200-699 to TU              |
///                      V  V                         |
///                  +-----------+  responses absorbed|
///                  | Completed |                    |
///                  +-----------+                    |
///                        | Timer K                  |
///                        V <------------------------+
///                    Terminated
/// ```
struct NonInviteClientTransaction: Equatable {
    enum State: Equatable { case trying, proceeding, completed, terminated }
    typealias Event = ClientTransactionInput
    typealias Action = ClientTransactionAction

    private(set) var state = State.trying
    let reliable: Bool
    let timers: TransactionTimers
    private var timerE: Double

    init(reliable: Bool, timers: TransactionTimers) {
        self.reliable = reliable
        self.timers = timers
        timerE = timers.t1
    }

    mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.trying, .start):
            var actions: [Action] = [.sendRequest]
            if !reliable { actions.append(.schedule(.e, after: timerE)) }
            return actions + [.schedule(.f, after: timers.timeout)]
        case (.trying, .timer(.e)):
            timerE = min(2 * timerE, timers.t2)
            return [.sendRequest, .schedule(.e, after: timerE)]
        case (.proceeding, .timer(.e)):
            timerE = timers.t2
            return [.sendRequest, .schedule(.e, after: timerE)]
        case (.trying, .timer(.f)), (.proceeding, .timer(.f)):
            return end([.cancel(.e), .timeout])
        case (.trying, .transportError), (.proceeding, .transportError):
            return end([.cancel(.e), .cancel(.f), .transportError])
        case (.trying, .response(let status)), (.proceeding, .response(let status)):
            if status < 200 {
                state = .proceeding
                return [.passResponse(retransmission: false)]
            }
            state = .completed
            return [
                .cancel(.e), .cancel(.f), .passResponse(retransmission: false),
                .schedule(.k, after: timers.lingerT4(reliable: reliable))
            ]
        case (.completed, .timer(.k)):
            return end([])
        case (.completed, .transportError):
            return end([.cancel(.k)])
        default:
            return []
        }
    }

    private mutating func end(_ actions: [Action]) -> [Action] {
        state = .terminated
        return actions + [.terminated]
    }
}
