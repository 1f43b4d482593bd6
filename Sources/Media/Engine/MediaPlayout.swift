import IOCore

/// How a leg's received audio reaches the other leg.
public enum MediaPlayout: String, Sendable, Equatable {
    /// Same codec both sides: packets relayed as they arrive, never decoded.
    case relay
    /// Transcoded the moment each packet arrives (calm network).
    case arrival
    /// Through the jitter buffer on the 20 ms tick (jitter or reordering seen).
    case buffered
    /// Through the jitter buffer into the mix of a merged call.
    case mixing
}
