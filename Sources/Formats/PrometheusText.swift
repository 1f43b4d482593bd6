/// The Prometheus text exposition (version 0.0.4) that `/metrics` answers, built metric by
/// metric: the gateway's counters and the HTTP server's use the same writer.
public struct PrometheusText: Sendable {
    public private(set) var text = ""

    public init() {}

    /// One metric family: HELP, TYPE, then a sample per (labels, value); labels are written
    /// as given (`{reason="x"}`, or "" for none).
    public mutating func metric(
        _ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]
    ) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for (labels, value) in samples { text += "\(name)\(labels) \(value)\n" }
    }

    /// A family with one unlabelled sample.
    public mutating func metric(_ name: String, _ type: String, _ help: String, _ value: some BinaryInteger) {
        metric(name, type, help, [("", String(value))])
    }
}
