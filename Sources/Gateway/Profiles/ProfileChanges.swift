/// How a set of profiles read again differs from the set in force, by profile name (each
/// list sorted). A profile is changed when anything its file says differs, its file's
/// name included.
public struct ProfileChanges: Sendable, Equatable {
    public var added: [String]
    public var changed: [String]
    public var unchanged: [String]
    public var removed: [String]

    public init(added: [String] = [], changed: [String] = [], unchanged: [String] = [], removed: [String] = []) {
        self.added = added
        self.changed = changed
        self.unchanged = unchanged
        self.removed = removed
    }

    /// Compares `new` with `old`, matching profiles by name.
    public init(from old: [TrunkProfile], to new: [TrunkProfile]) {
        var before: [String: TrunkProfile] = [:]
        for p in old { before[p.name] = p }
        var after: [String: TrunkProfile] = [:]
        for p in new { after[p.name] = p }
        self.init(
            added: after.keys.filter { before[$0] == nil }.sorted(),
            changed: after.filter { name, p in before[name].map { $0 != p } ?? false }.keys.sorted(),
            unchanged: after.filter { name, p in before[name] == p }.keys.sorted(),
            removed: before.keys.filter { after[$0] == nil }.sorted())
    }

    /// What a reload put in force: the changed profiles and the added ones, by name.
    public var reloaded: [String] { (added + changed).sorted() }
}
