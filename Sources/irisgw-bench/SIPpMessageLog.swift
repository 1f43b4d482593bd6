import Foundation

/// SIPp's message trace (`-trace_msg -message_file FILE`), read while SIPp runs: each
/// message is a block headed by a dashed line with the local time SIPp logged it
/// (`----...--- 2026-12-05 15:46:35.358890`), then `UDP message received [360] bytes :`
/// (or `sent`), a blank line and the message.
enum SIPpMessageLog {
    /// One message SIPp received, and when (Unix seconds).
    struct Received: Equatable {
        var at: Double
        var message: String
    }

    /// The messages SIPp received in `log`, in order; a block without a readable header (the
    /// cut-off start of a file read from an offset) is skipped.
    static func received(_ log: String, timeZone: TimeZone = .current) -> [Received] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let dashes = String(repeating: "-", count: 47)
        var out: [Received] = []
        var current: (at: Double, lines: [Substring])?
        func finish() {
            guard let c = current else { return }
            let message = c.lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            out.append(Received(at: c.at, message: message))
            current = nil
        }
        // By scalars: in Swift "\r\n" is one Character, and SIP lines end with it.
        let lines = log.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { Substring($0) }
        var i = 0
        while i < lines.count {
            if lines[i].hasPrefix(dashes) {
                finish()
                if i + 1 < lines.count, lines[i + 1].contains("message received"),
                    let at = time(lines[i].dropFirst(dashes.count).trimmingCharacters(in: .whitespaces), calendar)
                {
                    current = (at, [])
                    i += 1
                }
            } else {
                current?.lines.append(lines[i])
            }
            i += 1
        }
        finish()
        return out
    }

    /// When SIPp received each BYE whose `Reason` header contains `reason`, by Call-ID: the
    /// first, then its retransmissions.
    static func byes(_ log: String, reason: String, timeZone: TimeZone = .current) -> [String: [Double]] {
        var out: [String: [Double]] = [:]
        for r in received(log, timeZone: timeZone) where r.message.hasPrefix("BYE ") {
            let fields = r.message.split(separator: "\r\n").map { $0.lowercased() }
            guard fields.contains(where: { $0.hasPrefix("reason:") && $0.contains(reason.lowercased()) }),
                let callID = fields.first(where: { $0.hasPrefix("call-id:") || $0.hasPrefix("i:") })
            else { continue }
            let id = String(callID.drop(while: { $0 != ":" }).dropFirst()).trimmingCharacters(in: .whitespaces)
            out[id, default: []].append(r.at)
        }
        return out
    }

    /// `2026-12-05 15:46:35.358890` in `calendar`'s time zone, as Unix seconds.
    private static func time(_ text: String, _ calendar: Calendar) -> Double? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2 else { return nil }
        let day = parts[0].split(separator: "-").compactMap { Int($0) }
        let clock = parts[1].split(separator: ":")
        guard day.count == 3, clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]),
            let second = Double(clock[2])
        else { return nil }
        let whole = DateComponents(year: day[0], month: day[1], day: day[2], hour: hour, minute: minute)
        guard let date = calendar.date(from: whole) else { return nil }
        return date.timeIntervalSince1970 + second
    }
}
