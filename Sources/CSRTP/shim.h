#ifndef IRISGW_CSRTP_SHIM_H
#define IRISGW_CSRTP_SHIM_H
#include <srtp2/srtp.h>
// srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80 is a macro (a synonym of the RTP default).
static inline void CSRTP_policy_set_aes_cm_128_hmac_sha1_80(srtp_crypto_policy_t *p) { srtp_crypto_policy_set_rtp_default(p); }
// SRTP_MAX_TRAILER_LEN is a macro: what protect may append (tag + MKI).
static inline int CSRTP_max_trailer_length(void) { return SRTP_MAX_TRAILER_LEN; }
#endif
