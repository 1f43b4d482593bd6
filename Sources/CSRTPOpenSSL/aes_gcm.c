// AEAD_AES_128_GCM (RFC 7714) for libsrtp on OpenSSL's EVP (AES-NI, PCLMULQDQ). Debian's
// libsrtp2 does GCM with NSS, one PK11_Encrypt/PK11_Decrypt per packet (a PKCS#11 context
// made and destroyed each time). Here the key is scheduled once per session; a packet
// sets its IV, the AAD, the payload and takes or checks the tag.
//
// libsrtp 2's calling order: set_iv (with the direction), set_aad (one or more), then
// encrypt + get_tag, or decrypt of the ciphertext with the tag after it.
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

enum { GCM_KEY = 16, GCM_SALT = 12, GCM_KEY_WITH_SALT = GCM_KEY + GCM_SALT, GCM_IV = 12, GCM_MAX_TAG = 16 };

typedef struct {
    EVP_CIPHER_CTX *ctx;
    int tag_len;
    int direction;  // srtp_direction_encrypt / _decrypt after set_iv; _any before
    uint8_t tag[GCM_MAX_TAG];
} gcm_state;

static srtp_err_status_t gcm_alloc(srtp_cipher_pointer_t *cp, int key_len, int tag_len) {
    if (key_len != GCM_KEY_WITH_SALT || (tag_len != 8 && tag_len != 16)) return srtp_err_status_bad_param;
    srtp_cipher_t *c = calloc(1, sizeof(srtp_cipher_t));
    gcm_state *s = calloc(1, sizeof(gcm_state));
    if (c == NULL || s == NULL || (s->ctx = EVP_CIPHER_CTX_new()) == NULL) {
        free(c);
        free(s);
        return srtp_err_status_alloc_fail;
    }
    s->tag_len = tag_len;
    s->direction = srtp_direction_any;
    c->type = &CSRTPOpenSSL_gcm_type;
    c->state = s;
    c->key_len = key_len;
    c->algorithm = SRTP_AES_GCM_128;
    *cp = c;
    return srtp_err_status_ok;
}

static srtp_err_status_t gcm_dealloc(srtp_cipher_pointer_t c) {
    gcm_state *s = c->state;
    EVP_CIPHER_CTX_free(s->ctx);
    OPENSSL_cleanse(s, sizeof(*s));
    free(s);
    free(c);
    return srtp_err_status_ok;
}

// The key only: libsrtp passes key || salt and applies the salt to the IV itself.
static srtp_err_status_t gcm_init(void *state, const uint8_t *key) {
    gcm_state *s = state;
    s->direction = srtp_direction_any;
    if (!EVP_CipherInit_ex(s->ctx, EVP_aes_128_gcm(), NULL, key, NULL, 1)) return srtp_err_status_init_fail;
    return srtp_err_status_ok;
}

static srtp_err_status_t gcm_set_iv(void *state, uint8_t *iv, srtp_cipher_direction_t direction) {
    gcm_state *s = state;
    if (direction != srtp_direction_encrypt && direction != srtp_direction_decrypt) return srtp_err_status_bad_param;
    s->direction = direction;
    // The 12-octet IV (GCM's default length) on the already-keyed context.
    if (!EVP_CipherInit_ex(s->ctx, NULL, NULL, NULL, iv, direction == srtp_direction_encrypt)) {
        return srtp_err_status_init_fail;
    }
    return srtp_err_status_ok;
}

static srtp_err_status_t gcm_set_aad(void *state, const uint8_t *aad, uint32_t aad_len) {
    gcm_state *s = state;
    int out = 0;
    if (s->direction == srtp_direction_any) return srtp_err_status_bad_param;
    if (aad_len > 0 && !EVP_CipherUpdate(s->ctx, NULL, &out, aad, (int)aad_len)) return srtp_err_status_algo_fail;
    return srtp_err_status_ok;
}

// Encrypts in place and computes the tag, which get_tag hands out. A NULL buffer of 0
// octets (SRTCP without confidentiality) only computes the tag over the AAD.
static srtp_err_status_t gcm_encrypt(void *state, uint8_t *buffer, unsigned int *octets) {
    gcm_state *s = state;
    uint8_t end[GCM_MAX_TAG];
    int out = 0;
    if (s->direction != srtp_direction_encrypt) return srtp_err_status_bad_param;
    if (*octets > 0 && (buffer == NULL || !EVP_EncryptUpdate(s->ctx, buffer, &out, buffer, (int)*octets))) {
        return srtp_err_status_cipher_fail;
    }
    if (!EVP_EncryptFinal_ex(s->ctx, end, &out) ||
        !EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_GET_TAG, s->tag_len, s->tag)) {
        return srtp_err_status_cipher_fail;
    }
    return srtp_err_status_ok;
}

static srtp_err_status_t gcm_get_tag(void *state, uint8_t *tag, uint32_t *len) {
    gcm_state *s = state;
    memcpy(tag, s->tag, (size_t)s->tag_len);
    *len = (uint32_t)s->tag_len;
    return srtp_err_status_ok;
}

// `octets` counts the ciphertext and the tag after it; on success it is the plaintext's.
static srtp_err_status_t gcm_decrypt(void *state, uint8_t *buffer, unsigned int *octets) {
    gcm_state *s = state;
    uint8_t end[GCM_MAX_TAG];
    int out = 0;
    if (s->direction != srtp_direction_decrypt || buffer == NULL) return srtp_err_status_bad_param;
    if (*octets < (unsigned int)s->tag_len) return srtp_err_status_auth_fail;
    unsigned int length = *octets - (unsigned int)s->tag_len;
    if (!EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_SET_TAG, s->tag_len, buffer + length)) {
        return srtp_err_status_auth_fail;
    }
    if (length > 0 && !EVP_DecryptUpdate(s->ctx, buffer, &out, buffer, (int)length)) {
        return srtp_err_status_auth_fail;
    }
    if (EVP_DecryptFinal_ex(s->ctx, end, &out) <= 0) return srtp_err_status_auth_fail;
    *octets = length;
    return srtp_err_status_ok;
}

// RFC 7714 §16.1.1: the RTP packet of §16.1 under the session key, with the IV of §16.1
// (salt XOR SSRC, ROC, SEQ); the AAD is its 12-octet header, the result ciphertext || tag.
static const uint8_t gcm_test_key[GCM_KEY_WITH_SALT] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x51, 0x75, 0x69, 0x64, 0x20, 0x70, 0x72, 0x6f, 0x20, 0x71, 0x75, 0x6f};
static uint8_t gcm_test_iv[16] = {0x51, 0x75, 0x3c, 0x65, 0x80, 0xc2, 0x72, 0x6f, 0x20, 0x71, 0x84, 0x14};
static const uint8_t gcm_test_aad[12] = {0x80, 0x40, 0xf1, 0x7b, 0x80, 0x41, 0xf8, 0xd3, 0x55, 0x01, 0xa0, 0xb2};
static const uint8_t gcm_test_plaintext[38] = "Gallia est omnis divisa in partes tres";
static const uint8_t gcm_test_ciphertext[54] = {
    0xf2, 0x4d, 0xe3, 0xa3, 0xfb, 0x34, 0xde, 0x6c, 0xac, 0xba, 0x86, 0x1c, 0x9d, 0x7e, 0x4b, 0xca, 0xbe, 0x63,
    0x3b, 0xd5, 0x0d, 0x29, 0x4e, 0x6f, 0x42, 0xa5, 0xf4, 0x7a, 0x51, 0xc7, 0xd1, 0x9b, 0x36, 0xde, 0x3a, 0xdf,
    0x88, 0x33, 0x89, 0x9d, 0x7f, 0x27, 0xbe, 0xb1, 0x6a, 0x91, 0x52, 0xcf, 0x76, 0x5e, 0xe4, 0x39, 0x0c, 0xce};
static const srtp_cipher_test_case_t gcm_test = {
    GCM_KEY_WITH_SALT, gcm_test_key, gcm_test_iv, 38, gcm_test_plaintext, 54, gcm_test_ciphertext, 12, gcm_test_aad,
    16, NULL};

const srtp_cipher_type_t CSRTPOpenSSL_gcm_type = {
    gcm_alloc, gcm_dealloc, gcm_init, gcm_set_aad, gcm_encrypt, gcm_decrypt, gcm_set_iv, gcm_get_tag,
    "AES-128 GCM (OpenSSL)", &gcm_test, SRTP_AES_GCM_128};
