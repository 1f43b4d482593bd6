import SIP

extension TrunkProfile.Inbound {
    /// Digest credentials a trunk must present on its INVITEs (RFC 3261 §22.2, RFC 8760),
    /// besides or instead of its source address. As with `outbound.auth`, the password is
    /// never in the file: `passwordEnv` names the environment variable that holds it.
    public struct Auth: Sendable, Equatable {
        /// The digest username; unique across the profiles' `inbound.auth`. Required.
        public var username: String
        /// The name of the environment variable holding the password,
        /// `[A-Za-z_][A-Za-z0-9_]*`. Required.
        public var passwordEnv: String
        /// Algorithms the trunk may answer with, offered strongest first. Default
        /// `[.sha256, .md5]`.
        public var algorithms: [DigestAlgorithm]
        /// The profile file, for the error when the variable is unset.
        public var source: String

        /// Builds credentials in code.
        public init(
            username: String, passwordEnv: String, algorithms: [DigestAlgorithm] = [.sha256, .md5], source: String = ""
        ) {
            self.username = username
            self.passwordEnv = passwordEnv
            self.algorithms = algorithms
            self.source = source
        }

        /// The password from `environment`, read when an INVITE's credentials are checked
        /// (so a profile loads without the variable).
        /// - Throws: `ProfileError` naming the file, `inbound.auth.passwordEnv` and the
        ///   variable (never a value) when it is unset or empty.
        public func password(environment: [String: String]) throws(ProfileError) -> String {
            guard let value = environment[passwordEnv], !value.isEmpty else {
                throw ProfileError(
                    file: source, keyPath: "inbound.auth.passwordEnv",
                    message:
                        "environment variable \(passwordEnv) is \(environment[passwordEnv] == nil ? "not set" : "empty")"
                )
            }
            return value
        }
    }
}
