/// Which number an outbound call presents as its caller (From, and the asserted identity
/// when the profile sends one), and which numbers an app may ask for (docs/sip-profiles.md,
/// `outbound.callerId`).
public struct CallerID: Sendable, Equatable {
    /// Where the presented number comes from.
    public enum Policy: String, Sendable, Equatable, CaseIterable {
        /// The app's `sourceTN`, when it starts with one of `allowedPrefixes` (when set).
        case app
        /// Always `number`, whatever the app asked for.
        case fixed
        /// A number of `pool` (numbers the trunk owns): the app's `sourceTN` when it is one
        /// of them, else the one sharing the longest prefix with the dialled number (a local
        /// number for local calls), the first on a tie.
        case pool
    }

    /// Default `.app`.
    public var policy: Policy
    /// The number `.fixed` presents. Required for `.fixed`.
    public var number: String?
    /// The numbers `.pool` chooses from. Required (not empty) for `.pool`.
    public var pool: [String]
    /// `.app`: the app's number must start with one of these, or the call is refused (-417)
    /// before any INVITE. Default nil: any number.
    public var allowedPrefixes: [String]?
    /// The From display name when the app gives no `callerName`. Default nil: none.
    public var displayName: String?

    /// Builds the policy; defaults as documented on each property.
    public init(
        policy: Policy = .app, number: String? = nil, pool: [String] = [], allowedPrefixes: [String]? = nil,
        displayName: String? = nil
    ) {
        self.policy = policy
        self.number = number
        self.pool = pool
        self.allowedPrefixes = allowedPrefixes
        self.displayName = displayName
    }

    /// The number to present for the app's `sourceTN` (separators already removed) on a call
    /// to `target` (normalised).
    /// - Throws: `NumberError` -417 when `.app` has `allowedPrefixes` and the number starts
    ///   with none of them.
    public func present(sourceTN: String, target: String) throws(NumberError) -> String {
        switch policy {
        case .app:
            if let allowed = allowedPrefixes, !allowed.contains(where: { sourceTN.hasPrefix($0) }) {
                throw NumberError(
                    code: NumberError.callForbidden,
                    message: "call forbidden: caller number \(sourceTN) is not allowed on this trunk "
                        + "(allowed: " + allowed.joined(separator: ", ") + ")")
            }
            return sourceTN
        case .fixed:
            return number ?? sourceTN
        case .pool:
            if pool.contains(sourceTN) { return sourceTN }
            var best = pool.first ?? sourceTN, bestLength = -1
            for candidate in pool {
                let length = zip(candidate, target).prefix { $0 == $1 }.count
                if length > bestLength { (best, bestLength) = (candidate, length) }
            }
            return best
        }
    }
}

/// How the caller's identity is asserted to the trunk (RFC 3325).
public enum AssertedIdentity: String, Sendable, Equatable, CaseIterable {
    /// No identity header.
    case none
    /// P-Asserted-Identity: the gateway asserts it, as a trusted element of the carrier's
    /// trust domain.
    case pai
    /// P-Preferred-Identity: the gateway asks the carrier's proxy to assert it.
    case ppi
}
