import IrisAPI
import SIP

/// A REFER the carrier (or a PBX behind the trunk) sent in a session's dialog, with us as the
/// transferee (RFC 3515, RFC 5589 §6): the trunk's policy (`transfer.refer`), the app's answer,
/// the gateway's call to the target and the NOTIFYs that report it. A plain value; the session
/// carries out its actions (GatewaySession+Referred.swift).
///
/// | what happens                                      | what it does                                   |
/// |---------------------------------------------------|------------------------------------------------|
/// | REFER under `reject`                              | 603                                            |
/// | REFER to a number the trunk may not dial          | 403, under every policy                        |
/// | REFER while a transfer is under way               | 491                                            |
/// | REFER under `app`                                 | 202, NOTIFY 100, `onSessionTransferRequest`    |
/// | the app accepts / `dial`                          | the gateway dials; NOTIFY 180 on ringing        |
/// | the app declines, or does not answer in time      | NOTIFY 603 (terminated); the call goes on      |
/// | the target answers                                | NOTIFY 200; the app's leg moves to the new call |
/// | the target fails                                  | NOTIFY with its status; the call goes on       |
/// | the referrer hangs up while the target rings      | the dial goes on; the session waits for it     |
/// | ... and the target then fails                     | the session ends                               |
/// | the session ends meanwhile (the app closes it)    | NOTIFY 487, the call to the target cancelled   |
/// | the referrer hangs up before the app answered     | failed; the session ends with the call         |
public struct ReferredTransferMachine: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        case askingApp, dialing, succeeded, failed
    }

    public enum Input: Sendable, Equatable {
        case appAnswered(accept: Bool)
        case answerTimeout
        case dialRinging
        case dialAnswered
        case dialFailed(SIPDetails?)
        /// The referrer's call ended (its BYE).
        case callEnded
        /// The session is ending for another reason (the app closed it, a timeout): the
        /// referrer hears the transfer failed, the call to the target goes.
        case sessionEnding
    }

    public enum Action: Sendable, Equatable {
        case notify(SIPFrag)
        /// `onSessionTransfer` (method `dial`, by carrier).
        case report(TransferState, SIPDetails?, message: String?)
        /// `onSessionTransferRequest`.
        case askApp
        case armTimer(Double)
        case cancelTimer
        /// Place the call to the target.
        case dial
        /// The target answered: the session's trunk leg is the new call from now on.
        case moveToNewCall
        /// Drop the call to the target (the session is going away).
        case cancelDial
        /// Nothing is left of the call: the session ends.
        case endSession
    }

    public let targetTN: String
    public private(set) var phase: Phase
    /// The referrer hung up; the session lives on only for the call being dialled.
    public private(set) var referrerGone = false
    private var rang = false

    /// The policy decided the REFER: `app` asks first, `dial` dials at once.
    public init(targetTN: String, asksApp: Bool) {
        self.targetTN = targetTN
        self.phase = asksApp ? .askingApp : .dialing
    }

    /// What to do right after the 202 went out.
    public mutating func start(answerTimeout: Double) -> [Action] {
        let trying = Action.notify(SIPFrag(status: 100, reason: "Trying"))
        if phase == .askingApp { return [trying, .askApp, .armTimer(answerTimeout)] }
        return [trying, .report(.trying, nil, message: nil), .dial]
    }

    public var isOver: Bool { phase == .succeeded || phase == .failed }

    public mutating func handle(_ input: Input) -> [Action] {
        switch input {
        case .appAnswered(let accept):
            guard phase == .askingApp else { return [] }
            guard accept else { return declined("the app declined the transfer") }
            phase = .dialing
            return [.cancelTimer, .report(.trying, nil, message: nil), .dial]

        case .answerTimeout:
            guard phase == .askingApp else { return [] }
            return declined("the app did not answer the transfer request in time")

        case .dialRinging:
            guard phase == .dialing, !rang else { return [] }
            rang = true
            let ringing = SIPDetails(code: 180, reason: "Ringing")
            return notify(SIPFrag(status: 180, reason: "Ringing")) + [.report(.ringing, ringing, message: nil)]

        case .dialAnswered:
            guard phase == .dialing else { return [] }
            phase = .succeeded
            let ok = SIPDetails(code: 200, reason: "OK")
            return notify(SIPFrag(status: 200, reason: "OK")) + [.moveToNewCall, .report(.succeeded, ok, message: nil)]

        case .dialFailed(let details):
            guard phase == .dialing else { return [] }
            phase = .failed
            let status = details?.code ?? 503
            let frag = SIPFrag(status: status, reason: details?.reason ?? "Service Unavailable")
            return notify(frag)
                + [.report(.failed, details, message: "the gateway's call to the target failed")]
                + (referrerGone ? [.endSession] : [])

        case .sessionEnding:
            guard !isOver else { return [] }
            let dialling = phase == .dialing
            phase = .failed
            return [.cancelTimer] + notify(SIPFrag(status: 487, reason: "Request Terminated"))
                + (dialling ? [.cancelDial] : [])
                + [.report(.failed, nil, message: "the call ended before the transfer completed")]

        case .callEnded:
            switch phase {
            case .askingApp:
                // The session ends with the call, as any call does.
                phase = .failed
                return [.cancelTimer, .report(.failed, nil, message: "the caller left before the app answered")]
            case .dialing:
                referrerGone = true
                return []
            case .succeeded, .failed:
                return []
            }
        }
    }

    private mutating func declined(_ why: String) -> [Action] {
        phase = .failed
        return [.cancelTimer, .notify(SIPFrag(status: 603, reason: "Declined")), .report(.failed, nil, message: why)]
    }

    /// A NOTIFY goes only while the referrer's dialog is there.
    private func notify(_ frag: SIPFrag) -> [Action] { referrerGone ? [] : [.notify(frag)] }
}
