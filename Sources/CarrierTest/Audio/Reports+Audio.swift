import Foundation

extension Reports {
    /// A call's `audioQuality` checks as a small table: one row per step with its figures
    /// and verdict (the failures spelled out under a failed row). Empty without checks.
    static func audioHTML(_ checks: [AudioCheck]) -> String {
        guard !checks.isEmpty else { return "" }
        func db(_ v: Double?) -> String { v.map { String(format: "%.1f dB", $0) } ?? "" }
        func hz(_ list: [Double]) -> String { list.map { String(Int($0)) }.joined(separator: ", ") }
        var out =
            "<table class=\"audio\"><tr><th>step</th><th>audio</th><th>level</th><th>SNR</th><th>tones</th><th>clipping</th>"
        out += "<th>longest gap</th><th>delay</th><th>loss</th><th>jitter</th><th>MOS</th><th>verdict</th></tr>\n"
        for c in checks {
            let s = c.score
            var tones = hz(s.tonesFound)
            if !s.tonesMissing.isEmpty { tones += (tones.isEmpty ? "" : "; ") + "missing " + hz(s.tonesMissing) }
            let level = String(format: "%.1f dBFS", s.levelDbfs)
            let clipping = String(format: "%.2f %%", s.clippingPercent)
            let delay = s.delayMs.map { "\($0) ms" } ?? ""
            let loss = c.lossPercent.map { String(format: "%.1f %%", $0) } ?? ""
            let jitter = c.jitterMs.map { String(format: "%.0f ms", $0) } ?? ""
            let mos = c.mos.map { String(format: "%.2f", $0) } ?? ""
            let cells: [String] = [
                "\(c.step)", c.mode, level, db(s.snrDb), tones, clipping, "\(s.longestGapMs) ms", delay, loss, jitter,
                mos
            ]
            out += "<tr>" + cells.map { "<td>\(xml($0))</td>" }.joined()
            out += "<td class=\"\(c.passed ? "pass" : "fail")\">\(c.passed ? "pass" : "fail")</td></tr>\n"
            if !c.failures.isEmpty {
                out +=
                    "<tr><td></td><td colspan=\"11\" class=\"fail\">\(xml(c.failures.joined(separator: "; ")))</td></tr>\n"
            }
        }
        return out + "</table>\n"
    }
}
