import Gateway

extension GatewayError.Refusal {
    /// The HTTP status the control API answers a refusal of this kind with (docs/api.md).
    var httpStatus: Int {
        switch self {
        case .invalid: 400
        case .unauthenticated: 401
        case .forbidden: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .conflict: 409
        case .quotaExceeded: 429
        case .unavailable: 503
        }
    }
}
