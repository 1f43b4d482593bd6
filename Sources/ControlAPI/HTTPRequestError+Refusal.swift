import HTTP

extension HTTPRequestError {
    /// What `HTTPServerStatistics` counts it as.
    var refusal: HTTPServerStatistics.Refusal {
        switch status {
        case 413: .bodyTooLarge
        case 431: .headerTooLarge
        default: .badRequest
        }
    }
}
