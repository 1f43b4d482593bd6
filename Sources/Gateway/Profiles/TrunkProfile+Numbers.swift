/// A number refused before dialling, with the Iris error code the API returns for it.
public struct NumberError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Iris code -103: the number is malformed.
    public static let incorrectParams = -103
    /// Iris code -417: the number is well formed but not allowed on this trunk (toll fraud guard).
    public static let callForbidden = -417

    /// The Iris error code: `incorrectParams` or `callForbidden`.
    public var code: Int
    /// Why, naming the number.
    public var message: String

    /// Builds an error.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// `<message> (<code>)`.
    public var description: String { "\(message) (\(code))" }
}

extension TrunkProfile.Outbound {
    /// The longest E.164 number has 15 digits (ITU-T E.164 section 6).
    private static let maxE164Digits = 15

    /// Checks and normalises a number an app asked to call (docs/sip-profiles.md, "Numbers"):
    ///
    /// 1. Spaces, tabs, dashes, dots and parentheses are removed.
    /// 2. The rest must match `^[+*]?[0-9]+$`, else -103.
    /// 3. For `e164` and `national` profiles the number becomes E.164: `+` stays, a leading
    ///    `00` (or the profile's `internationalPrefix`) becomes `+`, anything else is a
    ///    national number: the `nationalPrefix` is stripped if present and
    ///    `+` + `defaultCountryCode` put in front. The result must be `+` and 2 to 15 digits
    ///    not starting with 0, else -103. `*` feature codes and `raw` profiles keep the digits.
    /// 4. The result must start with one of `allowedPrefixes`, else -417.
    ///
    /// - Returns: the normalised number (E.164 unless `raw` or a `*` code); turn it into the
    ///   Request-URI user part with `dialString(forE164:)`.
    public func normalize(_ raw: String) throws(NumberError) -> String {
        let cleaned = raw.filter { !" \t-.()".contains($0) }
        guard Self.isDialable(cleaned) else {
            throw NumberError(
                code: NumberError.incorrectParams,
                message: "incorrect params: \"\(raw)\" is not a phone number (digits, optionally after + or *)")
        }
        var number = cleaned
        if numberFormat != .raw, !number.hasPrefix("*") {
            number = toE164(cleaned)
            let digits = number.dropFirst()
            guard (2...Self.maxE164Digits).contains(digits.count), digits.first != "0" else {
                throw NumberError(
                    code: NumberError.incorrectParams,
                    message: "incorrect params: \"\(raw)\" is not a valid E.164 number (\(number))")
            }
        }
        guard allowedPrefixes.contains(where: { number.hasPrefix($0) }) else {
            throw NumberError(
                code: NumberError.callForbidden,
                message: "call forbidden: \(number) does not start with an allowed prefix ("
                    + allowedPrefixes.joined(separator: ", ") + ")")
        }
        return number
    }

    /// The Request-URI user part for a number from `normalize(_:)`:
    /// `e164` and `raw` send it as it is; `national` sends home numbers as
    /// `nationalPrefix` + national number and foreign ones as `internationalPrefix` + digits.
    /// Numbers not starting with `+` (feature codes, raw digits) go as they are.
    public func dialString(forE164 number: String) -> String {
        guard numberFormat == .national, number.hasPrefix("+") else { return number }
        let home = "+" + defaultCountryCode
        if number.hasPrefix(home) {
            return nationalPrefix + number.dropFirst(home.count)
        }
        return internationalPrefix + number.dropFirst()
    }

    private func toE164(_ number: String) -> String {
        if number.hasPrefix("+") { return number }
        if number.hasPrefix("00") { return "+" + number.dropFirst(2) }
        if !internationalPrefix.isEmpty, number.hasPrefix(internationalPrefix) {
            return "+" + number.dropFirst(internationalPrefix.count)
        }
        var national = Substring(number)
        if !nationalPrefix.isEmpty, national.hasPrefix(nationalPrefix) {
            national = national.dropFirst(nationalPrefix.count)
        }
        return "+" + defaultCountryCode + national
    }

    /// `^[+*]?[0-9]+$`.
    static func isDialable(_ text: String) -> Bool {
        var digits = Substring(text)
        if digits.first == "+" || digits.first == "*" { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}

extension TrunkProfile {
    /// `outbound.normalize(_:)`; a profile without `outbound` refuses every number (-417).
    public func normalize(_ raw: String) throws(NumberError) -> String {
        guard let outbound else {
            throw NumberError(
                code: NumberError.callForbidden,
                message: "call forbidden: trunk \(name) has no outbound section")
        }
        return try outbound.normalize(raw)
    }
}
