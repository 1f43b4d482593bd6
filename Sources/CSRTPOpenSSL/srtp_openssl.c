// See include/CSRTPOpenSSL.h. The structures follow libsrtp 2's public cipher.h and auth.h.
#include "CSRTPOpenSSL.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <srtp2/srtp.h>
#include <srtp2/auth.h>
#include <srtp2/cipher.h>

// MARK: AES-ICM-128 (RFC 3711 §4.1.1): AES-128 in counter mode, IV = salt XOR index.

enum { ICM_KEY = 16, ICM_SALT = 14, ICM_KEY_WITH_SALT = ICM_KEY + ICM_SALT };

typedef struct {
    uint8_t offset[16];   // the salt, two zero octets after it
    EVP_CIPHER_CTX *ctx;
} icm_state;

static const srtp_cipher_type_t icm_type;

static srtp_err_status_t icm_alloc(srtp_cipher_pointer_t *cp, int key_len, int tag_len) {
    (void)tag_len;
    if (key_len != ICM_KEY_WITH_SALT) return srtp_err_status_bad_param;
    srtp_cipher_t *c = calloc(1, sizeof(srtp_cipher_t));
    icm_state *s = calloc(1, sizeof(icm_state));
    if (c == NULL || s == NULL || (s->ctx = EVP_CIPHER_CTX_new()) == NULL) {
        free(c);
        free(s);
        return srtp_err_status_alloc_fail;
    }
    c->type = &icm_type;
    c->state = s;
    c->key_len = key_len;
    c->algorithm = SRTP_AES_ICM_128;
    *cp = c;
    return srtp_err_status_ok;
}

static srtp_err_status_t icm_dealloc(srtp_cipher_pointer_t c) {
    icm_state *s = c->state;
    EVP_CIPHER_CTX_free(s->ctx);
    memset(s, 0, sizeof(*s));
    free(s);
    free(c);
    return srtp_err_status_ok;
}

static srtp_err_status_t icm_init(void *state, const uint8_t *key) {
    icm_state *s = state;
    memset(s->offset, 0, sizeof(s->offset));
    memcpy(s->offset, key + ICM_KEY, ICM_SALT);
    if (!EVP_EncryptInit_ex(s->ctx, EVP_aes_128_ctr(), NULL, key, NULL)) return srtp_err_status_init_fail;
    return srtp_err_status_ok;
}

static srtp_err_status_t icm_set_iv(void *state, uint8_t *iv, srtp_cipher_direction_t direction) {
    (void)direction;
    icm_state *s = state;
    uint8_t counter[16];
    for (int i = 0; i < 16; i++) counter[i] = s->offset[i] ^ iv[i];
    if (!EVP_EncryptInit_ex(s->ctx, NULL, NULL, NULL, counter)) return srtp_err_status_fail;
    return srtp_err_status_ok;
}

// Counter mode: encrypting and decrypting are the same XOR with the keystream, in place.
static srtp_err_status_t icm_crypt(void *state, uint8_t *buffer, unsigned int *octets) {
    icm_state *s = state;
    int out = 0;
    if (!EVP_EncryptUpdate(s->ctx, buffer, &out, buffer, (int)*octets)) return srtp_err_status_cipher_fail;
    *octets = (unsigned int)out;
    return srtp_err_status_ok;
}

// RFC 3711 B.2: the first two keystream blocks for this key and salt at index 0.
static const uint8_t icm_test_key[ICM_KEY_WITH_SALT] = {
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd};
static uint8_t icm_test_index[16] = {0};
static const uint8_t icm_test_plaintext[32] = {0};
static const uint8_t icm_test_ciphertext[32] = {
    0xe0, 0x3e, 0xad, 0x09, 0x35, 0xc9, 0x5e, 0x80, 0xe1, 0x66, 0xb1, 0x6d, 0xd9, 0x2b, 0x4e, 0xb4,
    0xd2, 0x35, 0x13, 0x16, 0x2b, 0x02, 0xd0, 0xf7, 0x2a, 0x43, 0xa2, 0xfe, 0x4a, 0x5f, 0x97, 0xab};
static const srtp_cipher_test_case_t icm_test = {
    ICM_KEY_WITH_SALT, icm_test_key, icm_test_index, 32, icm_test_plaintext, 32, icm_test_ciphertext, 0, NULL, 0, NULL};

static const srtp_cipher_type_t icm_type = {
    icm_alloc, icm_dealloc, icm_init, NULL, icm_crypt, icm_crypt, icm_set_iv, NULL,
    "AES-128 counter mode (OpenSSL)", &icm_test, SRTP_AES_ICM_128};

// MARK: HMAC-SHA1 (RFC 2104), the tag truncated to what the suite asks for.

typedef struct {
    EVP_MAC_CTX *ctx;
} hmac_state;

static const srtp_auth_type_t hmac_type;
static EVP_MAC *hmac_algorithm;

static srtp_err_status_t hmac_alloc(srtp_auth_pointer_t *ap, int key_len, int out_len) {
    if (key_len < 0 || out_len < 0 || out_len > 20) return srtp_err_status_bad_param;
    srtp_auth_t *a = calloc(1, sizeof(srtp_auth_t));
    hmac_state *s = calloc(1, sizeof(hmac_state));
    if (a == NULL || s == NULL || (s->ctx = EVP_MAC_CTX_new(hmac_algorithm)) == NULL) {
        free(a);
        free(s);
        return srtp_err_status_alloc_fail;
    }
    a->type = &hmac_type;
    a->state = s;
    a->out_len = out_len;
    a->key_len = key_len;
    a->prefix_len = 0;
    *ap = a;
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_dealloc(srtp_auth_pointer_t a) {
    hmac_state *s = a->state;
    EVP_MAC_CTX_free(s->ctx);
    free(s);
    free(a);
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_init(void *state, const uint8_t *key, int key_len) {
    hmac_state *s = state;
    char digest[] = "SHA1";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
    if (!EVP_MAC_init(s->ctx, key, (size_t)key_len, params)) return srtp_err_status_auth_fail;
    return srtp_err_status_ok;
}

// A new message with the same key.
static srtp_err_status_t hmac_start(void *state) {
    hmac_state *s = state;
    if (!EVP_MAC_init(s->ctx, NULL, 0, NULL)) return srtp_err_status_auth_fail;
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_update(void *state, const uint8_t *buffer, int octets) {
    hmac_state *s = state;
    if (!EVP_MAC_update(s->ctx, buffer, (size_t)octets)) return srtp_err_status_auth_fail;
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_compute(void *state, const uint8_t *buffer, int octets, int tag_len, uint8_t *tag) {
    hmac_state *s = state;
    uint8_t full[20];
    size_t length = 0;
    if (tag_len > 20) return srtp_err_status_bad_param;
    if (!EVP_MAC_update(s->ctx, buffer, (size_t)octets) || !EVP_MAC_final(s->ctx, full, &length, sizeof(full)) || length != 20) {
        return srtp_err_status_auth_fail;
    }
    memcpy(tag, full, (size_t)tag_len);
    return srtp_err_status_ok;
}

// RFC 2202 test case 1.
static const uint8_t hmac_test_key[20] = {
    0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b};
static const uint8_t hmac_test_data[8] = {'H', 'i', ' ', 'T', 'h', 'e', 'r', 'e'};
static const uint8_t hmac_test_tag[20] = {
    0xb6, 0x17, 0x31, 0x86, 0x55, 0x05, 0x72, 0x64, 0xe2, 0x8b, 0xc0, 0xb6, 0xfb, 0x37, 0x8c, 0x8e, 0xf1, 0x46, 0xbe, 0x00};
static const srtp_auth_test_case_t hmac_test = {20, hmac_test_key, 8, hmac_test_data, 20, hmac_test_tag, NULL};

static const srtp_auth_type_t hmac_type = {
    hmac_alloc, hmac_dealloc, hmac_init, hmac_compute, hmac_update, hmac_start,
    "HMAC-SHA1 (OpenSSL)", &hmac_test, SRTP_HMAC_SHA1};

int CSRTPOpenSSL_install(void) {
    if (hmac_algorithm == NULL) hmac_algorithm = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (hmac_algorithm == NULL) return srtp_err_status_init_fail;
    srtp_err_status_t status = srtp_replace_cipher_type(&icm_type, SRTP_AES_ICM_128);
    if (status != srtp_err_status_ok) return (int)status;
    return (int)srtp_replace_auth_type(&hmac_type, SRTP_HMAC_SHA1);
}
