/// A line kept but not interpreted, such as `i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=` or a type
/// letter this parser does not know.
public struct SDPField: Sendable, Equatable {
    /// The type letter.
    public var type: Character
    /// Everything after '='.
    public var value: String

    /// A field with the given type letter and value.
    public init(type: Character, value: String) {
        self.type = type
        self.value = value
    }

    /// Where the line goes at session level: 0 between s= and c=, 1 after t=, 2 before a=.
    var sessionRank: Int {
        switch type {
        case "i", "u", "e", "p": 0
        case "t", "r", "z": 1
        default: 2
        }
    }

    /// Where the line goes in a media section: 0 between m= and c=, 1 before a=.
    var mediaRank: Int { type == "i" ? 0 : 1 }
}
