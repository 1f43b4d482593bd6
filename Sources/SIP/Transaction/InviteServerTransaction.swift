/// The INVITE server transaction (RFC 3261 §17.2.1, with RFC 6026's Accepted state) as a
/// plain value.
///
/// ```
///                        |INVITE: pass to TU
///   INVITE: resend 1xx   V      1xx from TU: send
///                   +-----------+
///                   |Proceeding |--------------+ 2xx from TU: send
///                   +-----------+              V
///    300-699 from TU: send |            +-----------+ INVITE: resend the 2xx
///                          V            | Accepted  | ACK: pass to TU
///   INVITE: resend   +-----------+      +-----------+ 2xx from TU: send
///   Timer G: resend  | Completed |            | Timer L
///                    +-----------+            |
///            ACK |         | Timer H          |
///                V         |                  |
///          +-----------+   |                  |
///          | Confirmed |   |                  |
///          +-----------+   |                  |
///                | Timer I |                  |
///                V         V                  |
///                  Terminated <---------------+
/// ```
/// RFC 6026 §7.1: without Accepted, an INVITE retransmitted after the 2xx would look new
/// and the ACK for the 2xx would match nothing.
struct InviteServerTransaction: Equatable {
    enum State: Equatable { case proceeding, completed, confirmed, accepted, terminated }
    enum Event: Equatable {
        /// The INVITE came again.
        case retransmission
        case ack
        /// The TU sends a response with this status.
        case respond(status: Int)
        case timer(TransactionTimer)
        case transportError
    }
    enum Action: Equatable {
        /// Send the response the TU just gave.
        case sendResponse
        /// Send the last response sent again (a retransmission).
        case resendLastResponse
        /// An ACK for our 2xx: the TU's (RFC 6026 §7.1).
        case passACK
        case schedule(TransactionTimer, after: Double)
        case cancel(TransactionTimer)
        case terminated
    }

    private(set) var state = State.proceeding
    /// Whether a provisional response was sent (something to resend in Proceeding).
    private(set) var sentProvisional = false
    let reliable: Bool
    let timers: TransactionTimers
    private var timerG: Double

    init(reliable: Bool, timers: TransactionTimers) {
        self.reliable = reliable
        self.timers = timers
        timerG = timers.t1
    }

    mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.proceeding, .retransmission):
            return sentProvisional ? [.resendLastResponse] : []
        case (.proceeding, .respond(let status)):
            switch status {
            case 100..<200:
                sentProvisional = true
                return [.sendResponse]
            case 200..<300:
                state = .accepted
                return [.sendResponse, .schedule(.l, after: timers.timeout)]
            default:
                state = .completed
                var actions: [Action] = [.sendResponse]
                if !reliable { actions.append(.schedule(.g, after: timerG)) }
                return actions + [.schedule(.h, after: timers.timeout)]
            }
        case (.completed, .retransmission):
            return [.resendLastResponse]
        case (.completed, .timer(.g)):
            timerG = min(2 * timerG, timers.t2)
            return [.resendLastResponse, .schedule(.g, after: timerG)]
        case (.completed, .ack):
            state = .confirmed
            return [.cancel(.g), .cancel(.h), .schedule(.i, after: timers.lingerT4(reliable: reliable))]
        case (.completed, .timer(.h)):
            return end([.cancel(.g)])
        case (.confirmed, .timer(.i)), (.accepted, .timer(.l)):
            return end([])
        case (.accepted, .retransmission):
            // RFC 6026 keeps the INVITE from the TU, and so do we; but a peer that repeats
            // its INVITE has not seen our 2xx, so the same 2xx goes back at once (as pjsip
            // does), not only at the TU's next retransmission.
            return [.resendLastResponse]
        case (.accepted, .ack):
            return [.passACK]
        case (.accepted, .respond(let status)) where (200..<300).contains(status):
            // The TU retransmits its 2xx until the ACK (§13.3.1.4).
            return [.sendResponse]
        case (.proceeding, .transportError):
            return end([])
        case (.completed, .transportError):
            return end([.cancel(.g), .cancel(.h)])
        default:
            // Confirmed absorbs ACKs; stale timers.
            return []
        }
    }

    private mutating func end(_ actions: [Action]) -> [Action] {
        state = .terminated
        return actions + [.terminated]
    }
}
