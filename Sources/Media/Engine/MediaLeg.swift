import IOCore

/// The two sides of a bridged call.
public enum MediaLeg: String, Sendable, CaseIterable {
    /// Toward the carrier: G.711 or G.722.
    case trunk
    /// Toward the platform (the app): Opus, or PCMU when the app offers it.
    case platform

    var other: MediaLeg { self == .trunk ? .platform : .trunk }
}
