/// A fax machine's tone, as `FaxToneDetector` hears it.
public enum FaxTone: String, Sendable, Equatable, CaseIterable {
    /// CNG, the calling fax's 1100 Hz beeps (0.5 s on, 3 s off).
    case callingTone
    /// CED, the answering fax's 2100 Hz tone (also a modem's ANS or V.8 ANSam).
    case answerTone
    /// The V.21 HDLC flags an answering fax sends after CED (or instead of it).
    case preamble
}
