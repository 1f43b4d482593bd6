import IrisAPI
import SIP

/// A transfer the app asked for, with us as the transferor (RFC 5589 §6, §7): our REFER, the
/// NOTIFYs of its implicit subscription (RFC 3515), and the fallback when the carrier will not
/// transfer. A plain value: it takes what happened and returns what to do; `GatewaySession`
/// carries it out (GatewaySession+Transfer.swift).
///
/// Its races, as `TransferMachineTests` checks them:
///
/// | what happens                                   | what it does                                      |
/// |------------------------------------------------|---------------------------------------------------|
/// | 202, NOTIFY 100, 180, 200                      | trying, ringing, succeeded; the session ends      |
/// | a NOTIFY before the 202                        | taken as acceptance; the 202 then changes nothing |
/// | the same 180 twice                             | one `ringing`                                     |
/// | 405, 501, 603 (any 3xx-6xx) to the REFER       | failed with that code, then the fallback          |
/// | 491 to the REFER (a request of ours crossing)  | the REFER again after a pause, once               |
/// | a final NOTIFY 4xx-6xx                         | failed with that code, then the fallback          |
/// | `terminated` before a final status             | failed (487), then the fallback                   |
/// | no NOTIFY in time                              | failed (408), then the fallback                   |
/// | the carrier's BYE after the 202, before a final| succeeded: the carrier left as a transferee does  |
/// | the carrier's BYE before the 202               | failed (the call is over; it ends `completed`)    |
/// | a NOTIFY once the transfer is over             | 481 (its subscription is gone)                    |
/// | the carrier's re-INVITE meanwhile (hold)       | nothing: a re-INVITE is not a transfer's business |
/// | fallback bridge: the target answers            | succeeded by `bridge`; the legs are joined        |
/// | fallback bridge: the target fails              | failed with its code; the call is as before       |
/// | the call ends while the bridge's dial rings    | the dial is cancelled                             |
/// | the app closes the call meanwhile              | failed; a bridge's dial is cancelled              |
public struct TransferMachine: Sendable, Equatable {
    /// Blind (a number) or attended (the other session's dialog, by room id).
    public enum Kind: Sendable, Equatable {
        case blind(targetTN: String)
        case attended(replacesRoomId: String)
    }

    public enum Phase: Sendable, Equatable {
        /// Our REFER is out, no answer yet.
        case referring
        /// The carrier accepted (202, or a NOTIFY came first).
        case accepted
        /// The carrier would not; the gateway is dialling the target (or joining the legs).
        case bridging
        case succeeded
        case failed
    }

    public enum Input: Sendable, Equatable {
        case start
        /// The final response to our REFER.
        case referResponse(SIPDetails)
        /// A NOTIFY of our REFER's subscription: its sipfrag, and whether it ended the subscription.
        case notify(SIPFrag, terminated: Bool)
        /// The NOTIFY bound ran out (`notifyTimeoutSec` or `completeTimeoutSec`).
        case notifyTimeout
        /// The pause after a 491 is over.
        case retryDue
        /// The carrier ended the call (BYE).
        case callEnded
        /// The session is ending on our side (the app closed it, a timeout).
        case sessionEnding
        /// Fallback: the gateway's own call to the target rang, answered or failed.
        case bridgeRinging
        case bridgeAnswered
        case bridgeFailed(SIPDetails?)
    }

    public enum Action: Sendable, Equatable {
        case sendRefer
        /// Tell the app (`onSessionTransfer`).
        case report(TransferState, SIPDetails?, message: String?)
        /// The answer to the NOTIFY just fed in.
        case answerNotify(Int)
        /// Arm (replacing) the NOTIFY bound, in seconds.
        case armTimer(Double)
        case cancelTimer
        /// The REFER again after this many seconds (`.retryDue`).
        case scheduleRetry(Double)
        /// Done by the carrier: hang up our leg; the session ends `transferred`.
        case complete
        /// Dial the target ourselves (blind), or join the two sessions' legs (attended).
        case startBridge
        /// The gateway's call to the target answered: join the legs; the app leaves.
        case joinBridge
        /// The call ended while the bridge was being set up: drop the bridge's call.
        case abandonBridge
    }

    public let kind: Kind
    public let fallback: TrunkProfile.Transfer.Fallback
    /// Seconds for the first NOTIFY (and between NOTIFYs) and for the final one.
    public let notifyTimeout: Double
    public let completeTimeout: Double
    public private(set) var phase: Phase = .referring
    /// How the transfer is being done now: `refer`, then `bridge` after a fallback.
    public private(set) var method = "refer"
    private var retried = false
    private var reported: TransferState?
    /// When the REFER went (for the complete bound).
    private var startedAt = 0.0

    public init(kind: Kind, fallback: TrunkProfile.Transfer.Fallback, notifyTimeout: Double, completeTimeout: Double) {
        self.kind = kind
        self.fallback = fallback
        self.notifyTimeout = notifyTimeout
        self.completeTimeout = completeTimeout
    }

    /// True once it succeeded or failed for good.
    public var isOver: Bool { phase == .succeeded || phase == .failed }

    public mutating func handle(_ input: Input, now: Double) -> [Action] {
        switch input {
        case .start:
            startedAt = now
            // The REFER last: a failure to send comes back as an input of its own.
            return [report(.requested, nil), .armTimer(notifyTimeout), .sendRefer]

        case .retryDue:
            guard phase == .referring else { return [] }
            return [.armTimer(notifyTimeout), .sendRefer]

        case .referResponse(let details):
            guard phase == .referring else { return [] }
            switch details.code {
            case 200...299:
                phase = .accepted
                return [.armTimer(notifyTimeout)]
            case 491 where !retried:
                retried = true
                return [.cancelTimer, .scheduleRetry(1)]
            default:
                return refused(details, message: "the carrier refused the transfer")
            }

        case let .notify(frag, terminated):
            guard phase == .referring || phase == .accepted else { return [.answerNotify(481)] }
            phase = .accepted
            let details = SIPDetails(code: frag.status, reason: frag.reason)
            var actions: [Action] = [.answerNotify(200)]
            switch frag.status {
            case 100...179:
                actions.append(contentsOf: progress(.trying, details))
            case 180...199:
                actions.append(contentsOf: progress(.ringing, details))
            case 200...299:
                phase = .succeeded
                return actions + [.cancelTimer, report(.succeeded, details), .complete]
            default:
                return actions
                    + refused(details, message: "the transfer target did not take the call")
            }
            if terminated {
                return actions
                    + refused(
                        SIPDetails(code: 487, reason: "Subscription Terminated"),
                        message: "the carrier ended the transfer's subscription before a final status")
            }
            let left = completeTimeout - (now - startedAt)
            return actions + [.armTimer(max(0.1, min(notifyTimeout, left)))]

        case .notifyTimeout:
            switch phase {
            case .referring, .accepted:
                return refused(
                    SIPDetails(code: 408, reason: "Request Timeout"),
                    message: phase == .referring ? "no answer to the REFER" : "no NOTIFY from the carrier in time")
            default:
                return []
            }

        case .callEnded:
            switch phase {
            case .accepted:
                // A transferee that carried out the transfer leaves the call; some carriers
                // do so before (or instead of) the final NOTIFY.
                phase = .succeeded
                return [.cancelTimer, report(.succeeded, nil, message: "the carrier ended the call after accepting")]
            case .referring:
                phase = .failed
                return [.cancelTimer, report(.failed, nil, message: "the call ended before the carrier answered")]
            case .bridging:
                phase = .failed
                return [.cancelTimer, .abandonBridge, report(.failed, nil, message: "the call ended during the bridge")]
            case .succeeded, .failed:
                return []
            }

        case .sessionEnding:
            guard !isOver else { return [] }
            let bridging = phase == .bridging
            phase = .failed
            return [.cancelTimer] + (bridging ? [.abandonBridge] : [])
                + [report(.failed, nil, message: "the call ended before the transfer completed")]

        case .bridgeRinging:
            guard phase == .bridging else { return [] }
            return progress(.ringing, nil)

        case .bridgeAnswered:
            guard phase == .bridging else { return [] }
            phase = .succeeded
            return [.cancelTimer, .joinBridge, report(.succeeded, nil)]

        case .bridgeFailed(let details):
            guard phase == .bridging else { return [] }
            phase = .failed
            return [.cancelTimer, report(.failed, details, message: "the gateway's call to the target failed")]
        }
    }

    /// The carrier would not (or could not): the fallback decides.
    private mutating func refused(_ details: SIPDetails, message: String) -> [Action] {
        switch fallback {
        case .fail:
            phase = .failed
            return [.cancelTimer, report(.failed, details, message: message)]
        case .bridge:
            phase = .bridging
            method = "bridge"
            reported = nil
            return [
                .cancelTimer, report(.trying, details, message: message + "; the gateway bridges the call itself"),
                .startBridge
            ]
        }
    }

    /// A progress state, once each.
    private mutating func progress(_ state: TransferState, _ details: SIPDetails?) -> [Action] {
        guard reported != state else { return [] }
        if state == .trying, reported == .ringing { return [] }
        return [report(state, details)]
    }

    private mutating func report(_ state: TransferState, _ details: SIPDetails?, message: String? = nil) -> Action {
        reported = state
        return .report(state, details, message: message)
    }
}
