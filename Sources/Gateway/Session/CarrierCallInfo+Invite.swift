import IrisAPI
import SIP

extension CarrierCallInfo {
    /// What a carrier's INVITE says beyond the numbers, header values unchanged: its `X-`
    /// headers, P-Asserted-Identity, Diversion, History-Info, whether it carried an Identity
    /// header (RFC 8224) and the `verstat` of the From's (else the first asserted identity's)
    /// user part. Within `InboundLimits`: a value over its limit, past its field's count or
    /// past the total is left out whole, and `truncated` names the fields that lost one.
    init(invite: SIPMessage) {
        var budget = CarrierFieldBudget()
        let verstat = Self.verstat(invite).flatMap { v in
            budget.admit(v.utf8.count, limit: InboundLimits.maxVerstatBytes, field: "verstat") ? v : nil
        }
        let identities = invite.headers.filter { $0.name.key == "identity" }.map(\.value)
        let asserted = budget.list(invite.values("P-Asserted-Identity"), field: "pAssertedIdentity")
        let identityHeaders = budget.list(
            identities, field: "identityHeaders", maxCount: InboundLimits.maxIdentityValues,
            maxBytes: InboundLimits.maxIdentityBytes)
        let diversion = budget.list(invite.values("Diversion"), field: "diversion")
        let historyInfo = budget.list(invite.values("History-Info"), field: "historyInfo")
        let extensions = Self.extensionHeaders(invite, &budget)
        self.init(
            headers: extensions.isEmpty ? nil : extensions,
            pAssertedIdentity: asserted,
            diversion: diversion,
            historyInfo: historyInfo,
            identity: !identities.isEmpty,
            identityHeaders: identityHeaders,
            verstat: verstat,
            truncated: budget.truncated.isEmpty ? nil : budget.truncated)
    }

    /// The From's `verstat`, else the first asserted identity's (of all of them, kept or not).
    private static func verstat(_ invite: SIPMessage) -> String? {
        if let v = invite.from?.uri.telephoneSubscriber?.verstat { return v }
        return invite.values("P-Asserted-Identity").lazy.compactMap { try? NameAddress.parse($0) }
            .compactMap { $0.uri.telephoneSubscriber?.verstat }.first
    }

    /// The `X-` headers, name as first spelt to value (a repeated name's values joined with
    /// ", "), within the name, value, count and total limits.
    private static func extensionHeaders(_ invite: SIPMessage, _ budget: inout CarrierFieldBudget) -> [String: String] {
        var extensions: [String: String] = [:]
        var spelling: [String: String] = [:]
        // X-Irisgw-Source is our edge proxy's, not the carrier's.
        for h in invite.headers where h.name.key.hasPrefix("x-") && h.name.key.count > 2 && h.name != .irisgwSource {
            guard h.name.key.utf8.count <= InboundLimits.maxHeaderNameBytes else {
                budget.note("headers")
                continue
            }
            if let name = spelling[h.name.key], let old = extensions[name] {
                let joined = old + ", " + h.value
                guard
                    budget.admit(
                        joined.utf8.count - old.utf8.count, limit: InboundLimits.maxValueBytes - old.utf8.count,
                        field: "headers")
                else { continue }
                extensions[name] = joined
                continue
            }
            guard extensions.count < InboundLimits.maxExtensionHeaders else {
                budget.note("headers")
                continue
            }
            let name = h.name.canonical
            guard h.value.utf8.count <= InboundLimits.maxValueBytes else {
                budget.note("headers")
                continue
            }
            guard budget.admit(name.utf8.count + h.value.utf8.count, limit: .max, field: "headers") else { continue }
            spelling[h.name.key] = name
            extensions[name] = h.value
        }
        return extensions
    }
}

extension SIPMessage {
    /// The calling number of an incoming INVITE: the From's user part (or `tel:` number)
    /// without its parameters (`;verstat=...`, `;isub=...`), "anonymous" when there is none.
    var callingNumber: String {
        guard let number = from?.uri.telephoneSubscriber?.number, !number.isEmpty else { return "anonymous" }
        return number
    }

    /// The called number: the Request-URI's user part without its parameters
    /// (`;npdi;rn=...`), in E.164 form (a `+` added when missing); "" when there is none.
    var calledNumber: String {
        let user = requestURI?.telephoneSubscriber?.number ?? ""
        return user.hasPrefix("+") || user.isEmpty ? user : "+" + user
    }
}
