import IrisAPI
import SIP

/// A `createWithTN` field bound for the INVITE (`headers`, `callerName`, `privacy`) that was
/// refused: which field, and why. Always a bad request (-103, HTTP 400), before any INVITE.
public struct InviteFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field, with the header name for headers: `headers.X-Foo`, `callerName`, `privacy`.
    public var field: String
    /// What is wrong, for the developer.
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    /// Iris -103: incorrect params.
    public var irisCode: Int { IrisCode.incorrectParams }
    /// An invalid request (the API answers 400).
    public var refusal: GatewayError.Refusal { .invalid }
    /// `<field>: <problem>`.
    public var description: String { "\(field): \(problem)" }
}

/// Checks what an app or a profile asks to put in an outbound INVITE's headers, so that a
/// value can neither inject a header (CR, LF, NUL ...) nor replace one the gateway writes.
public enum InviteFields {
    /// At most this many app headers per call.
    public static let maxHeaders = 16
    /// A header name's length limit in bytes.
    public static let maxNameBytes = 64
    /// A header value's length limit in bytes.
    public static let maxValueBytes = 2048
    /// Names plus values of all app headers, in bytes.
    public static let maxTotalBytes = 4096
    /// A caller name's length limit in bytes.
    public static let maxCallerNameBytes = 128

    /// Headers the gateway (or its SIP stack) writes and answers for itself: routing,
    /// transaction and dialog identity, authentication, negotiated extensions, the body, and
    /// the caller identity it builds from `callerId`, `callerName` and `privacy`.
    static let reserved: Set<String> = [
        "via", "from", "to", "call-id", "cseq", "contact", "max-forwards", "route", "record-route",
        "content-length", "content-type", "content-encoding", "content-disposition", "mime-version",
        "authorization", "proxy-authorization", "www-authenticate", "proxy-authenticate",
        "require", "proxy-require", "supported", "unsupported", "allow", "accept", "session-expires", "min-se",
        "rseq", "rack", "expires", "user-agent", "server", "p-asserted-identity", "p-preferred-identity", "privacy"
    ]

    /// Why `name` may not be set from outside, or nil when it may: it must be a token, not a
    /// compact form (one letter), and not a header the gateway writes.
    static func nameProblem(_ name: String) -> String? {
        guard HeaderFieldSyntax.isToken(name) else { return "not a header name (RFC 3261 token)" }
        guard name.utf8.count <= maxNameBytes else { return "a header name is at most \(maxNameBytes) bytes" }
        guard name.utf8.count > 1 else { return "compact header forms are not accepted: spell the name out" }
        if reserved.contains(SIPHeaderName(name).key) { return "written by the gateway itself, cannot be set" }
        return nil
    }

    /// Why `value` may not go into a header, or nil when it may.
    static func valueProblem(_ value: String) -> String? {
        if value.isEmpty { return "an empty value" }
        if let byte = HeaderFieldSyntax.forbiddenByte(inValue: value) {
            return "the value holds the control byte 0x" + String(byte, radix: 16, uppercase: true).leftPadded(2)
                + " (CR, LF, NUL and other control bytes are refused: header injection)"
        }
        if value.utf8.count > maxValueBytes { return "the value is longer than \(maxValueBytes) bytes" }
        return nil
    }

    /// True for names an app may send on any trunk (`X-` extension headers).
    static func isExtension(_ name: String) -> Bool {
        name.utf8.count > 2 && name.lowercased().hasPrefix("x-")
    }

    /// The app's `headers` as SIP headers, sorted by name, after every check: names are
    /// tokens, `X-` or in `allowed` (the profile's `appHeaders`), not reserved, not one of
    /// the profile's `fixed` headers, not given twice (names compare without case); values
    /// have no control byte; count and sizes within the limits above.
    public static func appHeaders(
        _ requested: [String: String], allowed: [String], fixed: [SIPHeader]
    ) throws(InviteFieldError) -> [SIPHeader] {
        guard requested.count <= maxHeaders else {
            throw InviteFieldError(field: "headers", problem: "\(requested.count) headers; at most \(maxHeaders)")
        }
        var total = 0
        var seen: [String: String] = [:]
        var out: [SIPHeader] = []
        for name in requested.keys.sorted() {
            let value = requested[name] ?? ""
            let field = "headers." + name.sanitisedForMessage
            if let problem = nameProblem(name) { throw InviteFieldError(field: field, problem: problem) }
            let key = SIPHeaderName(name)
            guard isExtension(name) || allowed.contains(where: { SIPHeaderName($0) == key }) else {
                let names = allowed.isEmpty ? "" : " or " + allowed.joined(separator: ", ")
                throw InviteFieldError(field: field, problem: "not allowed on this trunk (X- headers\(names))")
            }
            if let other = seen[key.key] {
                throw InviteFieldError(field: field, problem: "given twice (also as \(other))")
            }
            seen[key.key] = name
            if fixed.contains(where: { $0.name == key }) {
                throw InviteFieldError(field: field, problem: "set by the trunk profile, cannot be replaced")
            }
            if let problem = valueProblem(value) { throw InviteFieldError(field: field, problem: problem) }
            total += name.utf8.count + value.utf8.count
            out.append(SIPHeader(key, value))
        }
        guard total <= maxTotalBytes else {
            throw InviteFieldError(
                field: "headers", problem: "\(total) bytes of names and values; at most \(maxTotalBytes)")
        }
        return out
    }

    /// The app's `callerName`, checked: 1-128 bytes, no control byte.
    public static func callerName(_ name: String) throws(InviteFieldError) -> String {
        guard !name.isEmpty, name.utf8.count <= maxCallerNameBytes else {
            throw InviteFieldError(field: "callerName", problem: "must be 1 to \(maxCallerNameBytes) bytes")
        }
        if HeaderFieldSyntax.forbiddenByte(inValue: name) != nil {
            throw InviteFieldError(field: "callerName", problem: "holds a control byte (CR, LF, NUL ... are refused)")
        }
        return name
    }

    /// The app's `privacy`, as a Privacy header value (RFC 3323).
    public static func privacy(_ text: String) throws(InviteFieldError) -> PrivacyHeader {
        do throws(PrivacyHeader.Invalid) {
            return try PrivacyHeader.parse(text)
        } catch {
            throw InviteFieldError(field: "privacy", problem: error.description)
        }
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }

    /// The text with control bytes shown as `\u{..}`, so an error message never carries one.
    var sanitisedForMessage: String {
        guard utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return self }
        return unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0)
        }.joined()
    }
}
