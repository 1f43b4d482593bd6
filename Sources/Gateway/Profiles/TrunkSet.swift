/// The trunk profiles in force and the name of the default one: what a reload replaces as
/// one value (Gateway+Reload.swift), so no reader sees one set's default with another's profiles.
struct TrunkSet: Sendable {
    var profiles: [String: TrunkProfile]
    /// The profile a create uses when it names none: `defaultProfile` when given, else the
    /// first profile with an `outbound` section, by name.
    var defaultName: String?

    init(_ list: [TrunkProfile], defaultProfile: String?) {
        var byName: [String: TrunkProfile] = [:]
        for p in list { byName[p.name] = p }
        profiles = byName
        defaultName = defaultProfile ?? list.filter { $0.outbound != nil }.map(\.name).sorted().first
    }

    /// The profiles by name.
    var sorted: [TrunkProfile] { profiles.values.sorted { $0.name < $1.name } }

    /// The profile whose PRACK and session-timer policy calls coming in take (they are
    /// matched to a trunk only after the INVITE is read): the default, else the first by name.
    var inboundPolicyProfile: TrunkProfile? {
        (defaultName ?? profiles.keys.sorted().first).flatMap { profiles[$0] }
    }
}
