import IrisAPI

/// A refused API request, classified where it is refused: the Iris code, the HTTP status
/// the control API answers with, and a message for the developer. A request that throws
/// this has changed nothing.
public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    public var irisCode: Int
    public var httpStatus: Int
    public var message: String
    /// Seconds after which the same request may succeed (an overload): the API sends it as
    /// `Retry-After`.
    public var retryAfter: Int?

    public init(_ irisCode: Int, _ httpStatus: Int, _ message: String, retryAfter: Int? = nil) {
        self.irisCode = irisCode
        self.httpStatus = httpStatus
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(message) (\(irisCode))" }

    public static func badRequest(_ message: String) -> GatewayError { .init(IrisCode.incorrectParams, 400, message) }
    public static func notFound(_ roomId: String) -> GatewayError { .init(IrisCode.incorrectParams, 404, "no session \(roomId)") }
    public static func wrongState(_ message: String) -> GatewayError { .init(IrisCode.incorrectState, 409, message) }
    public static func ended(_ roomId: String) -> GatewayError { .init(IrisCode.participantLeft, 409, "session \(roomId) has ended") }
    public static func forbidden(_ message: String) -> GatewayError { .init(IrisCode.callForbidden, 403, message) }
    public static func unavailable(_ message: String) -> GatewayError { .init(IrisCode.serviceUnavailable, 503, message) }
}
