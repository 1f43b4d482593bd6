import IrisAPI
import SIP

extension CarrierCallInfo {
    /// What a carrier's INVITE says beyond the numbers, header values unchanged: its `X-`
    /// headers, P-Asserted-Identity, Diversion, History-Info, whether it carried an Identity
    /// header (RFC 8224) and the `verstat` of the From's (else the first asserted identity's)
    /// user part.
    init(invite: SIPMessage) {
        var extensions: [String: String] = [:]
        var spelling: [String: String] = [:]
        for h in invite.headers where h.name.key.hasPrefix("x-") && h.name.key.count > 2 {
            let name = spelling[h.name.key] ?? h.name.canonical
            spelling[h.name.key] = name
            extensions[name] = extensions[name].map { $0 + ", " + h.value } ?? h.value
        }
        let identities = invite.headers.filter { $0.name.key == "identity" }.map(\.value)
        let asserted = invite.values("P-Asserted-Identity")
        let fromVerstat = invite.from?.uri.telephoneSubscriber?.verstat
        let assertedVerstat = asserted.lazy.compactMap { try? NameAddress.parse($0) }.compactMap { $0.uri.telephoneSubscriber?.verstat }.first
        self.init(headers: extensions.isEmpty ? nil : extensions,
                  pAssertedIdentity: asserted.isEmpty ? nil : asserted,
                  diversion: Self.nonEmpty(invite.values("Diversion")),
                  historyInfo: Self.nonEmpty(invite.values("History-Info")),
                  identity: !identities.isEmpty,
                  identityHeaders: identities.isEmpty ? nil : identities,
                  verstat: fromVerstat ?? assertedVerstat)
    }

    private static func nonEmpty(_ values: [String]) -> [String]? { values.isEmpty ? nil : values }
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
