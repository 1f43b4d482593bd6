// Lookups over a description's a= lines, and the direction attribute (RFC 8866 §6.7) that
// SessionDescription and MediaDescription read and replace.

extension Array where Element == SDPAttribute {
    /// The first attribute named `name`.
    public func first(named name: String) -> SDPAttribute? {
        first { $0.name == name }
    }

    /// The values of every attribute named `name`, in order (property attributes give "").
    public func values(named name: String) -> [String] {
        filter { $0.name == name }.map { $0.value ?? "" }
    }

    /// Whether an attribute named `name` is present.
    public func contains(named name: String) -> Bool {
        contains { $0.name == name }
    }

    /// The last direction attribute (the one that wins if a sender repeats itself).
    var direction: MediaDirection? {
        for attribute in reversed() where attribute.value == nil {
            if let direction = MediaDirection(rawValue: attribute.name) { return direction }
        }
        return nil
    }

    /// Replaces the direction attributes with `direction` at the position of the first one
    /// (appending when there was none), or removes them for nil.
    mutating func setDirection(_ direction: MediaDirection?) {
        let isDirection: (SDPAttribute) -> Bool = { $0.value == nil && MediaDirection(rawValue: $0.name) != nil }
        let position = firstIndex(where: isDirection)
        removeAll(where: isDirection)
        guard let direction else { return }
        insert(.direction(direction), at: position ?? endIndex)
    }
}
