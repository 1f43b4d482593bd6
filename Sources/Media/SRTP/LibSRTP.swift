// The only file that touches libsrtp2. Every unsafe pointer into the library stays here;
// callers see `SRTPSession`, `SRTPResult` and `SRTPError`.
//
// One `SRTPSession` per leg holds two libsrtp sessions: an outbound one keyed with our
// key (`ssrc_any_outbound`: whatever SSRC we send under) and an inbound one keyed with the
// peer's (`ssrc_any_inbound`: the peer may change SSRC, as carriers do on a re-INVITE).
// Replay window: libsrtp's default of 128 packets; `allow_repeat_tx` off, so we never send
// two packets under one index. Packets are protected and unprotected in place in the
// caller's buffer; nothing here allocates per packet (libsrtp allocates once per new
// inbound SSRC, after that SSRC's first packet authenticates).
//
// Threading: not thread-safe (libsrtp sessions are not); a leg owns its session and the
// media loop pins a call to one thread.

internal import CSRTP
internal import CSRTPOpenSSL

/// `srtp_init` once per process (Swift globals initialise once, thread-safely), 0 when it
/// succeeded. Debian's libsrtp2 does its crypto with NSS, which initialises itself on the
/// first cipher allocation; one session of each suite here, under the once, keeps that
/// first allocation off concurrently starting media threads (AES-ICM, AES-GCM and
/// HMAC-SHA1 are OpenSSL's after CSRTPOpenSSL_install, but libsrtp's other types are not).
private let libraryStatus: Int32 = {
    let status = srtp_init()
    guard status == srtp_err_status_ok else { return Int32(bitPattern: status.rawValue) }
    // AES-ICM, AES-GCM and HMAC-SHA1 on OpenSSL instead of NSS (CSRTPOpenSSL: why, and the self tests).
    let installed = CSRTPOpenSSL_install()
    guard installed == 0 else { return installed }
    for suite in SRTPSuite.allCases {
        let key = [UInt8](repeating: 0, count: suite.keyMaterialLength)
        if case .success(let ctx) = makeContext(suite: suite, key: key, outbound: true) { srtp_dealloc(ctx) }
    }
    return 0
}()

/// The bytes protect may append: a tag (and an MKI we never use), plus the SRTCP index.
private let trailerRoom = Int(CSRTP_max_trailer_length()) + 4

/// One libsrtp session for one direction with a wildcard SSRC.
private func makeContext(suite: SRTPSuite, key: [UInt8], outbound: Bool) -> Result<OpaquePointer, SRTPError> {
    let operation = outbound ? "create outbound" : "create inbound"
    // libsrtp reads as many key bytes as the policy says: a short key would be over-read.
    guard key.count == suite.keyMaterialLength else { return .failure(SRTPError(code: -1, operation: operation)) }
    var policy = srtp_policy_t()
    switch suite {
    case .aesCM128HmacSHA1_80:
        CSRTP_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp)
        CSRTP_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp)
    case .aesCM128HmacSHA1_32:
        // RFC 4568 (AES_CM_128_HMAC_SHA1_32): the 32-bit tag is for SRTP only; SRTCP keeps the 80-bit one.
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy.rtp)
        CSRTP_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp)
    case .aeadAES128GCM:
        // RFC 7714: a 16-octet tag for both.
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
    }
    policy.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound
    policy.window_size = 128
    policy.allow_repeat_tx = 0
    policy.next = nil
    var ctx: OpaquePointer?
    // srtp_create derives the session keys at once and keeps no pointer to the master key.
    var material = key
    let status = material.withUnsafeMutableBufferPointer { k in
        policy.key = k.baseAddress
        return srtp_create(&ctx, &policy)
    }
    // Master key bytes are not left in a buffer we no longer need.
    for i in material.indices { material[i] = 0 }
    guard status == srtp_err_status_ok, let ctx else {
        return .failure(SRTPError(code: Int32(bitPattern: status.rawValue), operation: operation))
    }
    return .success(ctx)
}

@inline(__always)
private func classify(_ status: srtp_err_status_t, length: Int32) -> SRTPResult {
    switch status {
    case srtp_err_status_ok: .ok(length: Int(length))
    case srtp_err_status_auth_fail: .authenticationFailed
    case srtp_err_status_replay_fail, srtp_err_status_replay_old: .replayed
    default: .failed(code: Int32(bitPattern: status.rawValue))
    }
}

/// SRTP and SRTCP for one leg (RFC 3711): protects what we send with our key, unprotects
/// what the peer sends with its key. Not thread-safe: one owner.
public final class SRTPSession {
    public let suite: SRTPSuite
    private let outbound: OpaquePointer
    private let inbound: OpaquePointer

    /// Sessions for `configuration`; throws for a key of the wrong length for the suite.
    public init(_ configuration: SRTPConfiguration) throws(SRTPError) {
        guard libraryStatus == 0 else { throw SRTPError(code: libraryStatus, operation: "init") }
        suite = configuration.suite
        let out = try makeContext(suite: configuration.suite, key: configuration.sendKey, outbound: true).get()
        switch makeContext(suite: configuration.suite, key: configuration.receiveKey, outbound: false) {
        case .success(let ctx):
            outbound = out
            inbound = ctx
        case .failure(let error):
            srtp_dealloc(out)
            throw error
        }
    }

    deinit {
        srtp_dealloc(outbound)
        srtp_dealloc(inbound)
    }

    /// Encrypts and tags the RTP packet in `buffer[0..<length]` in place; the buffer needs
    /// room for the tag after it (callers' 2048-byte buffers always have it).
    @inline(__always)
    public func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> SRTPResult {
        guard let base = buffer.baseAddress, length >= 12, buffer.count - length >= trailerRoom else {
            return .failed(code: Int32(bitPattern: srtp_err_status_bad_param.rawValue))
        }
        var len = Int32(length)
        return classify(srtp_protect(outbound, base, &len), length: len)
    }

    /// Authenticates and decrypts the SRTP packet in `buffer[0..<length]` in place.
    @inline(__always)
    public func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> SRTPResult {
        guard let base = buffer.baseAddress, length >= 12, length <= buffer.count else {
            return .failed(code: Int32(bitPattern: srtp_err_status_bad_param.rawValue))
        }
        var len = Int32(length)
        return classify(srtp_unprotect(inbound, base, &len), length: len)
    }

    /// SRTCP (RFC 3711 §3.4): encrypts and tags the compound RTCP packet in place, adding
    /// the SRTCP index and the tag.
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> SRTPResult {
        guard let base = buffer.baseAddress, length >= 8, buffer.count - length >= trailerRoom else {
            return .failed(code: Int32(bitPattern: srtp_err_status_bad_param.rawValue))
        }
        var len = Int32(length)
        return classify(srtp_protect_rtcp(outbound, base, &len), length: len)
    }

    /// Authenticates and decrypts an SRTCP packet in place.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> SRTPResult {
        guard let base = buffer.baseAddress, length >= 8, length <= buffer.count else {
            return .failed(code: Int32(bitPattern: srtp_err_status_bad_param.rawValue))
        }
        var len = Int32(length)
        return classify(srtp_unprotect_rtcp(inbound, base, &len), length: len)
    }

    /// The libsrtp version linked, e.g. "libsrtp2 2.5.0".
    public static var libraryVersion: String { String(cString: srtp_get_version_string()) }
}

/// The OpenSSL primitives CSRTPOpenSSL gives libsrtp, driven the way libsrtp drives them:
/// for the known-answer tests (RFC 3711 B.2, RFC 2202, RFC 7714), not for the media path.
enum SRTPPrimitives {
    /// libsrtp's self tests of the three replacements; 0 when they pass.
    static func selfTest() -> Int32 {
        _ = libraryStatus
        return CSRTPOpenSSL_self_test()
    }

    /// `count` octets of AES-ICM keystream for a 30-octet key || salt and a 16-octet index
    /// block (RFC 3711 §4.1.1); nil when the cipher refused.
    static func icmKeystream(keyAndSalt: [UInt8], index: [UInt8], count: Int) -> [UInt8]? {
        guard keyAndSalt.count == 30, index.count == 16 else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        let status = out.withUnsafeMutableBufferPointer { o in
            CSRTPOpenSSL_icm_keystream(keyAndSalt, index, o.baseAddress, UInt32(count))
        }
        return status == 0 ? out : nil
    }

    /// The 20-octet HMAC-SHA1 of `data` under `key`; nil when the authenticator refused.
    static func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8]? {
        var tag = [UInt8](repeating: 0, count: 20)
        let status = tag.withUnsafeMutableBufferPointer { t in
            CSRTPOpenSSL_hmac_sha1(key, Int32(key.count), data, Int32(data.count), t.baseAddress)
        }
        return status == 0 ? tag : nil
    }

    /// AES-128-GCM with a 16-octet tag: `seal` gives ciphertext || tag, otherwise the
    /// plaintext of ciphertext || tag; `.failure(code)` with libsrtp's status when refused
    /// (`srtp_err_status_auth_fail` for a tag that does not verify).
    static func gcm(
        seal: Bool, key: [UInt8], iv: [UInt8], aad: [UInt8], _ input: [UInt8]
    ) -> Result<[UInt8], SRTPError> {
        guard key.count == 16, iv.count == 12 else { return .failure(SRTPError(code: -1, operation: "gcm")) }
        var buffer = input + [UInt8](repeating: 0, count: 16)
        var length = UInt32(input.count)
        let keyAndSalt = key + [UInt8](repeating: 0, count: 12)
        let status = buffer.withUnsafeMutableBufferPointer { b in
            CSRTPOpenSSL_gcm(seal ? 1 : 0, keyAndSalt, iv, aad, UInt32(aad.count), b.baseAddress, &length)
        }
        guard status == 0 else { return .failure(SRTPError(code: status, operation: "gcm")) }
        return .success(Array(buffer[0..<Int(length)]))
    }

    /// libsrtp's code for a tag that did not verify.
    static var authenticationFailure: Int32 { Int32(bitPattern: srtp_err_status_auth_fail.rawValue) }
}
