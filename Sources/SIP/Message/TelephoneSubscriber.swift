/// A telephone number with its parameters, as the body of a `tel:` URI or the user part of
/// a SIP URI carries it (RFC 3966 §3 `telephone-subscriber`, RFC 3261 §19.1.6):
///
/// ```
/// sip:+15551234567;verstat=TN-Validation-Passed@carrier.example;user=phone
/// tel:+15551234567;verstat=TN-Validation-Passed
/// ```
/// Parameters stay as received (escaped, case kept); names compare without case.
public struct TelephoneSubscriber: Sendable, Equatable {
    /// The number before the first `;`: `+15551234567`.
    public var number: String
    /// `;name=value` parameters after it, in order.
    public var parameters: [SIPParameter]

    /// Splits `text` at `;` into the number and `name[=value]` parameters.
    public init(parsing text: String) {
        var pieces = text.split(separator: ";", omittingEmptySubsequences: true).map(String.init)
        number = pieces.isEmpty ? "" : pieces.removeFirst()
        parameters = pieces.map { piece in
            guard let eq = piece.firstIndex(of: "=") else { return SIPParameter(piece) }
            return SIPParameter(String(piece[..<eq]), String(piece[piece.index(after: eq)...]))
        }
    }

    /// The verification status a STIR/SHAKEN verifier put on the caller's number (RFC 8224
    /// §6.2.3, ATIS-1000074 `verstat`): `TN-Validation-Passed`, `TN-Validation-Failed`,
    /// `No-TN-Validation`; nil when absent.
    public var verstat: String? { parameters[parameter: "verstat"] ?? nil }
}

extension SIPURI {
    /// The user part of a `sip:`/`sips:` URI, or the body of a `tel:` URI, read as a
    /// telephone-subscriber; nil for other URIs and for a SIP URI without a user part.
    public var telephoneSubscriber: TelephoneSubscriber? {
        if scheme == "tel", let opaque { return TelephoneSubscriber(parsing: opaque) }
        guard isSIP, let user, !user.isEmpty else { return nil }
        return TelephoneSubscriber(parsing: user)
    }
}
