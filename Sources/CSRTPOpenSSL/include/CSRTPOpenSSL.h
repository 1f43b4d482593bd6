#ifndef IRISGW_CSRTP_OPENSSL_H
#define IRISGW_CSRTP_OPENSSL_H

#include <stdint.h>

// libsrtp's AES-ICM-128 and AES-128-GCM ciphers and its HMAC-SHA1 authenticator on
// OpenSSL's libcrypto (AES-NI, PCLMULQDQ, SHA extensions), installed into libsrtp with its
// srtp_replace_*_type extension points. Debian builds libsrtp2 on NSS, whose per-packet
// PKCS#11 calls made SRTP calls about 17 % dearer than plain ones; libsrtp still does
// everything SRTP (key derivation, packet format, replay), only these primitives change.
// Each is keyed once per session and does no allocation and no OpenSSL re-initialisation
// per packet beyond GCM's IV. All pass libsrtp's own self tests (RFC 3711 B.2 keystream,
// RFC 2202 HMAC, RFC 7714 §16.1.1 GCM) before libsrtp takes them.

/// Call once, after srtp_init(). Returns 0 (srtp_err_status_ok) or libsrtp's error code.
int CSRTPOpenSSL_install(void);

/// libsrtp's self tests of the three types (0 when they pass), for the test suite.
int CSRTPOpenSSL_self_test(void);

/// For known-answer tests: `length` octets of AES-ICM keystream for a 30-octet key || salt
/// and a 16-octet index block (RFC 3711 §4.1.1), made in two calls. 0 or libsrtp's error.
int CSRTPOpenSSL_icm_keystream(const uint8_t *key_and_salt, const uint8_t *iv, uint8_t *out, unsigned int length);

/// For known-answer tests: the 20-octet HMAC-SHA1 of `data` (computed twice over through
/// start/update/compute). 0 or libsrtp's error.
int CSRTPOpenSSL_hmac_sha1(const uint8_t *key, int key_length, const uint8_t *data, int length, uint8_t *tag);

/// For known-answer tests: AES-128-GCM in place with a 16-octet tag. `key_and_salt` is 28
/// octets (the salt unused), `iv` 12. Encrypting appends the tag (room for 16 octets after
/// `*length`); decrypting takes ciphertext || tag and leaves the plaintext's length.
/// 0, or libsrtp's error (srtp_err_status_auth_fail, 7, for a tag that does not verify).
int CSRTPOpenSSL_gcm(
    int encrypt, const uint8_t *key_and_salt, const uint8_t *iv, const uint8_t *aad, unsigned int aad_length,
    uint8_t *buffer, unsigned int *length);

#endif
