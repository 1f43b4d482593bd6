import COpenSSL
import Glibc
import IOCore

// libssl, wrapped. This file holds the OpenSSL TLS pointers (SSL_CTX, SSL, BIO, X509) and
// OpenSSLDTLS.swift the DTLS ones; everything above them works with bytes,
// `TLSCertificateNames` and `TLSFailure` (`DTLSFailure`). The DTLS file shares this one's
// `TLSContext.lastError()` and `TLSSession.alertName(_:)`.
//
// A session never touches the socket: it reads and writes two memory BIOs. Ciphertext read
// from the socket goes in with `feed`, ciphertext to write comes out of `takeOutput`. So the
// stream transport keeps one socket path for TCP and TLS (non-blocking reads, its outbox,
// its bounds), and TLS is one more layer between the socket and the framer.
//
// A session is used by one thread at a time (its owner's loop, or a client under a lock):
// OpenSSL's error queue is per thread, and each call clears it first so an old error never
// explains a new failure.

/// An OpenSSL context (SSL_CTX): TLS 1.2 and 1.3 only, the trust to check peers against and
/// our certificate. Sessions made from it hold a reference (OpenSSL counts them), so a
/// reload may replace a context while connections made from the old one go on.
public final class TLSContext: @unchecked Sendable {  // immutable once built; OpenSSL locks its own counts
    public enum Role: Sendable { case client, server }

    public let role: Role
    fileprivate let ctx: OpaquePointer

    /// A client context: the server's chain checked against `caFile` (or the system store),
    /// our certificate and key when configured (for servers that ask for one).
    public init(client settings: TLSClientSettings) throws(TLSFailure) {
        role = .client
        guard let c = SSL_CTX_new(TLS_client_method()) else { throw .configuration("cannot create a TLS context") }
        ctx = c
        try restrictVersions()
        SSL_CTX_set_verify(ctx, COpenSSL_SSL_VERIFY_PEER(), nil)
        try trust(settings.caFile)
        if let certificate = settings.certificateFile {
            try use(certificate: certificate, key: settings.keyFile ?? certificate)
        }
    }

    /// A server context: our certificate and key, and when asked, the clients' certificates
    /// checked against `clientCAFile` (or the system store).
    public init(server settings: TLSServerSettings) throws(TLSFailure) {
        role = .server
        guard let c = SSL_CTX_new(TLS_server_method()) else { throw .configuration("cannot create a TLS context") }
        ctx = c
        try restrictVersions()
        try use(certificate: settings.certificateFile, key: settings.keyFile)
        if settings.verifyClient != .none {
            var mode = COpenSSL_SSL_VERIFY_PEER()
            if settings.verifyClient == .require { mode |= COpenSSL_SSL_VERIFY_FAIL_IF_NO_PEER_CERT() }
            SSL_CTX_set_verify(ctx, mode, nil)
            try trust(settings.clientCAFile)
            // Tell clients which CAs we take, so one with several certificates picks right.
            if let file = settings.clientCAFile, let names = SSL_load_client_CA_file(file) {
                SSL_CTX_set_client_CA_list(ctx, names)
            }
        }
        // Resumed sessions must carry this context's identity (OpenSSL refuses resumption
        // with client verification otherwise).
        let id = Array("irisgw".utf8)
        _ = id.withUnsafeBufferPointer { SSL_CTX_set_session_id_context(ctx, $0.baseAddress, UInt32($0.count)) }
    }

    deinit { SSL_CTX_free(ctx) }

    private func restrictVersions() throws(TLSFailure) {
        guard COpenSSL_SSL_CTX_set_min_proto_version(ctx, COpenSSL_TLS1_2_VERSION()) == 1,
            COpenSSL_SSL_CTX_set_max_proto_version(ctx, COpenSSL_TLS1_3_VERSION()) == 1
        else {
            throw .configuration("cannot restrict the context to TLS 1.2-1.3")
        }
        SSL_CTX_set_options(ctx, UInt64(COpenSSL_SSL_OP_NO_RENEGOTIATION()))
    }

    private func trust(_ caFile: String?) throws(TLSFailure) {
        ERR_clear_error()
        if let caFile {
            guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else {
                throw .configuration("CA file \(caFile): \(TLSContext.lastError())")
            }
        } else if SSL_CTX_set_default_verify_paths(ctx) != 1 {
            throw .configuration("the system trust store: \(TLSContext.lastError())")
        }
    }

    private func use(certificate: String, key: String) throws(TLSFailure) {
        ERR_clear_error()
        guard SSL_CTX_use_certificate_chain_file(ctx, certificate) == 1 else {
            throw .configuration("certificate file \(certificate): \(TLSContext.lastError())")
        }
        guard SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) == 1 else {
            // OpenSSL's reason only (never the file's content).
            let why = TLSContext.lastError()
            if why.contains("mismatch") {
                throw .configuration("key file \(key) does not match the certificate \(certificate)")
            }
            throw .configuration("key file \(key): \(why)")
        }
        guard SSL_CTX_check_private_key(ctx) == 1 else {
            throw .configuration("key file \(key) does not match the certificate \(certificate)")
        }
    }

    /// OpenSSL's reason for the last error on this thread, and the queue cleared.
    static func lastError() -> String {
        var last: UInt = 0
        while case let e = ERR_get_error(), e != 0 { last = e }
        guard last != 0 else { return "unknown error" }
        return ERR_reason_error_string(last).map { String(cString: $0) } ?? "error \(last)"
    }
}

/// One TLS connection's OpenSSL state (SSL with two memory BIOs).
final class TLSSession {
    private let ssl: OpaquePointer
    /// Ciphertext from the peer (owned by `ssl`).
    private let input: OpaquePointer
    /// Ciphertext for the peer (owned by `ssl`).
    private let output: OpaquePointer
    let role: TLSContext.Role

    enum Progress: Equatable {
        case done
        case wantMore
        case failed(TLSFailure)
    }

    enum ReadResult: Equatable {
        case data(Int)
        case wantMore
        /// The peer sent close_notify.
        case closed
        case failed(TLSFailure)
    }

    /// `serverName`: sent as SNI when it is a name (never an IP address, RFC 6066 §3).
    init?(context: TLSContext, serverName: String? = nil) {
        guard let ssl = SSL_new(context.ctx) else { return nil }
        guard let input = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            return nil
        }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            SSL_free(ssl)
            return nil
        }
        SSL_set_bio(ssl, input, output)
        self.ssl = ssl
        self.input = input
        self.output = output
        role = context.role
        if role == .client {
            SSL_set_connect_state(ssl)
            if let serverName, !serverName.isEmpty, !SocketAddress.isNumericHost(serverName) {
                _ = COpenSSL_SSL_set_tlsext_host_name(ssl, serverName)
            }
        } else {
            SSL_set_accept_state(ssl)
        }
    }

    deinit { SSL_free(ssl) }  // frees the BIOs too

    /// Ciphertext read from the socket.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        // A memory BIO grows as needed; it refuses only when memory is exhausted.
        _ = BIO_write(input, base, Int32(bytes.count))
    }

    /// Ciphertext to write to the socket (handshake messages, records, alerts).
    func takeOutput() -> [UInt8] {
        let pending = BIO_ctrl_pending(output)
        guard pending > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: Int(pending))
        let n = out.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
        return n > 0 ? Array(out.prefix(Int(n))) : []
    }

    func handshake() -> Progress {
        ERR_clear_error()
        let rc = SSL_do_handshake(ssl)
        if rc == 1 { return .done }
        let error = SSL_get_error(ssl, rc)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .wantMore }
        return .failed(classify())
    }

    /// Decrypts what has arrived into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        ERR_clear_error()
        let n = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
        if n > 0 { return .data(Int(n)) }
        let error = SSL_get_error(ssl, n)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .wantMore }
        if error == SSL_ERROR_ZERO_RETURN { return .closed }
        return .failed(classify())
    }

    /// Encrypts `bytes` into the output (whole: a memory BIO never blocks); the failure if not.
    func write(_ bytes: UnsafeRawBufferPointer) -> TLSFailure? {
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            let n = SSL_write(ssl, bytes.baseAddress! + offset, Int32(min(bytes.count - offset, 1 << 20)))
            guard n > 0 else { return classify() }
            offset += Int(n)
        }
        return nil
    }

    /// Queues our close_notify in the output.
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
    }

    /// "TLSv1.3" and the like, for logs.
    var version: String { String(cString: SSL_get_version(ssl)) }

    /// The names in the peer's certificate (nil when it sent none).
    var peerNames: TLSCertificateNames? {
        guard let cert = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(cert) }
        var names = TLSCertificateNames(hasSubjectAltName: false)
        if let sans = COpenSSL_subject_alt_names(cert) {
            defer { COpenSSL_general_names_free(sans) }
            names.hasSubjectAltName = true
            for i in 0..<COpenSSL_general_names_count(sans) {
                guard let entry = COpenSSL_general_names_at(sans, i), let value = COpenSSL_general_name_string(entry)
                else { continue }
                let bytes = Self.bytes(of: value)
                switch COpenSSL_general_name_type(entry) {
                case COpenSSL_GEN_DNS():
                    if let text = Self.text(bytes) { names.dnsNames.append(text) }
                case COpenSSL_GEN_URI():
                    if let text = Self.text(bytes) { names.uris.append(text) }
                case COpenSSL_GEN_IPADD():
                    if let text = Self.address(bytes) { names.ipAddresses.append(text) }
                default:
                    break
                }
            }
        }
        if let subject = X509_get_subject_name(cert) {
            var index: Int32 = -1
            while true {
                index = X509_NAME_get_index_by_NID(subject, NID_commonName, index)
                guard index >= 0, let entry = X509_NAME_get_entry(subject, index),
                    let data = X509_NAME_ENTRY_get_data(entry)
                else { break }
                if let text = Self.text(Self.bytes(of: data)) { names.commonNames.append(text) }
            }
        }
        return names
    }

    private static func bytes(of string: UnsafeMutablePointer<ASN1_STRING>) -> [UInt8] {
        let count = Int(ASN1_STRING_length(string))
        guard count > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: count))
    }

    /// A name as text; nil when it hides a NUL or other control byte (a name that would
    /// compare differently in C).
    private static func text(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func address(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        var out = [CChar](repeating: 0, count: 64)
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, raw.baseAddress, &out, socklen_t(out.count))
        }
        return ok == nil ? nil : String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What OpenSSL's error says, in the terms of `TLSFailure`.
    private func classify() -> TLSFailure {
        var code: UInt = 0
        while case let e = ERR_get_error(), e != 0 { code = e }
        let library = code == 0 ? 0 : ERR_GET_LIB(code)
        let reason = code == 0 ? 0 : ERR_GET_REASON(code)
        let certificateAlerts = [
            SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_TLSV1_ALERT_UNKNOWN_CA,
            SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED,
            SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, SSL_R_TLSV1_ALERT_ACCESS_DENIED
        ]
        if library == ERR_LIB_SSL, role == .server, certificateAlerts.contains(reason) {
            // A client's alert about our own certificate.
            return .certificateRefusedByClient(Self.alertName(reason))
        }
        if library == ERR_LIB_SSL {
            switch reason {
            case SSL_R_CERTIFICATE_VERIFY_FAILED:
                return Self.verifyFailure(Int32(SSL_get_verify_result(ssl)))
            case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
                return .noPeerCertificate
            case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
                return SSL_get_certificate(ssl) == nil
                    ? .clientCertificateRequired : .certificateRefusedByPeer("certificate required")
            case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE: return .certificateRefusedByPeer("bad certificate")
            case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED: return .certificateRefusedByPeer("certificate expired")
            case SSL_R_TLSV1_ALERT_UNKNOWN_CA: return .certificateRefusedByPeer("unknown CA")
            case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN: return .certificateRefusedByPeer("certificate unknown")
            case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED: return .certificateRefusedByPeer("certificate revoked")
            case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE: return .certificateRefusedByPeer("unsupported certificate")
            case SSL_R_TLSV1_ALERT_ACCESS_DENIED: return .certificateRefusedByPeer("access denied")
            case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE where role == .client && SSL_get_certificate(ssl) == nil:
                // TLS 1.2 servers answer a missing client certificate with this alert.
                return .handshakeFailed("handshake failure alert (the server may require a client certificate)")
            case SSL_R_WRONG_VERSION_NUMBER, SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST,
                SSL_R_PACKET_LENGTH_TOO_LONG,
                SSL_R_UNKNOWN_PROTOCOL:
                return .notTLS
            case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE,
                SSL_R_VERSION_TOO_LOW, SSL_R_VERSION_TOO_HIGH:
                return .protocolVersion
            default:
                break
            }
        }
        if code == 0 { return .closedDuringHandshake }
        return .handshakeFailed(ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)")
    }

    /// The words of a certificate alert's reason.
    static func alertName(_ reason: Int32) -> String {
        switch reason {
        case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE: "bad certificate"
        case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED: "certificate expired"
        case SSL_R_TLSV1_ALERT_UNKNOWN_CA: "unknown CA"
        case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN: "certificate unknown"
        case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED: "certificate revoked"
        case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE: "unsupported certificate"
        default: "access denied"
        }
    }

    /// A failed chain check (X509_V_ERR_*), classified.
    private static func verifyFailure(_ result: Int32) -> TLSFailure {
        switch result {
        case X509_V_ERR_CERT_HAS_EXPIRED: return .certificateExpired
        case X509_V_ERR_CERT_NOT_YET_VALID: return .certificateNotYetValid
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return .unknownCA
        default:
            return .badCertificate(String(cString: X509_verify_cert_error_string(Int(result))))
        }
    }
}
