/// How long to wait before retrying a re-INVITE that got 491 Request Pending
/// (RFC 3261 §14.1).
///
/// RFC 3261 §14.1: "If the UAC is the owner of the Call-ID of the dialog ID (meaning it
/// generated the value), T has a randomly chosen value between 2.1 and 4 seconds in units of
/// 10 ms. If the UAC is not the owner of the Call-ID of the dialog ID, T has a randomly chosen
/// value of between 0 and 2 seconds in units of 10 ms."
///
/// The two ranges do not overlap, so the two sides of a glare never retry at the same time.
public enum GlareRetry {
    /// The retry delay range in 10 ms ticks: 210...400 for the Call-ID owner, 0...200 otherwise.
    public static func tickRange(ownsCallID: Bool) -> ClosedRange<Int> {
        ownsCallID ? 210...400 : 0...200
    }

    /// The delay, in seconds, before retrying the request that met 491.
    ///
    /// - Parameters:
    ///   - ownsCallID: true when this side generated the dialog's Call-ID.
    ///   - random: picks an integer in the given range (defaults to the system RNG). A value
    ///     outside the range is clamped into it, so a faulty generator cannot break the
    ///     non-overlap the RFC relies on.
    public static func delay(
        ownsCallID: Bool,
        random: (ClosedRange<Int>) -> Int = { Int.random(in: $0) }
    ) -> Double {
        let range = tickRange(ownsCallID: ownsCallID)
        let ticks = min(max(random(range), range.lowerBound), range.upperBound)
        return Double(ticks) / 100
    }

    /// The monotonic time at which to retry: `now` plus ``delay(ownsCallID:random:)``.
    public static func retryAt(
        now: Double,
        ownsCallID: Bool,
        random: (ClosedRange<Int>) -> Int = { Int.random(in: $0) }
    ) -> Double {
        now + delay(ownsCallID: ownsCallID, random: random)
    }
}
