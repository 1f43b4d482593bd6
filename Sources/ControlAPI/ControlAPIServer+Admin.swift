import Gateway
import IrisAPI

/// `POST /v1/admin/reload` (docs/api.md, "Reloading the configuration"): the trunk profiles
/// and the serve configuration read again, as SIGHUP does. The API key only; a page token
/// gets 403. The body is empty or `{}`.
extension ControlAPIServer {
    /// Runs one reload for the API: its summary, or why nothing changed. It must not wait
    /// for a reload under way (it refuses with `.busy`: 409).
    public typealias Reloader = @Sendable () throws(ReloadRefusal) -> ReloadSummary

    /// Sets what `POST /v1/admin/reload` runs (`irisgw serve` does, once started). Until
    /// then the endpoint answers 503.
    public func onReload(_ reload: @escaping Reloader) { reloader.withLock { $0 = reload } }

    /// New page-token quotas (a reload): creates and WebSockets from now on are held to them;
    /// sessions and WebSockets already open stay.
    public func updatePageLimits(_ limits: PageTokenLimits) { pageLimitsSlot.withLock { $0 = limits } }

    /// `/v1/admin/...`.
    func adminRoute(_ request: HTTPRequest, _ parts: [String], _ caller: APICaller) throws(GatewayError) -> HTTPResponse
    {
        guard parts == ["v1", "admin", "reload"] else {
            throw GatewayError(
                IrisCode.incorrectParams, .notFound, "no such endpoint: \(request.method) \(request.path)")
        }
        guard request.method == "POST" else { throw Self.notAllowed(request) }
        guard caller == .apiKey else { throw Self.forbidden("reload the configuration") }
        let body = String(decoding: request.body, as: UTF8.self).filter { !$0.isWhitespace }
        guard body.isEmpty || body == "{}" else { throw .badRequest("the body must be empty or {}") }
        guard let reload = reloader.withLock({ $0 }) else {
            throw .unavailable("this server cannot reload the configuration")
        }
        do throws(ReloadRefusal) {
            return Self.json(200, try reload())
        } catch {
            switch error.kind {
            case .busy:
                throw GatewayError(IrisCode.incorrectState, .conflict, error.message)
            case .invalid:
                // 422: the request is fine, the files are not.
                return Self.json(
                    422,
                    ReloadErrorBody(
                        code: IrisCode.incorrectParams,
                        message: "the configuration was not reloaded (the one in force stays): \(error)",
                        file: error.file, key: error.key))
            }
        }
    }
}
