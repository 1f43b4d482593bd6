/// Why a digest header could not be parsed or answered.
///
/// The message names the parameter or the rule that failed, never a password, a response or a
/// whole header, so it is safe to log.
public struct DigestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure, for callers that act on it.
    public enum Kind: Sendable, Equatable {
        /// The header uses another scheme (e.g. `Basic`); the scheme name is in `detail`.
        case notDigestScheme
        /// The header breaks the RFC grammar (bad quoting, missing `=`, stray characters).
        case malformed
        /// A required parameter (`realm`, `nonce`, `username`, `uri`, `response`) is absent.
        case missingParameter
        /// A parameter that may appear once appears twice.
        case duplicateParameter
        /// `algorithm` names an algorithm this implementation does not support.
        case unsupportedAlgorithm
        /// `qop` names only protections this implementation does not support.
        case unsupportedQop
        /// None of the challenges offered can be answered.
        case noUsableChallenge
    }

    /// The class of failure.
    public var kind: Kind
    /// What exactly failed: a parameter name, a scheme name, an algorithm token.
    public var detail: String

    /// Creates an error of `kind` with a short `detail`.
    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// A one-line, log-safe message.
    public var description: String {
        switch kind {
        case .notDigestScheme: "not a Digest scheme: \(detail)"
        case .malformed: "malformed digest header: \(detail)"
        case .missingParameter: "digest header lacks required parameter \(detail)"
        case .duplicateParameter: "digest header repeats parameter \(detail)"
        case .unsupportedAlgorithm: "unsupported digest algorithm \(detail)"
        case .unsupportedQop: "unsupported digest qop \(detail)"
        case .noUsableChallenge: "no usable digest challenge: \(detail)"
        }
    }
}
