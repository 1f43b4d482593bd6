import Gateway
import IrisAPI
import Testing

@testable import ControlAPI

/// Gateway classifies a refusal; the HTTP edge answers it with the status (and Retry-After)
/// the API documents.
@Test(
    arguments: [
        (GatewayError.badRequest("x"), 400), (.notFound("r"), 404), (.wrongState("x"), 409), (.ended("r"), 409),
        (.forbidden("x"), 403), (.unavailable("x"), 503),
        (GatewayError(IrisCode.tokenExpired, .unauthenticated, "expired"), 401),
        (GatewayError(IrisCode.incorrectParams, .methodNotAllowed, "no"), 405),
        (GatewayError(IrisCode.serviceUnavailable, .quotaExceeded, "quota"), 429)
    ] as [(GatewayError, Int)])
func refusalsAreAnsweredWithTheirStatus(_ error: GatewayError, _ status: Int) throws {
    let response = ControlAPIServer.error(error)
    #expect(response.status == status)
    let body = try #require(String(validating: response.body, as: UTF8.self))
    #expect(body.contains("\"code\":\(error.irisCode)"))
}

@Test func anOverloadCarriesRetryAfter() {
    let response = ControlAPIServer.error(
        GatewayError(IrisCode.serviceUnavailable, .unavailable, "busy", retryAfter: 2))
    #expect(response.status == 503)
    #expect(response.headers.contains { $0.0 == "Retry-After" && $0.1 == "2" })
}
