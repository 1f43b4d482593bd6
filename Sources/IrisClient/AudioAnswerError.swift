import SDP

/// Why an SDP answer cannot be used for the client's Opus leg.
public enum AudioAnswerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The body is not SDP (RFC 8866); the error names the line.
    case malformed(SDPError)
    /// No `m=audio` line.
    case noAudioStream
    /// The audio stream's port is 0: the answerer declined it (RFC 3264 §6).
    case audioRejected
    /// Neither the session nor the audio stream has a `c=` line.
    case missingConnection
    /// A `c=` address that is not an IPv4/IPv6 literal of its address type (FQDNs are not
    /// resolved here).
    case unsupportedAddress(String)
    /// The answer's audio stream does not carry Opus.
    case opusNotAccepted(formats: [String])

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .malformed(let error): "SDP answer does not parse: \(error)"
        case .noAudioStream: "SDP answer has no m=audio line"
        case .audioRejected: "SDP answer rejected the audio stream (port 0)"
        case .missingConnection: "SDP answer has no c= line for the audio stream"
        case .unsupportedAddress(let address): "SDP answer address \(address) is not an IP literal"
        case .opusNotAccepted(let formats):
            "SDP answer's audio stream has no Opus (formats: \(formats.joined(separator: " ")))"
        }
    }
}
