import Foundation
import IrisAPI

/// The suite's results as files for CI and people: JUnit XML, JSON, and a self-contained
/// HTML page (no network needed to view it).
public enum Reports {
    public static func junit(suite: String, _ results: [TestCallResult]) -> String {
        let failures = results.filter { !$0.passed }.count
        let time = String(format: "%.1f", results.reduce(0) { $0 + $1.durationSec })
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites tests=\"\(results.count)\" failures=\"\(failures)\" time=\"\(time)\">\n"
        out +=
            "  <testsuite name=\"\(xml(suite))\" tests=\"\(results.count)\" failures=\"\(failures)\" time=\"\(time)\">\n"
        for r in results {
            let name =
                r.iteration > 1 || results.filter({ $0.test == r.test }).count > 1
                ? "\(r.test) #\(r.iteration)" : r.test
            out += "    <testcase classname=\"\(xml(suite))\" name=\"\(xml(name))\" time=\"\(r.durationSec)\">\n"
            if !r.passed {
                out += "      <failure message=\"\(xml("step \(r.failedStep ?? 0): \(r.failure ?? "")"))\"/>\n"
            }
            var props: [String] = []
            if let v = r.postDialDelayMs { props.append("post_dial_delay_ms=\(v)") }
            if let v = r.answerMs { props.append("answer_ms=\(v)") }
            if let v = r.mos { props.append("mos=\(v)") }
            if let v = r.audio?.compactMap(\.score.snrDb).min() { props.append("snr_db=\(v)") }
            if let v = r.codec { props.append("codec=\(v)") }
            let files = [
                ("pcap", r.evidence?.pcap), ("carrier_wav", r.evidence?.carrierWAV), ("app_wav", r.evidence?.appWAV)
            ]
            .compactMap { name, path in path.map { (name, $0) } }
            if !files.isEmpty {
                out += "      <properties>\n"
                for (name, path) in files {
                    out += "        <property name=\"evidence.\(name)\" value=\"\(xml(path))\"/>\n"
                }
                out += "      </properties>\n"
            }
            // Jenkins' JUnit attachments read `[[ATTACHMENT|path]]` lines.
            var lines = props.isEmpty ? [] : [props.joined(separator: " ")]
            lines += files.map { "[[ATTACHMENT|\($0.1)]]" }
            if !lines.isEmpty { out += "      <system-out>\(xml(lines.joined(separator: "\n")))</system-out>\n" }
            out += "    </testcase>\n"
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    public static func json(suite: String, _ results: [TestCallResult]) -> String {
        struct Document: Encodable {
            var suite: String
            var passed: Bool
            var results: [TestCallResult]
        }
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data =
            (try? e.encode(Document(suite: suite, passed: results.allSatisfy(\.passed), results: results))) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// `linksFrom`: the folder the page is written in; evidence links are made relative to
    /// it, so the report and its files can be moved together. nil: absolute paths.
    public static func html(suite: String, _ results: [TestCallResult], linksFrom: String? = nil) -> String {
        var out = """
            <!doctype html><html><head><meta charset="utf-8"><title>irisgw test: \(xml(suite))</title>
            <style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}
            .pass{color:#070}.fail{color:#b00}.ladder td{font-family:monospace;font-size:12px}\(sipLadderStyle)</style></head><body>
            <h1>\(xml(suite)): \(results.filter(\.passed).count)/\(results.count) passed</h1>
            <table><tr><th>test</th><th>result</th><th>post-dial delay</th><th>answer</th><th>codec</th><th>end</th><th>loss</th><th>jitter</th><th>MOS</th></tr>

            """
        for r in results {
            out +=
                "<tr><td>\(xml(r.test)) #\(r.iteration)</td><td class=\"\(r.passed ? "pass" : "fail")\">\(r.passed ? "pass" : "fail")</td>"
            out +=
                "<td>\(r.postDialDelayMs.map { "\($0) ms" } ?? "")</td><td>\(r.answerMs.map { "\($0) ms" } ?? "")</td>"
            out +=
                "<td>\(xml(r.codec ?? ""))</td><td>\(xml(r.endReason ?? "")) \(r.sipCode.map(String.init) ?? "")\(r.q850Cause.map { " cause \($0)" } ?? "")</td>"
            out +=
                "<td>\(r.packetsLost.map(String.init) ?? "")</td><td>\(r.jitterMs.map { "\($0) ms" } ?? "")</td><td>\(r.mos.map { String($0) } ?? "")</td></tr>\n"
        }
        out += "</table>\n"
        for (index, r) in results.enumerated() {
            out += "<h2 class=\"\(r.passed ? "pass" : "fail")\">\(xml(r.test)) #\(r.iteration)</h2>\n"
            if let f = r.failure { out += "<p class=\"fail\">step \(r.failedStep ?? 0): \(xml(f))</p>\n" }
            if let e = r.evidence { out += evidenceHTML(e, linksFrom: linksFrom) }
            if let sip = r.sip, !sip.messages.isEmpty {
                out += "<h3>SIP on the trunk</h3>\n" + sipLadder(sip, id: "c\(index)")
            }
            out += "<h3>Events to the app</h3>\n" + ladder(r.events)
            out += timeline(r.timeline)
            out += audioHTML(r.audio ?? [])
            var facts: [String] = []
            if let v = r.audioRoundTripMs { facts.append("audio round trip \(v) ms") }
            if let v = r.causeConsistent {
                facts.append(v ? "hangup cause fits its SIP code" : "hangup cause contradicts its SIP code")
            }
            if let v = r.sdpSane {
                facts.append(v ? "answer SDP named one of our codecs" : "answer SDP named no codec of ours")
            }
            if !facts.isEmpty { out += "<p>\(xml(facts.joined(separator: "; ")))</p>\n" }
        }
        return out + "</body></html>\n"
    }

    /// The session's events as a ladder: app | gateway | carrier, one row per event, with
    /// the SIP code where the carrier's answer caused it (inline SVG).
    static func ladder(_ events: [SessionEvent]) -> String {
        guard let t0 = events.first?.at else { return "" }
        let rowHeight = 18, width = 640, height = 30 + rowHeight * events.count
        var svg = "<svg width=\"\(width)\" height=\"\(height)\" font-family=\"monospace\" font-size=\"11\">\n"
        svg +=
            "<defs><marker id=\"a\" markerWidth=\"8\" markerHeight=\"8\" refX=\"8\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#36c\"/></marker></defs>\n"
        for (x, label) in [(80, "app"), (320, "gateway"), (560, "carrier")] {
            svg +=
                "<text x=\"\(x - 20)\" y=\"12\">\(label)</text><line x1=\"\(x)\" y1=\"18\" x2=\"\(x)\" y2=\"\(height)\" stroke=\"#999\"/>\n"
        }
        for (i, e) in events.enumerated() {
            let y = 32 + i * rowHeight
            let ms = e.at - t0
            var text = e.event.rawValue
            if let s = e.status { text = s.rawValue + (e.earlyMedia == true ? " (early media)" : "") }
            if let r = e.reason { text = "ended \(r.rawValue)" }
            if let d = e.digit { text = "DTMF \(d)" }
            if let c = e.code { text = "error \(c)" }
            // A SIP code means the carrier caused it: an arrow from the carrier, else from the gateway.
            if let sip = e.sip {
                svg +=
                    "<line x1=\"560\" y1=\"\(y - 4)\" x2=\"322\" y2=\"\(y - 4)\" stroke=\"#36c\" marker-end=\"url(#a)\"/>"
                svg += "<text x=\"420\" y=\"\(y - 7)\" fill=\"#36c\">\(sip.code) \(xml(sip.reason))</text>"
            }
            svg +=
                "<line x1=\"320\" y1=\"\(y)\" x2=\"82\" y2=\"\(y)\" stroke=\"#333\"/><text x=\"90\" y=\"\(y - 3)\">+\(ms) ms \(xml(text))</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// Packets per 250 ms (grey), the echo tone's level (blue, 0-1) and the trunk's jitter
    /// (orange, to the largest seen or 20 ms) over the call, as inline SVG.
    static func timeline(_ points: [TimelinePoint]) -> String {
        guard let last = points.last, last.ms > 0 else { return "" }
        let width = 640.0, height = 120.0
        let maxJitter = max(20, points.compactMap(\.jitterMs).max() ?? 0)
        func x(_ ms: Int) -> String { String(format: "%.1f", Double(ms) / Double(last.ms) * (width - 20) + 10) }
        func y(_ v: Double) -> String { String(format: "%.1f", height - 10 - max(0, min(1, v)) * (height - 20)) }
        func line(_ color: String, _ value: (TimelinePoint) -> Double?) -> String {
            let pts = points.compactMap { p in value(p).map { "\(x(p.ms)),\(y($0))" } }.joined(separator: " ")
            return pts.isEmpty
                ? "" : "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" points=\"\(pts)\"/>"
        }
        var svg = "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"monospace\" font-size=\"10\">"
        svg +=
            "<rect x=\"0\" y=\"0\" width=\"\(Int(width))\" height=\"\(Int(height))\" fill=\"#fafafa\" stroke=\"#ddd\"/>"
        svg += line("#aaa") { Double($0.packets) / 13 }
        svg += line("#36c") { $0.echoLevel }
        svg += line("#e80") { $0.jitterMs.map { $0 / maxJitter } }
        svg +=
            "<text x=\"12\" y=\"12\">packets/250 ms (grey), echo level (blue), jitter up to \(Int(maxJitter)) ms (orange); \(last.ms) ms</text>"
        return svg + "</svg>\n"
    }

    /// `s` escaped for HTML and XML text and attribute values.
    public static func xml(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
