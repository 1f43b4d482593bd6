import Gateway

/// `POST /v1/admin/reload` until the reload itself is built in (branch `reload` brings
/// `ControlAPIServer+Admin.swift`, whose `adminRoute` replaces this file): the body is checked
/// as there, then 503 as when no reloader is set.
extension ControlAPIServer {
    func adminRoute(_ request: HTTPRequest, _ parts: [String], _ caller: APICaller) throws(GatewayError) -> HTTPResponse
    {
        let body = String(decoding: request.body, as: UTF8.self).filter { !$0.isWhitespace }
        guard body.isEmpty || body == "{}" else { throw .badRequest("the body must be empty or {}") }
        throw .unavailable("this server cannot reload the configuration")
    }
}
