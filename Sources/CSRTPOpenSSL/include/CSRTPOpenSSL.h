#ifndef IRISGW_CSRTP_OPENSSL_H
#define IRISGW_CSRTP_OPENSSL_H

// libsrtp's AES-ICM-128 cipher and HMAC-SHA1 authenticator on OpenSSL's libcrypto
// (AES-NI, SHA extensions), installed into libsrtp with its srtp_replace_*_type extension
// points. Debian builds libsrtp2 on NSS, whose per-packet cost made SRTP calls about 17 %
// dearer than plain ones; libsrtp still does everything SRTP (key derivation, packet
// format, replay), only these two primitives change. Both pass libsrtp's own self tests
// (RFC 3711 B.2 keystream, RFC 2202 HMAC) before libsrtp takes them.

/// Call once, after srtp_init(). Returns 0 (srtp_err_status_ok) or libsrtp's error code.
int CSRTPOpenSSL_install(void);

#endif
