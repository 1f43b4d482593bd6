#ifndef IRISGW_COPENSSL_SHIM_H
#define IRISGW_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/srtp.h>
#include <openssl/bn.h>

// Macros and variadic calls of libssl, wrapped as functions Swift can import
// (Sources/TLS/OpenSSLTLS.swift and Sources/TLS/OpenSSLDTLS.swift are their only users).

static inline long COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long COpenSSL_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

static inline long COpenSSL_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline int COpenSSL_TLS1_2_VERSION(void) { return TLS1_2_VERSION; }
static inline int COpenSSL_TLS1_3_VERSION(void) { return TLS1_3_VERSION; }
static inline int COpenSSL_SSL_VERIFY_PEER(void) { return SSL_VERIFY_PEER; }
static inline int COpenSSL_SSL_VERIFY_FAIL_IF_NO_PEER_CERT(void) { return SSL_VERIFY_FAIL_IF_NO_PEER_CERT; }
static inline long COpenSSL_SSL_MODE_ENABLE_PARTIAL_WRITE(void) { return SSL_MODE_ENABLE_PARTIAL_WRITE; }
static inline long COpenSSL_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER(void) { return SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER; }
static inline long COpenSSL_SSL_SESS_CACHE_OFF(void) { return SSL_SESS_CACHE_OFF; }
static inline long COpenSSL_SSL_SESS_CACHE_SERVER(void) { return SSL_SESS_CACHE_SERVER; }
static inline unsigned long COpenSSL_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline int COpenSSL_GEN_DNS(void) { return GEN_DNS; }
static inline int COpenSSL_GEN_URI(void) { return GEN_URI; }
static inline int COpenSSL_GEN_IPADD(void) { return GEN_IPADD; }

// The subjectAltName entries of a certificate (a STACK_OF(GENERAL_NAME) whose accessors are macros).
static inline GENERAL_NAMES *COpenSSL_subject_alt_names(X509 *cert) {
    return (GENERAL_NAMES *)X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
}
static inline int COpenSSL_general_names_count(GENERAL_NAMES *names) { return sk_GENERAL_NAME_num(names); }
static inline GENERAL_NAME *COpenSSL_general_names_at(GENERAL_NAMES *names, int i) { return sk_GENERAL_NAME_value(names, i); }
static inline void COpenSSL_general_names_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }
static inline int COpenSSL_general_name_type(const GENERAL_NAME *name) { return name->type; }
// The IA5String (dNSName, URI) or OCTET STRING (iPAddress) of an entry.
static inline ASN1_STRING *COpenSSL_general_name_string(GENERAL_NAME *name) {
    switch (name->type) {
    case GEN_DNS: return name->d.dNSName;
    case GEN_URI: return name->d.uniformResourceIdentifier;
    case GEN_IPADD: return name->d.iPAddress;
    default: return NULL;
    }
}

// DTLS (OpenSSLDTLS.swift): the MTU, the retransmission timer, the SRTP profile's id.
static inline int COpenSSL_DTLS1_2_VERSION(void) { return DTLS1_2_VERSION; }
static inline uint64_t COpenSSL_SSL_OP_NO_QUERY_MTU(void) { return SSL_OP_NO_QUERY_MTU; }
static inline uint64_t COpenSSL_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }
static inline long COpenSSL_SSL_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
// 1 and the time left in *left while a retransmission timer runs; 0 when none does.
static inline long COpenSSL_DTLSv1_get_timeout(SSL *ssl, struct timeval *left) { return DTLSv1_get_timeout(ssl, left); }
// 1 after a retransmission, 0 when the timer had not expired, -1 on a fatal error.
static inline long COpenSSL_DTLSv1_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
static inline unsigned long COpenSSL_srtp_profile_id(const SRTP_PROTECTION_PROFILE *profile) { return profile->id; }
#endif
