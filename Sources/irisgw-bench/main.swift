import Foundation
import SIP

/// `make bench`: each line is `BENCH <name> key=value...`, ratios measured in this run.
func formatted(_ v: Double) -> String { String(format: "%.0f", v) }

let which = Set(CommandLine.arguments.dropFirst())
if which.isEmpty || which.contains("sip-parse") {
    let r = ParseBench.run()
    print("BENCH sip-parse ours_msgs_per_sec=\(formatted(r.oursPerSecond)) osip_parse_msgs_per_sec=\(formatted(r.osipParsePerSecond)) osip_parse_serialize_msgs_per_sec=\(formatted(r.osipParseSerializePerSecond)) ratio=\(String(format: "%.2f", r.osipParsePerSecond / r.oursPerSecond)) target_ratio_max=1.5")
}
if which.contains("profile-parse") {
    // Our parse path alone, for `perf record`.
    var n = 0
    for _ in 0..<60_000 { for m in ParseBench.messages { if let p = try? SIP.SIPMessage.parse(m) { n &+= p.serialize().count; _ = p.topVia; _ = p.cseq } } }
    print(n)
}
