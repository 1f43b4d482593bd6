// What the agent's owner may change while it runs (a configuration reload): the defence's
// rates and bans, and the policy of calls that come in. Everything else in `configuration`
// (listeners, transports' limits, timers) is fixed for the agent's life.

extension SIPUserAgent {
    /// The defence in force: the last `updateDefence`, else `configuration.defence`. On the loop.
    public var defence: SIPDefence { loopState.value.defenceOverride ?? configuration.defence }

    /// Replaces the defence's settings. Sources already tracked keep their counts and bans
    /// (a ban runs out when it was set to); new rates apply from the next request. On the loop.
    /// `maxTrackedSources` stays the configuration's (the tables were sized for it).
    public func updateDefence(_ new: SIPDefence) {
        var d = new
        d.maxTrackedSources = configuration.defence.maxTrackedSources
        loopState.value.defenceOverride = d
        sources.retune(
            requestsPerSecond: d.requestsPerSecond, trustedRequestsPerSecond: d.trustedRequestsPerSecond,
            banSeconds: d.banSeconds)
        authFailures.retune(limit: d.maxAuthFailures, window: d.authFailureWindowSeconds)
    }

    /// PRACK and session timers of calls that come in (and the option tags OPTIONS answers
    /// name): `configuration.callPolicy` until set. Calls in progress keep theirs. On the loop.
    public var inboundCallPolicy: SIPCallPolicy {
        get { loopState.value.inboundCallPolicyOverride ?? configuration.callPolicy }
        set { loopState.value.inboundCallPolicyOverride = newValue }
    }
}
