// Shared by the three primitives and the installer; not part of the module's interface.
#ifndef IRISGW_CSRTP_OPENSSL_INTERNAL_H
#define IRISGW_CSRTP_OPENSSL_INTERNAL_H

#include <srtp2/srtp.h>
#include <srtp2/auth.h>
#include <srtp2/cipher.h>

extern const srtp_cipher_type_t CSRTPOpenSSL_icm_type;
extern const srtp_cipher_type_t CSRTPOpenSSL_gcm_type;
extern const srtp_auth_type_t CSRTPOpenSSL_hmac_type;

#endif
