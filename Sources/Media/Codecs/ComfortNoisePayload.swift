/// The RFC 3389 comfort-noise payload could not be parsed.
public enum ComfortNoiseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A CN payload needs at least the noise-level byte.
    case empty

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .empty: "comfort-noise payload is empty; it needs a noise-level byte"
        }
    }
}

/// An RFC 3389 comfort-noise (CN) payload: the noise level, then optional spectral
/// information as quantised reflection coefficients.
///
/// RFC 3389 §3:
///
///      0 1 2 3 4 5 6 7
///     +-+-+-+-+-+-+-+-+
///     |0|   level     |   noise level in -dBov (0...127)
///     +-+-+-+-+-+-+-+-+
///     |     N1        |   quantised reflection coefficients, model order M = count
///     +-+-+-+-+-+-+-+-+
///     |     ...       |
///     +-+-+-+-+-+-+-+-+
///     |     NM        |
///     +-+-+-+-+-+-+-+-+
///
/// A receiver that does not shape noise keeps the coefficients unused; what matters is
/// that a CN packet is recognised as "keep playing noise at this level" rather than
/// decoded as audio.
public struct ComfortNoisePayload: Sendable, Hashable {
    /// The noise level in -dBov (0...127).
    public var noiseLevel: UInt8
    /// The quantised reflection coefficients, kept as sent (empty: level only).
    public var reflectionCoefficients: [UInt8]

    /// A payload; `noiseLevel` is limited to 7 bits on serialisation.
    public init(noiseLevel: UInt8, reflectionCoefficients: [UInt8] = []) {
        self.noiseLevel = noiseLevel
        self.reflectionCoefficients = reflectionCoefficients
    }

    /// The model order: how many reflection coefficients were sent.
    public var modelOrder: Int { reflectionCoefficients.count }

    /// The noise level in dBov (0 or negative).
    public var levelDBov: Int { -Int(noiseLevel) }

    /// Parses a CN payload. The unused top bit of the level byte is ignored, as a receiver
    /// should be liberal here.
    public static func parse(_ bytes: some Collection<UInt8>) throws(ComfortNoiseError) -> ComfortNoisePayload {
        guard let first = bytes.first else { throw .empty }
        return ComfortNoisePayload(noiseLevel: first & 0x7F, reflectionCoefficients: Array(bytes.dropFirst()))
    }

    /// The payload bytes.
    public func serialize() -> [UInt8] {
        [noiseLevel & 0x7F] + reflectionCoefficients
    }
}
