import IrisAPI

/// What a final non-2xx response to our INVITE means for the session (docs/events.md, "Outbound: SIP to events"),
/// decided where the response is read so the session only acts on the verdict.
public struct FinalResponseClass: Sendable, Equatable {
    public enum Next: Sendable, Equatable {
        /// The session ends.
        case end(EndReason, irisCode: Int?)
        /// Try the profile's next proxy; when none is left, end with this.
        case failover(whenExhausted: EndReason, irisCode: Int)
    }
    public var next: Next

    /// The verdict for `status`. `weCanceled`: we sent CANCEL because the app closed the
    /// session; `ringTimedOut`: we sent it because the ring timeout expired.
    public static func classify(status: Int, weCanceled: Bool = false, ringTimedOut: Bool = false) -> FinalResponseClass
    {
        switch status {
        case 487 where ringTimedOut: return .init(next: .end(.noAnswer, irisCode: IrisCode.targetNoReply))
        case 487 where weCanceled: return .init(next: .end(.canceled, irisCode: nil))
        case 404, 484, 604: return .init(next: .end(.failed, irisCode: IrisCode.remoteDoesNotExist))
        case 408, 480: return .init(next: .end(.noAnswer, irisCode: IrisCode.targetNoReply))
        case 486, 600: return .init(next: .end(.busy, irisCode: nil))
        case 603: return .init(next: .end(.declined, irisCode: nil))
        case 403: return .init(next: .end(.failed, irisCode: IrisCode.callForbidden))
        // A second challenge after our credentials: the trunk refuses us (configuration).
        case 401, 407: return .init(next: .end(.failed, irisCode: IrisCode.serviceUnavailable))
        // Not a reachability problem: nothing the app offered through us can be used there
        // (codecs, or SRTP the trunk insists on). Retrying the same call will not help.
        case 488, 606: return .init(next: .end(.failed, irisCode: IrisCode.serviceUnavailable))
        case 503: return .init(next: .failover(whenExhausted: .failed, irisCode: IrisCode.serviceUnavailable))
        case 500...599: return .init(next: .end(.failed, irisCode: IrisCode.serviceUnavailable))
        default: return .init(next: .end(.failed, irisCode: IrisCode.remoteUnreachable))
        }
    }

    /// No response at all (Timer B, or the transport failed): next proxy, then -412.
    public static let noResponse = FinalResponseClass(
        next: .failover(whenExhausted: .failed, irisCode: IrisCode.remoteUnreachable))
}
