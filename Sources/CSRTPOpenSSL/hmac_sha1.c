// HMAC-SHA1 (RFC 2104) for libsrtp, the tag truncated to what the suite asks for. The
// SHA-1 states after the inner and outer padded keys are computed once per key; a packet
// starts from a struct copy of the inner one. OpenSSL's EVP_MAC restarts by duplicating a
// provider context (malloc, copy, cleanse, free) on every packet. SHA1_Init/Update/Final
// are deprecated in OpenSSL 3 but kept, and run the same SHA-NI code as the provider.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

typedef struct {
    SHA_CTX inner;    // after key XOR ipad
    SHA_CTX outer;    // after key XOR opad
    SHA_CTX message;  // the packet being tagged
} hmac_state;

static srtp_err_status_t hmac_alloc(srtp_auth_pointer_t *ap, int key_len, int out_len) {
    if (key_len < 0 || out_len < 0 || out_len > SHA_DIGEST_LENGTH) return srtp_err_status_bad_param;
    srtp_auth_t *a = calloc(1, sizeof(srtp_auth_t));
    hmac_state *s = calloc(1, sizeof(hmac_state));
    if (a == NULL || s == NULL) {
        free(a);
        free(s);
        return srtp_err_status_alloc_fail;
    }
    a->type = &CSRTPOpenSSL_hmac_type;
    a->state = s;
    a->out_len = out_len;
    a->key_len = key_len;
    a->prefix_len = 0;
    *ap = a;
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_dealloc(srtp_auth_pointer_t a) {
    OPENSSL_cleanse(a->state, sizeof(hmac_state));
    free(a->state);
    free(a);
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_init(void *state, const uint8_t *key, int key_len) {
    hmac_state *s = state;
    uint8_t block[SHA_CBLOCK] = {0}, pad[SHA_CBLOCK];
    if (key_len < 0) return srtp_err_status_bad_param;
    // RFC 2104: a key longer than a block is hashed first.
    if (key_len > SHA_CBLOCK) {
        SHA1(key, (size_t)key_len, block);
    } else if (key_len > 0) {
        memcpy(block, key, (size_t)key_len);
    }
    for (int i = 0; i < SHA_CBLOCK; i++) pad[i] = block[i] ^ 0x36;
    SHA1_Init(&s->inner);
    SHA1_Update(&s->inner, pad, SHA_CBLOCK);
    for (int i = 0; i < SHA_CBLOCK; i++) pad[i] = block[i] ^ 0x5c;
    SHA1_Init(&s->outer);
    SHA1_Update(&s->outer, pad, SHA_CBLOCK);
    s->message = s->inner;
    OPENSSL_cleanse(block, sizeof(block));
    OPENSSL_cleanse(pad, sizeof(pad));
    return srtp_err_status_ok;
}

// A new message with the same key.
static srtp_err_status_t hmac_start(void *state) {
    hmac_state *s = state;
    s->message = s->inner;
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_update(void *state, const uint8_t *buffer, int octets) {
    hmac_state *s = state;
    if (octets < 0) return srtp_err_status_bad_param;
    SHA1_Update(&s->message, buffer, (size_t)octets);
    return srtp_err_status_ok;
}

static srtp_err_status_t hmac_compute(void *state, const uint8_t *buffer, int octets, int tag_len, uint8_t *tag) {
    hmac_state *s = state;
    uint8_t digest[SHA_DIGEST_LENGTH];
    if (octets < 0 || tag_len < 0 || tag_len > SHA_DIGEST_LENGTH) return srtp_err_status_bad_param;
    SHA1_Update(&s->message, buffer, (size_t)octets);
    SHA1_Final(digest, &s->message);
    SHA_CTX outer = s->outer;
    SHA1_Update(&outer, digest, sizeof(digest));
    SHA1_Final(digest, &outer);
    memcpy(tag, digest, (size_t)tag_len);
    return srtp_err_status_ok;
}

// RFC 2202 test cases 1 and 6 (a key longer than a block), chained.
static const uint8_t hmac_test_key_6[80] = {
    0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
static const uint8_t hmac_test_data_6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
static const uint8_t hmac_test_tag_6[20] = {
    0xaa, 0x4a, 0xe5, 0xe1, 0x52, 0x72, 0xd0, 0x0e, 0x95, 0x70, 0x56, 0x37, 0xce, 0x8a, 0x3b, 0x55, 0xed, 0x40, 0x21, 0x12};
static const srtp_auth_test_case_t hmac_test_6 = {
    80, hmac_test_key_6, 54, hmac_test_data_6, 20, hmac_test_tag_6, NULL};

static const uint8_t hmac_test_key_1[20] = {
    0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b};
static const uint8_t hmac_test_data_1[8] = {'H', 'i', ' ', 'T', 'h', 'e', 'r', 'e'};
static const uint8_t hmac_test_tag_1[20] = {
    0xb6, 0x17, 0x31, 0x86, 0x55, 0x05, 0x72, 0x64, 0xe2, 0x8b, 0xc0, 0xb6, 0xfb, 0x37, 0x8c, 0x8e, 0xf1, 0x46, 0xbe, 0x00};
static const srtp_auth_test_case_t hmac_test = {
    20, hmac_test_key_1, 8, hmac_test_data_1, 20, hmac_test_tag_1, &hmac_test_6};

const srtp_auth_type_t CSRTPOpenSSL_hmac_type = {
    hmac_alloc, hmac_dealloc, hmac_init, hmac_compute, hmac_update, hmac_start,
    "HMAC-SHA1 (OpenSSL SHA-1, precomputed pads)", &hmac_test, SRTP_HMAC_SHA1};
