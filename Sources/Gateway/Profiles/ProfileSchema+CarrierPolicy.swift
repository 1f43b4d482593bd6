import Formats
import SIP

/// The profile keys of the carrier header policy (`outbound.callerId`, `assertedIdentity`,
/// `userPhone`, `techPrefix`, `headers`, `appHeaders`) and of authenticated inbound trunks
/// (`inbound.auth`); docs/sip-profiles.md.
extension ProfileSchema {
    static let carrierPolicyKeys = ["callerId", "assertedIdentity", "userPhone", "techPrefix", "headers", "appHeaders"]

    /// Reads the carrier policy keys of `o` (an `outbound` object) into `outbound`.
    func carrierPolicy(_ o: ObjectFields, into outbound: inout TrunkProfile.Outbound) throws(ProfileError) {
        if let c = try o.optional("callerId", { (v, p) throws(ProfileError) in try callerId(v, at: p) }) {
            outbound.callerId = c
        }
        if let a = try o.optional(
            "assertedIdentity", { (v, p) throws(ProfileError) in try choice(v, at: p, AssertedIdentity.self) })
        {
            outbound.assertedIdentity = a
        }
        if let u = try o.optional("userPhone", { (v, p) throws(ProfileError) in try bool(v, at: p) }) {
            outbound.userPhone = u
        }
        if let t = try o.optional(
            "techPrefix",
            { (v, p) throws(ProfileError) in
                let s = try string(v, at: p)
                guard s.count <= 16, s.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw fail(p, "must be 0 to 16 digits, found \"\(s)\"")
                }
                return s
            })
        {
            outbound.techPrefix = t
        }
        if let h = try o.optional("headers", { (v, p) throws(ProfileError) in try fixedHeaders(v, at: p) }) {
            outbound.headers = h
        }
        if let names = try o.optional("appHeaders", { (v, p) throws(ProfileError) in try headerNames(v, at: p) }) {
            outbound.appHeaders = names
        }
    }

    private func callerId(_ value: JSON5Value, at path: String) throws(ProfileError) -> CallerID {
        let o = try object(value, at: path, keys: ["policy", "number", "pool", "allowedPrefixes", "displayName"])
        let policy =
            try o.optional("policy") { (v, p) throws(ProfileError) in try choice(v, at: p, CallerID.Policy.self) }
            ?? .app
        func only(_ key: String, with wanted: CallerID.Policy) throws(ProfileError) {
            if policy != wanted, o.members.contains(where: { $0.key == key }) {
                throw fail(
                    path + "." + key,
                    "applies only with policy \"\(wanted.rawValue)\" (policy is \"\(policy.rawValue)\")")
            }
        }
        try only("number", with: .fixed)
        try only("pool", with: .pool)
        try only("allowedPrefixes", with: .app)
        let number = try o.optional("number") { (v, p) throws(ProfileError) in try callerNumber(v, at: p) }
        if policy == .fixed, number == nil { throw fail(path + ".number", "missing required key (policy \"fixed\")") }
        var seen = Set<String>()
        let pool = try o.optional("pool") { (v, p) throws(ProfileError) in
            try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let n = try callerNumber(e, at: ep)
                guard seen.insert(n).inserted else { throw fail(ep, "\(n) is listed twice") }
                return n
            }
        }
        if policy == .pool, pool == nil { throw fail(path + ".pool", "missing required key (policy \"pool\")") }
        let allowed = try o.optional("allowedPrefixes") { (v, p) throws(ProfileError) in
            try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let s = try string(e, at: ep)
                guard TrunkProfile.Outbound.isDialable(s) || s == "+" else {
                    throw fail(ep, "a prefix is an optional + and digits (\"+1555\"), found \"\(s)\"")
                }
                return s
            }
        }
        let name = try o.optional("displayName") { (v, p) throws(ProfileError) in
            let s = try string(v, at: p)
            do throws(InviteFieldError) { return try InviteFields.callerName(s) } catch { throw fail(p, error.problem) }
        }
        return CallerID(policy: policy, number: number, pool: pool ?? [], allowedPrefixes: allowed, displayName: name)
    }

    /// A number the trunk presents: an optional `+` and 1 to 15 digits.
    private func callerNumber(_ value: JSON5Value, at path: String) throws(ProfileError) -> String {
        let s = try string(value, at: path)
        let digits = s.hasPrefix("+") ? s.dropFirst() : Substring(s)
        guard (1...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw fail(
                path, "must be a phone number: an optional + and 1 to 15 digits (\"+15550100000\"), found \"\(s)\"")
        }
        return s
    }

    /// `{ "X-Account": "acme", ... }`: headers every INVITE carries.
    private func fixedHeaders(_ value: JSON5Value, at path: String) throws(ProfileError) -> [SIPHeader] {
        guard case .object(let members) = value else {
            throw typeError(path, expected: "an object of header name to value", found: value)
        }
        var out: [SIPHeader] = []
        for m in members {
            let p = path + "." + m.key
            if let problem = InviteFields.nameProblem(m.key) { throw fail(p, problem) }
            let name = SIPHeaderName(m.key)
            if out.contains(where: { $0.name == name }) {
                throw fail(p, "given twice (header names compare without case)")
            }
            let text = try string(m.value, at: p)
            if let problem = InviteFields.valueProblem(text) { throw fail(p, problem) }
            out.append(SIPHeader(name, text))
        }
        return out
    }

    /// Header names an app may send besides `X-` ones.
    private func headerNames(_ value: JSON5Value, at path: String) throws(ProfileError) -> [String] {
        var seen: [String] = []
        return try nonEmptyArray(value, at: path) { (e, ep) throws(ProfileError) in
            let s = try string(e, at: ep)
            if let problem = InviteFields.nameProblem(s) { throw fail(ep, problem) }
            let key = SIPHeaderName(s).key
            guard !seen.contains(key) else { throw fail(ep, "\(s) is listed twice") }
            seen.append(key)
            return s
        }
    }

    /// `inbound.auth`: `{ username, passwordEnv, algorithms? }`.
    func inboundAuth(_ value: JSON5Value, at path: String) throws(ProfileError) -> TrunkProfile.Inbound.Auth {
        let a = try object(value, at: path, keys: ["username", "passwordEnv", "algorithms"])
        let username = try a.required("username") { (v, p) throws(ProfileError) in
            let s = try string(v, at: p)
            guard !s.isEmpty, s.utf8.count <= 128,
                s.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C })
            else {
                throw fail(p, "must be 1 to 128 printable ASCII characters without spaces, quotes or backslashes")
            }
            return s
        }
        let passwordEnv = try a.required("passwordEnv") { (v, p) throws(ProfileError) in try environmentName(v, at: p) }
        var seen = Set<String>()
        let algorithms = try a.optional("algorithms") { (v, p) throws(ProfileError) in
            try nonEmptyArray(v, at: p) { (e, ep) throws(ProfileError) in
                let s = try string(e, at: ep)
                guard let algorithm = DigestAlgorithm(rawValue: s), algorithm == .sha256 || algorithm == .md5 else {
                    throw fail(ep, "must be \"SHA-256\" or \"MD5\", found \"\(s)\"")
                }
                guard seen.insert(s).inserted else { throw fail(ep, "\(s) is listed twice") }
                return algorithm
            }
        }
        // Offered strongest first whatever the order given (RFC 8760 §2.4).
        let ordered = [DigestAlgorithm.sha256, .md5].filter { (algorithms ?? [.sha256, .md5]).contains($0) }
        return TrunkProfile.Inbound.Auth(
            username: username, passwordEnv: passwordEnv, algorithms: ordered, source: file)
    }

    /// The name of an environment variable, never its value.
    func environmentName(_ value: JSON5Value, at path: String) throws(ProfileError) -> String {
        let s = try string(value, at: path)
        guard let first = s.first, first.isASCII, first.isLetter || first == "_",
            s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else {
            // The text is not repeated: it may be a password pasted into the wrong key.
            throw fail(
                path,
                "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*); the password itself never goes in the file"
            )
        }
        return s
    }
}
