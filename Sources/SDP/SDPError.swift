/// A malformed or over-limit SDP body, with the 1-based line it was found on (0 when it
/// concerns the body as a whole).
public struct SDPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in a way that decides the SIP answer.
    public enum Kind: Sendable, Equatable {
        /// The text does not follow the SDP grammar.
        case malformed
        /// The body is larger than ``SessionDescription/maximumSize``.
        case tooLarge
        /// The body has more than ``SessionDescription/maximumMediaCount`` media.
        case tooManyMedia
    }

    /// The 1-based line number, or 0 for the body as a whole.
    public var line: Int
    /// A readable explanation.
    public var reason: String
    /// The classification.
    public var kind: Kind

    /// An error on `line` (0 for the whole body).
    public init(line: Int, reason: String, kind: Kind = .malformed) {
        self.line = line
        self.reason = reason
        self.kind = kind
    }

    /// The SIP status to answer an offer with: 400 for a malformed body, 413 for an oversize
    /// one, 488 (Not Acceptable Here) for too many media.
    public var statusCode: Int {
        switch kind {
        case .malformed: 400
        case .tooLarge: 413
        case .tooManyMedia: 488
        }
    }

    /// "SDP line 3: ..." or "SDP: ..." for errors about the whole body.
    public var description: String {
        line > 0 ? "SDP line \(line): \(reason)" : "SDP: \(reason)"
    }
}
