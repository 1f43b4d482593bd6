/// The response the application chose for a REFER or NOTIFY in a dialog
/// (`SIPCallDelegate.call(_:responseTo:)`).
public struct SIPRequestResponse: Sendable, Equatable {
    public var status: Int
    public var reason: String?
    public var headers: [SIPHeader]

    public init(status: Int, reason: String? = nil, headers: [SIPHeader] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// What a call that takes no transfers answers: REFER 603 Decline, a NOTIFY 481 (no
    /// subscription of ours, RFC 6665 §4.1.3), anything else 200.
    public static func refusal(for request: SIPMessage) -> SIPRequestResponse {
        switch request.method {
        case "REFER": SIPRequestResponse(status: 603)
        case "NOTIFY": SIPRequestResponse(status: 481, reason: "Subscription Does Not Exist")
        default: SIPRequestResponse(status: 200)
        }
    }
}
