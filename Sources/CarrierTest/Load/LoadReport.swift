import Foundation

/// A load run as files: JSON (every figure and every call), JUnit (one test case per
/// threshold) and one self-contained HTML page with its plots as inline SVG.
public enum LoadReport {
    public static func json(_ r: LoadResult) -> String {
        struct Document: Encodable {
            var kind = "load"
            var passed: Bool
            var result: LoadResult
        }
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? e.encode(Document(passed: r.summary.broken.isEmpty, result: r))) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// One `testcase` for the run (its figures in `system-out`) and one per threshold given,
    /// failed when broken; the audio checks are one more when any ran.
    public static func junit(_ r: LoadResult, plan: LoadPlan) -> String {
        let s = r.summary
        var cases: [(name: String, failure: String?)] = [("load run", nil)]
        if let v = plan.minASR { cases.append(("ASR >= \(v) %", s.broken.first { $0.hasPrefix("ASR") })) }
        if let v = plan.minNER { cases.append(("NER >= \(v) %", s.broken.first { $0.hasPrefix("NER") })) }
        if let v = plan.maxPostDialDelayMs {
            cases.append(("post-dial delay p95 <= \(v) ms", s.broken.first { $0.contains("post-dial delay") }))
        }
        if s.audioChecksRun > 0 { cases.append(("audio checks", s.broken.first { $0.contains("audio checks") })) }
        let failures = cases.filter { $0.failure != nil }.count
        let x = Reports.xml
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites tests=\"\(cases.count)\" failures=\"\(failures)\" time=\"\(r.durationSec)\">\n"
        out +=
            "  <testsuite name=\"\(x(r.name)) (load)\" tests=\"\(cases.count)\" failures=\"\(failures)\" time=\"\(r.durationSec)\">\n"
        for (i, c) in cases.enumerated() {
            out +=
                "    <testcase classname=\"\(x(r.name))\" name=\"\(x(c.name))\" time=\"\(i == 0 ? r.durationSec : 0)\">\n"
            if let f = c.failure { out += "      <failure message=\"\(x(f))\"/>\n" }
            if i == 0 { out += "      <system-out>\(x(r.summaryLine + "\n" + s.gatewayVerdict))</system-out>\n" }
            out += "    </testcase>\n"
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    public static func html(_ r: LoadResult) -> String {
        let s = r.summary, x = Reports.xml
        let pct = { (v: Double) in String(format: "%.1f %%", v) }
        var out = """
            <!doctype html><html><head><meta charset="utf-8"><title>irisgw load: \(x(r.name))</title>
            <style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:left}
            th{background:#eee}.pass{color:#070}.fail{color:#b00}figure{margin:1em 0}figcaption{font-weight:600}</style></head><body>
            <h1>\(x(r.name)): load \(s.broken.isEmpty ? "<span class=\"pass\">passed</span>" : "<span class=\"fail\">failed</span>")</h1>
            <p>\(x(r.summaryLine))</p>
            <p>\(x(s.gatewayVerdict)).</p>

            """
        for b in s.broken { out += "<p class=\"fail\">\(x(b))</p>\n" }
        out += "<table>"
        let rows: [(String, String)] = [
            ("profile", r.profile ?? "(default)"), ("targets", r.targets.joined(separator: ", ")),
            (
                "plan",
                String(
                    format: "%d concurrent, %.1f cps (ramp %.0f s), hold %.1f s", r.concurrent, r.cps, r.rampSec,
                    r.holdSec)
                    + (r.audioEvery > 0 ? ", audio every \(r.audioEvery) calls" : "")
            ),
            ("duration", String(format: "%.1f s", r.durationSec)), ("attempts", "\(s.attempts)"),
            ("answered", "\(s.answered)"),
            ("ASR", pct(s.asrPercent)), ("NER", pct(s.nerPercent)), ("most at once", "\(s.peakConcurrent)"),
            ("dropped after the answer", "\(s.dropped)"),
            ("post-dial delay p50/p95/p99", Percentiles.text(s.postDialDelay)),
            ("answer p50/p95/p99", Percentiles.text(s.answer)),
            ("audio checks", "\(s.audioChecksPassed)/\(s.audioChecksRun) passed"),
            ("gateway media load peak", s.gatewayMediaLoadPeakPercent.map { pct($0) } ?? "unknown"),
            ("gateway CPU peak", s.gatewayCPUPeakPercent.map { pct($0) + " of one core" } ?? "unknown"),
            (
                "gateway memory peak",
                s.gatewayResidentPeakBytes.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "unknown"
            )
        ]
        for (k, v) in rows { out += "<tr><th>\(x(k))</th><td>\(x(v))</td></tr>" }
        out += "</table>\n"
        if !s.failuresBySIPCode.isEmpty {
            out += "<h2>Failures</h2><table><tr><th>SIP code</th><th>calls</th></tr>"
            for (k, v) in s.failuresBySIPCode.sorted(by: { $0.key < $1.key }) {
                out += "<tr><td>\(x(k))</td><td>\(v)</td></tr>"
            }
            out += "</table><table><tr><th>Q.850 cause</th><th>calls</th></tr>"
            for (k, v) in s.failuresByCause.sorted(by: { $0.key < $1.key }) {
                out += "<tr><td>\(x(k))</td><td>\(v)</td></tr>"
            }
            out += "</table>\n"
        }
        let end = max(1, r.calls.map(\.endSec).max() ?? 1, r.gateway.map(\.sec).max() ?? 1)
        out += figure(
            "Calls in progress",
            plot(
                end: end, maxY: nil, unit: "calls",
                lines: [("#36c", LoadSeries.inProgress(r.calls, step: 0.25))]))
        out += figure(
            "Call attempts per second",
            plot(
                end: end, maxY: nil, unit: "/s",
                bars: ("#888", LoadSeries.perSecond(r.calls.map(\.startSec)))))
        out += figure(
            "Answered per second",
            plot(
                end: end, maxY: nil, unit: "/s",
                bars: ("#2a2", LoadSeries.perSecond(r.calls.compactMap(\.answerSec)))))
        out += figure(
            "Post-dial delay of each call (by its start)",
            plot(
                end: end, maxY: nil, unit: "ms",
                dots: (
                    "#c60",
                    r.calls.compactMap { c in
                        c.postDialDelayMs.map { LoadSeries.Point(sec: c.startSec, value: Double($0)) }
                    }
                )))
        let load = r.gateway.compactMap { g in g.mediaLoad.map { LoadSeries.Point(sec: g.sec, value: $0 * 100) } }
        let cpu = r.gateway.compactMap { g in g.cpuPercent.map { LoadSeries.Point(sec: g.sec, value: $0) } }
        out += figure(
            "Gateway load: busiest media thread (blue), process CPU in % of one core (grey)",
            load.isEmpty && cpu.isEmpty
                ? "<p>no samples: the gateway's /metrics could not be read</p>"
                : plot(
                    end: end, maxY: max(100, cpu.map(\.value).max() ?? 0), unit: "%",
                    lines: [("#36c", load), ("#aaa", cpu)],
                    mark: LoadSummary.bottleneckPercent))
        out +=
            "<h2>Calls</h2><table><tr><th>#</th><th>target</th><th>start</th><th>post-dial delay</th><th>answer</th><th>end</th><th>audio</th></tr>\n"
        for c in r.calls {
            let end =
                c.refused.map { "refused: \($0)" }
                ?? ((c.endReason ?? "") + (c.sipCode.map { " \($0)" } ?? "")
                    + (c.q850Cause.map { " cause \($0)" } ?? "")
                    + (c.cancelledByUs ? " (we cancelled)" : "") + (c.dropped ? " (dropped)" : ""))
            out += "<tr><td>\(c.index)</td><td>\(x(c.target))</td><td>\(String(format: "%.2f s", c.startSec))</td>"
            out +=
                "<td>\(c.postDialDelayMs.map { "\($0) ms" } ?? "")</td><td>\(c.answerMs.map { "\($0) ms" } ?? "")</td>"
            out +=
                "<td>\(x(end))</td><td class=\"\(c.audioPassed == false ? "fail" : "pass")\">\(c.audioPassed.map { $0 ? "ok" : "failed" } ?? "")</td></tr>\n"
        }
        return out + "</table></body></html>\n"
    }

    static func figure(_ caption: String, _ body: String) -> String {
        "<figure><figcaption>\(Reports.xml(caption))</figcaption>\(body)</figure>\n"
    }

    /// One plot: time (s) across, values up, from 0 to `maxY` (default: the largest value);
    /// lines, bars (one per second) or dots; `mark` draws a dashed line at that value.
    static func plot(
        end: Double, maxY: Double?, unit: String, lines: [(String, [LoadSeries.Point])] = [],
        bars: (String, [LoadSeries.Point])? = nil, dots: (String, [LoadSeries.Point])? = nil, mark: Double? = nil
    ) -> String {
        let width = 720.0, height = 160.0, left = 50.0, bottom = 20.0, top = 8.0
        let all = lines.flatMap(\.1) + (bars?.1 ?? []) + (dots?.1 ?? [])
        let top0 = maxY ?? max(1, all.map(\.value).max() ?? 1)
        let ymax = top0 <= 0 ? 1 : top0 * (maxY == nil ? 1.1 : 1)
        func px(_ s: Double) -> Double { left + s / end * (width - left - 10) }
        func py(_ v: Double) -> Double { height - bottom - max(0, min(1, v / ymax)) * (height - bottom - top) }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        var svg = "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"monospace\" font-size=\"10\">"
        svg +=
            "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(width - left - 10))\" height=\"\(f(height - bottom - top))\" fill=\"#fafafa\" stroke=\"#ccc\"/>"
        // Axes: 0, half and the top of the scale; seconds every fifth of the run.
        for v in [0, ymax / 2, ymax] {
            svg +=
                "<text x=\"2\" y=\"\(f(py(v) + 3))\">\(v >= 10 ? String(Int(v.rounded())) : String(format: "%.1f", v)) \(unit)</text>"
            svg +=
                "<line x1=\"\(f(left))\" y1=\"\(f(py(v)))\" x2=\"\(f(width - 10))\" y2=\"\(f(py(v)))\" stroke=\"#e4e4e4\"/>"
        }
        for i in 0...5 {
            let s = end * Double(i) / 5
            svg += "<text x=\"\(f(px(s) - 8))\" y=\"\(f(height - 6))\">\(String(format: "%.0f", s)) s</text>"
        }
        if let mark {
            svg +=
                "<line x1=\"\(f(left))\" y1=\"\(f(py(mark)))\" x2=\"\(f(width - 10))\" y2=\"\(f(py(mark)))\" stroke=\"#b00\" stroke-dasharray=\"4 3\"/>"
        }
        if let (color, points) = bars {
            let w = max(1, px(1) - px(0) - 2)
            for p in points where p.value > 0 {
                svg +=
                    "<rect x=\"\(f(px(p.sec) + 1))\" y=\"\(f(py(p.value)))\" width=\"\(f(w))\" height=\"\(f(py(0) - py(p.value)))\" fill=\"\(color)\"/>"
            }
        }
        for (color, points) in lines where !points.isEmpty {
            let pts = points.map { "\(f(px($0.sec))),\(f(py($0.value)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(pts)\"/>"
        }
        if let (color, points) = dots {
            for p in points {
                svg += "<circle cx=\"\(f(px(p.sec)))\" cy=\"\(f(py(p.value)))\" r=\"3\" fill=\"\(color)\"/>"
            }
        }
        return svg + "</svg>\n"
    }
}
