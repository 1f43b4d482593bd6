/// A `priv-value` of the Privacy header (RFC 3323 §4.2, and `id` from RFC 3325 §9.3):
///
/// ```
/// Privacy-hdr  = "Privacy" HCOLON priv-value *(";" priv-value)
/// priv-value   = "header" / "session" / "user" / "none" / "critical" / "id" / token
/// ```
public enum PrivacyValue: String, Sendable, Equatable, CaseIterable {
    /// Hide headers that could identify the user (Via, Contact, Record-Route ...).
    case header
    /// Hide the session description (media addresses): an anonymising media relay.
    case session
    /// User-level privacy: the user's own anonymisation of From (RFC 3323 §4.1.1.1).
    case user
    /// No privacy: privacy services must not apply any.
    case none
    /// The call must fail rather than go on without the privacy asked for.
    case critical
    /// Hide the network-asserted identity (P-Asserted-Identity) beyond the trust domain.
    case id
}

/// The value of a Privacy header: the privacy a user asks the network for.
public struct PrivacyHeader: Sendable, Equatable, CustomStringConvertible {
    /// In the order given; never empty, no repeats.
    public var values: [PrivacyValue]

    /// Why a Privacy value was refused; `description` names the part at fault.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Builds a header from values already checked; use `parse` for text.
    public init(_ values: [PrivacyValue]) { self.values = values }

    /// Reads `id`, `id;critical`, `header; user` (case-insensitive, spaces around `;`
    /// allowed). Refused: an empty value, an unknown or repeated priv-value, `none` with
    /// another one (it asks for no privacy), and `critical` alone (it qualifies the others).
    public static func parse(_ text: String) throws(Invalid) -> PrivacyHeader {
        var values: [PrivacyValue] = []
        for part in text.split(separator: ";", omittingEmptySubsequences: false) {
            let word = String(part).trimmingSIPWhitespace().lowercased()
            guard let value = PrivacyValue(rawValue: word) else {
                let known = PrivacyValue.allCases.map(\.rawValue).joined(separator: ", ")
                throw Invalid(
                    description: word.isEmpty
                        ? "an empty priv-value in \"\(text)\"" : "unknown priv-value \"\(word)\" (RFC 3323: \(known))")
            }
            guard !values.contains(value) else { throw Invalid(description: "\"\(word)\" is given twice") }
            values.append(value)
        }
        if values.contains(.none), values.count > 1 {
            throw Invalid(description: "\"none\" asks for no privacy and cannot be combined with other values")
        }
        if values == [.critical] {
            throw Invalid(
                description: "\"critical\" alone asks for nothing: give the privacy it makes critical (\"id;critical\")"
            )
        }
        return PrivacyHeader(values)
    }

    /// True when the caller's identity must not show in From: `id`, `user` or `header`.
    public var hidesIdentity: Bool { values.contains { $0 == .id || $0 == .user || $0 == .header } }

    /// `id;critical`.
    public var description: String { values.map(\.rawValue).joined(separator: ";") }
}
