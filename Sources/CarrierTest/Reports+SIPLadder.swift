import Foundation
import IrisAPI

extension Reports {
    /// The trunk leg's SIP messages as a ladder (inline SVG): the gateway on the left, each
    /// peer address on its own line to the right, one arrow per message in wire order with
    /// its time from the first, retransmissions dashed and marked. Each arrow links to the
    /// message's whole text below it, shown when clicked (CSS `:target`: no script, so the
    /// report works as a file and in mail).
    static func sipLadder(_ trace: SIPTraceDocument, id: String) -> String {
        guard let t0 = trace.messages.first?.time else { return "" }
        var peers: [String] = []
        for m in trace.messages where !peers.contains(m.remote) { peers.append(m.remote) }
        let left = 110, spacing = 420, rowHeight = 22
        let width = left + spacing * max(1, peers.count) + 60
        let height = 46 + rowHeight * trace.messages.count
        func x(_ peer: String) -> Int { left + spacing * ((peers.firstIndex(of: peer) ?? 0) + 1) }
        var svg =
            "<svg class=\"sip\" width=\"\(width)\" height=\"\(height)\" font-family=\"monospace\" font-size=\"11\">\n"
        svg +=
            "<defs><marker id=\"h\(id)\" markerWidth=\"8\" markerHeight=\"8\" refX=\"8\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#333\"/></marker></defs>\n"
        let local = trace.messages.first?.local ?? ""
        for (lx, label) in [(left, "irisgw " + local)] + peers.map({ (x($0), $0) }) {
            svg += "<text x=\"\(lx)\" y=\"14\" text-anchor=\"middle\">\(xml(label))</text>"
            svg += "<line x1=\"\(lx)\" y1=\"22\" x2=\"\(lx)\" y2=\"\(height)\" stroke=\"#999\"/>\n"
        }
        for (i, m) in trace.messages.enumerated() {
            let y = 44 + i * rowHeight
            let (from, to) = m.direction == "sent" ? (left, x(m.remote)) : (x(m.remote), left)
            let color = m.firstLine.hasPrefix("SIP/2.0 ") ? statusColor(m.firstLine) : "#1a4f9c"
            let dash = m.retransmission ? " stroke-dasharray=\"4,3\"" : ""
            let label = Self.ladderLabel(m.firstLine) + (m.retransmission ? " (retransmission)" : "")
            let ms = Int(((m.time - t0) * 1000).rounded())
            svg += "<a href=\"#\(id)-m\(i)\"><g class=\"msg\">"
            svg += "<text x=\"6\" y=\"\(y)\" fill=\"#666\">+\(ms) ms</text>"
            svg +=
                "<line x1=\"\(from)\" y1=\"\(y)\" x2=\"\(to)\" y2=\"\(y)\" stroke=\"\(color)\" stroke-width=\"1.5\"\(dash) marker-end=\"url(#h\(id))\"/>"
            svg +=
                "<text x=\"\((from + to) / 2)\" y=\"\(y - 4)\" text-anchor=\"middle\" fill=\"\(color)\">\(xml(label))</text></g></a>\n"
        }
        svg += "</svg>\n"
        var out = "<div class=\"ladder\">\(svg)"
        if trace.dropped > 0 {
            out += "<p>\(trace.dropped) messages from the middle of the call are not shown (the trace is bounded).</p>"
        }
        for (i, m) in trace.messages.enumerated() {
            let when = Self.utc.string(from: Date(timeIntervalSince1970: m.time))
            out +=
                "<pre class=\"sipmsg\" id=\"\(id)-m\(i)\"><b>\(m.direction == "sent" ? "sent to" : "received from") \(xml(m.remote)) over \(m.transport) at \(when)\(m.retransmission ? " (retransmission)" : "")</b>\n\(xml(m.text))</pre>\n"
        }
        return out + "</div>\n"
    }

    /// `2026-12-02T09:55:00.901Z`: when a message crossed the wire, as a carrier's logs say it.
    nonisolated(unsafe) static let utc: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()

    /// `INVITE sip:+1555@host SIP/2.0` -> `INVITE sip:+1555@host`; `SIP/2.0 180 Ringing` -> `180 Ringing`.
    static func ladderLabel(_ firstLine: String) -> String {
        var s = firstLine
        if s.hasPrefix("SIP/2.0 ") { s.removeFirst(8) } else if s.hasSuffix(" SIP/2.0") { s.removeLast(8) }
        return s.count > 56 ? String(s.prefix(55)) + "…" : s
    }

    /// Provisional grey, success green, redirection and failure red.
    static func statusColor(_ statusLine: String) -> String {
        let code = Int(statusLine.dropFirst(8).prefix(3)) ?? 0
        switch code {
        case 100..<200: return "#777"
        case 200..<300: return "#070"
        default: return "#b00"
        }
    }

    /// The styles the ladder needs: message texts hidden until their arrow is clicked.
    static let sipLadderStyle =
        ".sipmsg{display:none;background:#f6f6f6;border:1px solid #ccc;padding:6px;font-size:12px;white-space:pre-wrap}"
        + ".sipmsg:target{display:block}svg.sip a{cursor:pointer}svg.sip g.msg:hover text{text-decoration:underline}"
}
