import IrisAPI

extension IrisRtcConnection {
    /// `GET /metrics`: the gateway's Prometheus text (needs the API key, not a page token).
    public func metricsText() throws(IrisError) -> String {
        String(decoding: try call("GET", "/metrics"), as: UTF8.self)
    }
}
