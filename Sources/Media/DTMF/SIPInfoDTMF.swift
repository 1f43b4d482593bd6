/// A SIP INFO DTMF body could not be used; `kind` classifies it for the SIP edge.
public enum SIPInfoDTMFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The content type is neither `application/dtmf-relay` nor `application/dtmf`.
    case unsupportedContentType(String)
    /// The body is not text.
    case notText
    /// No `Signal=` line in a dtmf-relay body, or an empty dtmf body.
    case missingSignal
    /// The signal is not one of 0-9 * # A-D (or event codes 0-15).
    case invalidSignal(String)
    /// The `Duration=` value is not a number of milliseconds in 1...60000.
    case invalidDuration(String)

    /// What kind of refusal this is; the SIP edge picks the status code for it (Media knows
    /// no SIP statuses).
    public enum Kind: Sendable, Equatable {
        /// A content type we do not take.
        case unsupportedContentType
        /// A body we cannot read.
        case malformedBody
    }

    /// The kind of this refusal.
    public var kind: Kind {
        switch self {
        case .unsupportedContentType: .unsupportedContentType
        default: .malformedBody
        }
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .unsupportedContentType(let type):
            "INFO content type '\(type)' is not application/dtmf-relay or application/dtmf"
        case .notText: "INFO DTMF body is not UTF-8 text"
        case .missingSignal: "INFO DTMF body has no signal"
        case .invalidSignal(let signal): "INFO DTMF signal '\(signal)' is not 0-9 * # A-D"
        case .invalidDuration(let value): "INFO DTMF duration '\(value)' is not 1...60000 ms"
        }
    }
}

/// A DTMF digit carried in a SIP INFO request. Takes the Content-Type value and the body
/// bytes, so it needs nothing from the SIP layer.
///
/// `application/dtmf-relay` (the de-facto Cisco format; lines of `name=value`, names
/// case-insensitive, CRLF or LF, unknown lines ignored):
///
///     dtmf-relay = 1*(line)
///     line       = name *WSP "=" *WSP value *WSP (CRLF / LF)
///     ; Signal   = "0"-"9" / "*" / "#" / "A"-"D" / event code "10"-"15"
///     ; Duration = milliseconds (optional)
///
/// `application/dtmf` (RFC 2976's example): the body is the key alone, or its event code.
public struct SIPInfoDTMF: Sendable, Hashable {
    /// The two body formats.
    public enum Format: String, Sendable, Hashable {
        /// `application/dtmf-relay`: `Signal=` and `Duration=` lines.
        case dtmfRelay = "application/dtmf-relay"
        /// `application/dtmf`: the key alone.
        case dtmf = "application/dtmf"
    }

    /// The duration used when the body gives none: 100 ms, as `DTMFSender` sends.
    public static let defaultDurationMs = 100

    /// The key.
    public var digit: DTMFDigit
    /// The duration the body gave in ms, or nil.
    public var durationMs: Int?

    /// A digit with an optional duration.
    public init(digit: DTMFDigit, durationMs: Int? = nil) {
        self.digit = digit
        self.durationMs = durationMs
    }

    /// The same events a `DTMFReceiver` reports for one key press: `.began` and `.ended`
    /// with the body's duration (or `defaultDurationMs`).
    public var events: DTMFEvents {
        var out = DTMFEvents()
        out.append(.began(digit))
        out.append(.ended(digit, durationMs: durationMs ?? Self.defaultDurationMs))
        return out
    }

    /// Which format a Content-Type value names (parameters and case ignored), or nil.
    public static func format(ofContentType contentType: String) -> Format? {
        let mediaType =
            contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
            .first.map { trimmed($0).lowercased() } ?? ""
        return Format(rawValue: mediaType)
    }

    /// Parses an INFO body of the given Content-Type.
    public static func parse(contentType: String, body: some Collection<UInt8>) throws(SIPInfoDTMFError) -> SIPInfoDTMF
    {
        guard let format = format(ofContentType: contentType) else { throw .unsupportedContentType(contentType) }
        let text = String(decoding: body, as: UTF8.self)
        // Decoding replaces invalid UTF-8 with U+FFFD; a DTMF body never holds one.
        guard !text.unicodeScalars.contains("\u{FFFD}") else { throw .notText }
        switch format {
        case .dtmf:
            let signal = trimmed(Substring(text))
            guard !signal.isEmpty else { throw .missingSignal }
            return SIPInfoDTMF(digit: try digit(signal))
        case .dtmfRelay:
            var signal: Substring?
            var duration: Int?
            for line in text.split(
                omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            {
                guard let equals = line.firstIndex(of: "=") else { continue }
                let name = trimmed(line[..<equals]).lowercased()
                let value = trimmed(line[line.index(after: equals)...])
                switch name {
                case "signal": signal = value
                case "duration":
                    guard let ms = Int(value), (1...60_000).contains(ms) else { throw .invalidDuration(String(value)) }
                    duration = ms
                default: continue
                }
            }
            guard let signal, !signal.isEmpty else { throw .missingSignal }
            return SIPInfoDTMF(digit: try digit(signal), durationMs: duration)
        }
    }

    /// The body in `format`: `Signal=5\r\nDuration=160\r\n` for dtmf-relay (no Duration
    /// line when there is no duration), `5` for dtmf.
    public func serialize(as format: Format = .dtmfRelay) -> [UInt8] {
        switch format {
        case .dtmf:
            return Array(String(digit.character).utf8)
        case .dtmfRelay:
            var text = "Signal=\(digit.character)\r\n"
            if let durationMs { text += "Duration=\(durationMs)\r\n" }
            return Array(text.utf8)
        }
    }

    // MARK: - Private

    private static func digit(_ signal: Substring) throws(SIPInfoDTMFError) -> DTMFDigit {
        if signal.count == 1, let character = signal.first, let digit = DTMFDigit(character) { return digit }
        // Some gateways send the RFC 4733 event code instead of the key.
        if let code = UInt8(signal), let digit = DTMFDigit(event: code) { return digit }
        throw .invalidSignal(String(signal))
    }

    private static func trimmed(_ text: Substring) -> Substring {
        // `isWhitespace` also covers CRLF, which Swift treats as one Character.
        guard let start = text.firstIndex(where: { !$0.isWhitespace }),
            let end = text.lastIndex(where: { !$0.isWhitespace })
        else { return text[text.endIndex...] }
        return text[start...end]
    }
}
