import COpenSSL
import Glibc

// libssl for DTLS-SRTP (RFC 5763/5764), wrapped. Beside OpenSSLTLS.swift, this is the only
// file that holds an OpenSSL pointer (EVP_PKEY, X509, SSL_CTX, SSL, BIO); everything above it
// works with bytes, `DTLSFingerprint`, `DTLSSRTPKeys` and `DTLSFailure`.
//
// A session never touches a socket. Datagrams from the peer go into a memory BIO one at a
// time (`feed`, then OpenSSL runs until it wants more, so it always reads exactly one
// datagram: DTLS reads a whole packet per read). What OpenSSL writes goes into a BIO of our
// own (`DatagramSink`) that keeps the datagram boundaries a memory BIO would lose: OpenSSL
// asks it how much of the current datagram is used (BIO_CTRL_WPENDING), sizes each
// handshake fragment to fit the rest of the MTU, and flushes (BIO_CTRL_FLUSH) when a
// datagram is full or a flight is done, which is exactly how it drives a buffered datagram
// BIO. So records are never split, several of one flight share a datagram up to the MTU
// (RFC 6347 §4.1.1), and no datagram exceeds it.
//
// The retransmission timer is OpenSSL's (gettimeofday); `DTLSTransport` reads its time left
// and turns it into a deadline on the caller's clock. A session is used by one thread at a
// time (OpenSSL's error queue is per thread).

/// Our DTLS identity: an EC P-256 key and a self-signed X.509 certificate (a random 127-bit
/// serial, valid from a day ago for `validDays`), made at start and shared by every call
/// (OpenSSL reference-counts both, so sessions on any thread may use them). Browsers learn it
/// only through its fingerprint in our SDP (RFC 5763 §5); nobody checks it against a CA.
public final class DTLSCertificate: @unchecked Sendable {  // immutable once made
    fileprivate let certificate: OpaquePointer
    fileprivate let key: OpaquePointer
    /// The SHA-256 fingerprint for our SDP: `a=fingerprint:\(fingerprint.sdpValue)`.
    public let fingerprint: DTLSFingerprint

    /// A fresh key and certificate; `commonName` goes in the subject and issuer.
    public init(commonName: String = "irisgw", validDays: Int = 30) throws(DTLSFailure) {
        ERR_clear_error()
        guard let key = Self.generateKey() else {
            throw .configuration("cannot generate an EC P-256 key: \(TLSContext.lastError())")
        }
        guard let certificate = Self.selfSigned(key: key, commonName: commonName, validDays: validDays) else {
            let why = TLSContext.lastError()
            EVP_PKEY_free(key)
            throw .configuration("cannot make a self-signed certificate: \(why)")
        }
        guard let fingerprint = fingerprintOf(certificate, .sha256) else {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw .configuration("cannot hash the certificate")
        }
        self.key = key
        self.certificate = certificate
        self.fingerprint = fingerprint
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// The fingerprint with another hash (for a peer that asks for one, or for tests).
    public func fingerprint(_ algorithm: DTLSFingerprint.Algorithm) -> DTLSFingerprint {
        // X509_digest fails only without memory; sha-256 worked at init.
        fingerprintOf(certificate, algorithm) ?? fingerprint
    }

    /// The certificate (never the key) in PEM, for logs and tests.
    public var pem: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, certificate) == 1 else { return "" }
        var out = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        let n = out.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        return String(decoding: out.prefix(max(0, Int(n))), as: UTF8.self)
    }

    private static func generateKey() -> OpaquePointer? {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1,
            EVP_PKEY_generate(ctx, &key) == 1
        else { return nil }
        return key
    }

    private static func selfSigned(key: OpaquePointer, commonName: String, validDays: Int) -> OpaquePointer? {
        guard let x = X509_new() else { return nil }
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { X509_free(x); return nil }
        serial[0] &= 0x7F  // positive (RFC 5280 §4.1.2.2)
        serial[0] |= 0x01  // and never zero
        let ok: Bool = {
            guard X509_set_version(x, 2) == 1 else { return false }  // v3
            guard let bn = BN_bin2bn(serial, Int32(serial.count), nil) else { return false }
            defer { BN_free(bn) }
            guard BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != nil else { return false }
            guard X509_gmtime_adj(X509_getm_notBefore(x), -86_400) != nil,
                X509_gmtime_adj(X509_getm_notAfter(x), validDays * 86_400) != nil
            else { return false }
            guard let name = X509_get_subject_name(x) else { return false }
            let cn = Array(commonName.utf8)
            guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, Int32(cn.count), -1, 0) == 1,
                X509_set_issuer_name(x, name) == 1, X509_set_pubkey(x, key) == 1
            else { return false }
            return X509_sign(x, key, EVP_sha256()) > 0
        }()
        guard ok else { X509_free(x); return nil }
        return x
    }
}

/// The digest of a certificate's DER encoding.
private func fingerprintOf(_ certificate: OpaquePointer, _ algorithm: DTLSFingerprint.Algorithm) -> DTLSFingerprint? {
    let md: OpaquePointer? =
        switch algorithm {
        case .sha1: EVP_sha1()
        case .sha224: EVP_sha224()
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        }
    var digest = [UInt8](repeating: 0, count: 64)  // EVP_MAX_MD_SIZE
    var length: UInt32 = 0
    guard let md, X509_digest(certificate, md, &digest, &length) == 1 else { return nil }
    return DTLSFingerprint(algorithm: algorithm, digest: Array(digest.prefix(Int(length))))
}

/// A DTLS context (SSL_CTX): DTLS 1.2, our certificate, the DTLS-SRTP profiles we offer or
/// accept in order of preference, and a peer certificate required both ways (checked by
/// fingerprint, never against a CA). One is made at start and shared by every call, client
/// or server.
public final class DTLSContext: @unchecked Sendable {  // immutable once built; OpenSSL locks its own counts
    fileprivate let ctx: OpaquePointer
    public let certificate: DTLSCertificate
    /// Most preferred first: as a server we pick the first of these the client offers.
    public let profiles: [DTLSSRTPProfile]

    public init(
        certificate: DTLSCertificate, profiles: [DTLSSRTPProfile] = DTLSSRTPProfile.preferred
    ) throws(DTLSFailure) {
        guard !profiles.isEmpty else { throw .configuration("no DTLS-SRTP profile") }
        ERR_clear_error()
        guard let c = SSL_CTX_new(DTLS_method()) else { throw .configuration("cannot create a DTLS context") }
        ctx = c
        self.certificate = certificate
        self.profiles = profiles
        guard COpenSSL_SSL_CTX_set_min_proto_version(ctx, COpenSSL_DTLS1_2_VERSION()) == 1,
            COpenSSL_SSL_CTX_set_max_proto_version(ctx, COpenSSL_DTLS1_2_VERSION()) == 1
        else {
            throw .configuration("cannot restrict the context to DTLS 1.2")
        }
        // Our MTU, never one OpenSSL guesses (there is no socket to ask); no renegotiation;
        // no session tickets (nothing resumes, and a ticket would carry the peer's certificate
        // in the server's last flight).
        SSL_CTX_set_options(
            ctx,
            COpenSSL_SSL_OP_NO_QUERY_MTU() | UInt64(COpenSSL_SSL_OP_NO_RENEGOTIATION()) | COpenSSL_SSL_OP_NO_TICKET())
        _ = COpenSSL_SSL_CTX_set_session_cache_mode(ctx, COpenSSL_SSL_SESS_CACHE_OFF())
        guard SSL_CTX_use_certificate(ctx, certificate.certificate) == 1,
            SSL_CTX_use_PrivateKey(ctx, certificate.key) == 1, SSL_CTX_check_private_key(ctx) == 1
        else {
            throw .configuration("cannot use the certificate: \(TLSContext.lastError())")
        }
        // 0 means success here (unlike the rest of libssl).
        guard SSL_CTX_set_tlsext_use_srtp(ctx, profiles.map(\.rawValue).joined(separator: ":")) == 0 else {
            throw .configuration("OpenSSL refuses the DTLS-SRTP profiles: \(TLSContext.lastError())")
        }
        // The chain is not checked (self-signed certificates, RFC 5763 §5); the leaf's
        // fingerprint is, by the session the SSL belongs to.
        SSL_CTX_set_verify(ctx, COpenSSL_SSL_VERIFY_PEER() | COpenSSL_SSL_VERIFY_FAIL_IF_NO_PEER_CERT()) { _, store in
            guard let store, let ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
                let owner = SSL_get_ex_data(OpaquePointer(ssl), 0)
            else { return 0 }
            // Only the leaf is the peer's identity; anything above it is not looked at.
            guard X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
            guard let leaf = X509_STORE_CTX_get_current_cert(store) else { return 0 }
            guard Unmanaged<DTLSSession>.fromOpaque(owner).takeUnretainedValue().accepts(leaf) else {
                // The peer then gets a bad_certificate alert (not unknown_ca for self-signed).
                X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)
                return 0
            }
            return 1
        }
    }

    deinit { SSL_CTX_free(ctx) }
}

/// What OpenSSL writes, kept as datagrams (the wbio's data). See the top of this file.
final class DatagramSink {
    let mtu: Int
    /// The datagram being filled.
    var current: [UInt8] = []
    var done: [[UInt8]] = []

    init(mtu: Int) { self.mtu = mtu }

    func write(_ bytes: UnsafeRawBufferPointer) {
        // A record never straddles two datagrams; one that would overflow starts a new one.
        if !current.isEmpty, current.count + bytes.count > mtu { flush() }
        current.append(contentsOf: bytes)
    }

    func flush() {
        guard !current.isEmpty else { return }
        done.append(current)
        current = []
    }

    func take() -> [[UInt8]] {
        flush()
        defer { done = [] }
        return done
    }
}

/// The BIO method behind `DatagramSink`: made once, used by every session.
nonisolated(unsafe) private let datagramMethod: OpaquePointer? = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "irisgw DTLS datagrams") else {
        return nil
    }
    func sink(_ bio: OpaquePointer?) -> DatagramSink? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<DatagramSink>.fromOpaque(data).takeUnretainedValue()
    }
    _ = BIO_meth_set_write(method) { bio, data, count in
        guard let data, count > 0, let sink = sink(bio) else { return count == 0 ? 0 : -1 }
        sink.write(UnsafeRawBufferPointer(start: data, count: Int(count)))
        return count
    }
    _ = BIO_meth_set_ctrl(method) { bio, command, _, _ in
        switch command {
        case BIO_CTRL_FLUSH:
            sink(bio)?.flush()
            return 1
        case BIO_CTRL_WPENDING:
            // How much of the datagram is used: OpenSSL fits the next fragment in the rest.
            return sink(bio)?.current.count ?? 0
        default:
            // No MTU to query, no overhead below us, nothing pending to read.
            return 0
        }
    }
    _ = BIO_meth_set_create(method) { bio in
        BIO_set_init(bio, 1)
        return 1
    }
    _ = BIO_meth_set_destroy(method) { bio in
        BIO_set_data(bio, nil)
        BIO_set_init(bio, 0)
        return 1
    }
    return method
}()

/// One DTLS association's OpenSSL state: an SSL, a memory BIO for what arrives, a
/// `DatagramSink` for what leaves, and the peer's expected fingerprints.
final class DTLSSession {
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let sink: DatagramSink
    let role: DTLSRole
    /// The peer's `a=fingerprint` values of its strongest hash (RFC 8122 §5).
    private let expected: [DTLSFingerprint]
    private let initialTimeoutMicros: UInt32
    /// Set when the peer's certificate did not match: the failure the handshake ends with.
    private var mismatch: String?

    enum Progress: Equatable {
        case done
        case wantMore
        case failed(DTLSFailure)
    }

    init(
        context: DTLSContext, role: DTLSRole, peerFingerprints: [DTLSFingerprint], settings: DTLSSettings
    ) throws(DTLSFailure) {
        ERR_clear_error()
        guard let method = datagramMethod else { throw .configuration("cannot create the datagram BIO method") }
        guard let ssl = SSL_new(context.ctx) else { throw .configuration("cannot create a DTLS session") }
        guard let input = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .configuration("cannot create a memory BIO")
        }
        guard let output = BIO_new(method) else {
            BIO_free(input)
            SSL_free(ssl)
            throw .configuration("cannot create a datagram BIO")
        }
        sink = DatagramSink(mtu: settings.mtu)
        BIO_set_data(output, Unmanaged.passUnretained(sink).toOpaque())  // `sink` outlives the SSL (deinit)
        SSL_set_bio(ssl, input, output)
        self.ssl = ssl
        self.input = input
        self.role = role
        expected = DTLSFingerprint.strongest(peerFingerprints)
        initialTimeoutMicros = UInt32(clamping: Int((settings.initialRetransmitTimeout * 1e6).rounded()))
        guard COpenSSL_SSL_set_mtu(ssl, settings.mtu) > 0 else {  // the MTU on success, 0 below the minimum
            throw .configuration("MTU \(settings.mtu) is too small for DTLS")
        }
        // The verify and timer callbacks find us through the SSL's app data (slot 0).
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        DTLS_set_timer_cb(ssl) { ssl, previous in
            guard previous > 0 else {
                guard let ssl, let owner = SSL_get_ex_data(ssl, 0) else { return 1_000_000 }
                return max(1_000, Unmanaged<DTLSSession>.fromOpaque(owner).takeUnretainedValue().initialTimeoutMicros)
            }
            return min(previous > UInt32.max / 2 ? UInt32.max : previous * 2, 60_000_000)  // RFC 6347 §4.2.4.1
        }
        if role == .client { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
    }

    deinit { SSL_free(ssl) }  // frees the BIOs too

    /// One datagram from the peer.
    func feed(_ datagram: UnsafeRawBufferPointer) {
        guard let base = datagram.baseAddress, datagram.count > 0 else { return }
        _ = BIO_write(input, base, Int32(clamping: datagram.count))
    }

    /// Datagrams to send, each one UDP payload of at most the MTU.
    func takeDatagrams() -> [[UInt8]] { sink.take() }

    /// Drops what OpenSSL queued (a Finished we will not send after a failed check).
    func discardOutput() { _ = sink.take() }

    func handshake() -> Progress {
        ERR_clear_error()
        let rc = SSL_do_handshake(ssl)
        if rc == 1 { return .done }
        let error = SSL_get_error(ssl, rc)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .wantMore }
        if error == SSL_ERROR_ZERO_RETURN { return .failed(.closedByPeer) }
        // A dropped record (see `drain`); the handshake goes on.
        if error == SSL_ERROR_SYSCALL, ERR_peek_error() == 0, mismatch == nil { return .wantMore }
        return .failed(classify())
    }

    enum Drain: Equatable {
        case open
        case closed
        case failed(DTLSFailure)
    }

    /// After the handshake: lets OpenSSL answer a peer's retransmitted last flight and read
    /// alerts; application data (none in DTLS-SRTP without SCTP) is dropped.
    func drain() -> Drain {
        withUnsafeTemporaryAllocation(byteCount: 2048, alignment: 16) { buffer in
            while true {
                ERR_clear_error()
                let n = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
                if n > 0 { continue }
                let error = SSL_get_error(ssl, n)
                if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .open }
                if error == SSL_ERROR_ZERO_RETURN { return .closed }
                let code = Self.lastCode()
                // A record OpenSSL dropped (one that does not decrypt, say) can end SSL_read
                // with SSL_ERROR_SYSCALL and no error: our BIOs have no system calls to fail.
                if error == SSL_ERROR_SYSCALL, code == 0 { return .open }
                return .failed(.alert(code == 0 ? "connection broken" : Self.reason(code)))
            }
        }
    }

    /// Seconds until OpenSSL's retransmission timer fires; nil when none runs.
    func retransmitTimeLeft() -> Double? {
        var left = timeval()
        guard COpenSSL_DTLSv1_get_timeout(ssl, &left) == 1 else { return nil }
        return Double(left.tv_sec) + Double(left.tv_usec) / 1e6
    }

    /// Retransmits the last flight if the timer expired; the failure if OpenSSL gave up.
    func handleTimeout() -> DTLSFailure? {
        ERR_clear_error()
        return COpenSSL_DTLSv1_handle_timeout(ssl) < 0 ? classify() : nil
    }

    /// The shortest record in an epoch above 0 that OpenSSL 3.0 can take without failing
    /// the whole association: an AEAD record shorter than its explicit nonce and tag (24
    /// bytes for AES-GCM, 16 for ChaCha20-Poly1305) is a fatal "internal error" there, not a
    /// dropped record, so `DTLSTransport` drops such records first. nil while no cipher is
    /// negotiated (no protected record can be genuine yet).
    var minimumProtectedRecord: Int? {
        // The cipher chosen in the hellos (pending until ChangeCipherSpec), then the current one.
        guard let cipher = SSL_get_pending_cipher(ssl) ?? SSL_get_current_cipher(ssl) else { return nil }
        guard SSL_CIPHER_is_aead(cipher) == 1 else { return 0 }
        return SSL_CIPHER_get_cipher_nid(cipher) == NID_chacha20_poly1305 ? 16 : 24
    }

    /// Queues our close_notify.
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
    }

    /// The verify callback's check (and the one after the handshake): does the peer's leaf
    /// certificate hash to one of its SDP fingerprints?
    func accepts(_ certificate: OpaquePointer) -> Bool {
        guard let algorithm = expected.first?.algorithm else {
            mismatch = "no fingerprint"
            return false
        }
        guard let actual = fingerprintOf(certificate, algorithm), expected.contains(actual) else {
            mismatch = algorithm.rawValue
            return false
        }
        return true
    }

    /// After the handshake: the peer's certificate checked again (nil when it matches).
    func checkPeer() -> DTLSFailure? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return .noPeerCertificate }
        defer { X509_free(certificate) }
        return accepts(certificate) ? nil : .fingerprintMismatch(mismatch ?? "sha-256")
    }

    /// The negotiated profile and the keys exported for it (RFC 5764 §4.2), in our direction.
    func exportKeys() -> Result<DTLSSRTPKeys, DTLSFailure> {
        guard let selected = SSL_get_selected_srtp_profile(ssl),
            let profile = DTLSSRTPProfile(id: UInt16(truncatingIfNeeded: COpenSSL_srtp_profile_id(selected)))
        else {
            return .failure(.noSRTPProfile)
        }
        var material = [UInt8](repeating: 0, count: DTLSSRTPKeys.materialLength(profile))
        defer { material.withUnsafeMutableBytes { raw in _ = raw.baseAddress.map { memset($0, 0, raw.count) } } }
        let label = "EXTRACTOR-dtls_srtp"
        ERR_clear_error()
        guard SSL_export_keying_material(ssl, &material, material.count, label, label.utf8.count, nil, 0, 0) == 1,
            let keys = DTLSSRTPKeys(profile: profile, material: material, role: role)
        else {
            return .failure(.handshakeFailed("cannot export the SRTP keys: \(TLSContext.lastError())"))
        }
        return .success(keys)
    }

    /// What OpenSSL's error says, in the terms of `DTLSFailure`.
    private func classify() -> DTLSFailure {
        let code = Self.lastCode()
        if let mismatch { return .fingerprintMismatch(mismatch) }
        guard code != 0 else { return .handshakeFailed("no reason given") }
        let reason = ERR_GET_REASON(code)
        guard ERR_GET_LIB(code) == ERR_LIB_SSL else { return .handshakeFailed(Self.reason(code)) }
        switch reason {
        case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_TLSV1_ALERT_UNKNOWN_CA,
            SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED,
            SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, SSL_R_TLSV1_ALERT_ACCESS_DENIED:
            return .certificateRefusedByPeer(TLSSession.alertName(reason))
        case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
            return .noPeerCertificate
        case SSL_R_BAD_SRTP_PROTECTION_PROFILE_LIST, SSL_R_NO_SRTP_PROFILES, SSL_R_SRTP_UNKNOWN_PROTECTION_PROFILE,
            SSL_R_BAD_SRTP_MKI_VALUE:
            return .noSRTPProfile
        case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE,
            SSL_R_VERSION_TOO_LOW, SSL_R_VERSION_TOO_HIGH, SSL_R_WRONG_VERSION_NUMBER:
            return .protocolVersion
        default:
            return .handshakeFailed(Self.reason(code))
        }
    }

    /// The last error on this thread's queue (0 when none), the queue cleared.
    private static func lastCode() -> UInt {
        var last: UInt = 0
        while case let e = ERR_get_error(), e != 0 { last = e }
        return last
    }

    private static func reason(_ code: UInt) -> String {
        ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
