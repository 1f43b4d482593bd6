import IrisAPI

/// A refused API request, classified where it is refused: the Iris code, the kind of refusal
/// (the control API's HTTP edge turns it into a status), and a message for the developer. A
/// request that throws this has changed nothing.
public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the request was refused, in the API's terms; ControlAPI maps each to its HTTP status.
    public enum Refusal: Sendable, Equatable {
        /// The request or a value in it is not valid.
        case invalid
        /// No credential, or a wrong or expired one.
        case unauthenticated
        /// The credential does not allow this.
        case forbidden
        /// No such session, file or endpoint.
        case notFound
        /// The endpoint does not take this method.
        case methodNotAllowed
        /// The session is not in a state that allows it (or has ended).
        case conflict
        /// A quota of the caller is used up.
        case quotaExceeded
        /// The gateway cannot take it now (overload, stopping).
        case unavailable
    }

    public var irisCode: Int
    public var refusal: Refusal
    public var message: String
    /// Seconds after which the same request may succeed (an overload): the API sends it as
    /// `Retry-After`.
    public var retryAfter: Int?

    public init(_ irisCode: Int, _ refusal: Refusal, _ message: String, retryAfter: Int? = nil) {
        self.irisCode = irisCode
        self.refusal = refusal
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(message) (\(irisCode))" }

    public static func badRequest(_ message: String) -> GatewayError {
        .init(IrisCode.incorrectParams, .invalid, message)
    }
    public static func notFound(_ roomId: String) -> GatewayError {
        .init(IrisCode.incorrectParams, .notFound, "no session \(roomId)")
    }
    public static func wrongState(_ message: String) -> GatewayError {
        .init(IrisCode.incorrectState, .conflict, message)
    }
    public static func ended(_ roomId: String) -> GatewayError {
        .init(IrisCode.participantLeft, .conflict, "session \(roomId) has ended")
    }
    public static func forbidden(_ message: String) -> GatewayError {
        .init(IrisCode.callForbidden, .forbidden, message)
    }
    public static func unavailable(_ message: String) -> GatewayError {
        .init(IrisCode.serviceUnavailable, .unavailable, message)
    }
}
