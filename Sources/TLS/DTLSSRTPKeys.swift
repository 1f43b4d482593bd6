/// The SRTP keys a DTLS-SRTP handshake exported (RFC 5764 §4.2), already put in our
/// direction: `sendKey` protects what we send, `receiveKey` what the peer sends. Each is
/// master key || master salt, the layout of Media's `SRTPConfiguration`:
///
///     SRTPConfiguration(suite: SRTPSuite(rawValue: keys.profile.suiteName)!,
///                       sendKey: keys.sendKey, receiveKey: keys.receiveKey)
///
/// `description` never shows the keys.
public struct DTLSSRTPKeys: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let profile: DTLSSRTPProfile
    /// Our master key || master salt (the DTLS client's keys when we are the client).
    public let sendKey: [UInt8]
    /// The peer's master key || master salt.
    public let receiveKey: [UInt8]

    /// Splits the exporter's output, client key | server key | client salt | server salt
    /// (RFC 5764 §4.2), for `role`. nil when `material` has the wrong length.
    init?(profile: DTLSSRTPProfile, material: [UInt8], role: DTLSRole) {
        let k = profile.keyLength, s = profile.saltLength
        guard material.count == 2 * (k + s) else { return nil }
        let clientKey = material[0..<k], serverKey = material[k..<2 * k]
        let clientSalt = material[2 * k..<2 * k + s], serverSalt = material[2 * k + s..<2 * (k + s)]
        let client = Array(clientKey + clientSalt), server = Array(serverKey + serverSalt)
        self.profile = profile
        sendKey = role == .client ? client : server
        receiveKey = role == .client ? server : client
    }

    /// The exporter's output length for `profile`: two keys and two salts.
    static func materialLength(_ profile: DTLSSRTPProfile) -> Int { 2 * (profile.keyLength + profile.saltLength) }

    /// The suite name for Media's `SRTPSuite` (see `DTLSSRTPProfile`).
    public var suiteName: String { profile.suiteName }

    public var description: String { "DTLSSRTPKeys(\(profile.suiteName), keys hidden)" }
    public var debugDescription: String { description }
}
