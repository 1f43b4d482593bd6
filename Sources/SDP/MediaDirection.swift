/// The direction of a stream from the point of view of whoever wrote the description
/// (RFC 8866 §6.7, RFC 3264 §5.1).
public enum MediaDirection: String, Sendable, CaseIterable {
    /// Sends and receives (the default when no attribute is given).
    case sendrecv
    /// Only sends; an offer of `sendonly` puts the peer on hold.
    case sendonly
    /// Only receives.
    case recvonly
    /// Neither sends nor receives.
    case inactive

    /// The direction from the two capabilities.
    public init(sending: Bool, receiving: Bool) {
        switch (sending, receiving) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    /// Whether the writer sends media.
    public var isSending: Bool { self == .sendrecv || self == .sendonly }

    /// Whether the writer expects to receive media.
    public var isReceiving: Bool { self == .sendrecv || self == .recvonly }

    /// Whether an offer with this direction puts the other side on hold (`sendonly` or
    /// `inactive`, RFC 3264 §8.4).
    public var isHold: Bool { self == .sendonly || self == .inactive }

    /// The direction an answerer that accepts everything uses for an offer with this
    /// direction (RFC 3264 §6.1): sendonly→recvonly, recvonly→sendonly, others unchanged.
    public var answer: MediaDirection {
        MediaDirection(sending: isReceiving, receiving: isSending)
    }

    /// The answer when the answerer itself wants only `local` (for example `sendonly` while it
    /// holds the call): the mirror of this offer narrowed to what `local` allows.
    public func answer(limitedTo local: MediaDirection) -> MediaDirection {
        let mirror = answer
        return MediaDirection(
            sending: mirror.isSending && local.isSending,
            receiving: mirror.isReceiving && local.isReceiving)
    }
}
