import Crypto

extension InviteSessionMachine {
    /// What a session needs to know of its agent.
    public struct Configuration: Sendable, Equatable {
        /// PRACK and session timers for this call.
        public var policy: SIPCallPolicy
        /// Our Contact URI (dialogs and target refreshes).
        public var contact: SIPURI
        /// The `Server` header value of our responses.
        public var serverHeader: String
        /// RFC 3261 T1 in seconds. Default 0.5.
        public var t1: Double
        /// RFC 3261 T2 in seconds: the cap of 2xx retransmission intervals. Default 4.
        public var t2: Double
        /// Header parameters of every Contact the session sends: feature tags (RFC 3840), e.g.
        /// `+sip.src` on a recording session (RFC 7866 §6.1.1). Default none.
        public var contactParameters: [SIPParameter]

        /// Creates a configuration.
        public init(
            policy: SIPCallPolicy, contact: SIPURI, serverHeader: String, t1: Double = 0.5, t2: Double = 4,
            contactParameters: [SIPParameter] = []
        ) {
            self.policy = policy
            self.contact = contact
            self.serverHeader = serverHeader
            self.t1 = t1
            self.t2 = t2
            self.contactParameters = contactParameters
        }
    }

    /// The machine's random choices; inject fixed ones in tests.
    public struct Randomness: Sendable {
        /// Picks an integer in a range: the 491 back-off (`GlareRetry`), the session timer's,
        /// and the Retry-After of a 500 to an overlapping offer.
        public var integer: @Sendable (ClosedRange<Int>) -> Int
        /// A digest client nonce (hex).
        public var cnonce: @Sendable () -> String

        /// Creates a source.
        public init(integer: @escaping @Sendable (ClosedRange<Int>) -> Int, cnonce: @escaping @Sendable () -> String) {
            self.integer = integer
            self.cnonce = cnonce
        }

        /// The system's generators.
        public static let system = Randomness(
            integer: { Int.random(in: $0) },
            cnonce: { Crypto.hex(Crypto.randomBytes(count: 16)) })
    }
}
