/// How calls on the trunk are handed on (docs/sip-profiles.md, "Transfers"): what happens when
/// the carrier will not carry out the app's transfer, and what a REFER from the carrier or a
/// PBX behind it may do.
extension TrunkProfile {
    public struct Transfer: Sendable, Equatable {
        /// When the carrier will not transfer (405/501/603 to our REFER, a failed final NOTIFY,
        /// no NOTIFY in time).
        public enum Fallback: String, Sendable, CaseIterable {
            /// The app gets `failed` and the call goes on as before. The default.
            case fail
            /// The gateway dials the target on this trunk itself (the same number rules, caller
            /// id policy and limits as any call) and joins the two trunk legs; the app leaves.
            case bridge
        }

        /// A REFER the carrier (or a PBX behind it) sends in a session's dialog.
        public enum InboundRefer: String, Sendable, CaseIterable {
            /// 603 Decline. The default.
            case reject
            /// 202, and `onSessionTransferRequest` to the app, which accepts (the gateway then
            /// dials as with `dial`) or declines (NOTIFY 603) through the API.
            case app
            /// 202, and the gateway dials the target on this trunk and moves the app onto the
            /// new call, reporting progress back with NOTIFY.
            case dial
        }

        /// Default `fail`.
        public var fallback: Fallback
        /// Default `reject`. A Refer-To the trunk may not dial (number rules, allowed prefixes)
        /// is refused with 403 under every policy.
        public var refer: InboundRefer
        /// Seconds from our REFER's acceptance to the first NOTIFY, and between NOTIFYs, before
        /// the transfer counts as failed. Default 10.
        public var notifyTimeoutSec: Int
        /// Seconds from our REFER to the final NOTIFY (the target may ring a while). Default 60.
        public var completeTimeoutSec: Int
        /// `refer: app`: seconds the app has to accept before the request is declined. Default 30.
        public var answerTimeoutSec: Int

        public init(
            fallback: Fallback = .fail, refer: InboundRefer = .reject, notifyTimeoutSec: Int = 10,
            completeTimeoutSec: Int = 60, answerTimeoutSec: Int = 30
        ) {
            self.fallback = fallback
            self.refer = refer
            self.notifyTimeoutSec = notifyTimeoutSec
            self.completeTimeoutSec = completeTimeoutSec
            self.answerTimeoutSec = answerTimeoutSec
        }
    }
}
