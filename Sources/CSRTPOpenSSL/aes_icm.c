// AES-ICM-128 (RFC 3711 §4.1.1) for libsrtp: the keystream is AES-128 of the counter
// blocks salt XOR index, +1, +2 ... made with one ECB call per packet on a context keyed
// once per session. A counter-mode context would need its IV set per packet, an
// EVP_EncryptInit_ex that costs more than the packet's AES itself.
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

enum { ICM_KEY = 16, ICM_SALT = 14, ICM_KEY_WITH_SALT = ICM_KEY + ICM_SALT, BLOCK = 16, CHUNK_BLOCKS = 32 };

typedef struct {
    uint8_t offset[BLOCK];   // the salt, two zero octets after it
    uint8_t counter[BLOCK];  // the next block's counter
    uint8_t spare[BLOCK];    // keystream left over from a partial block
    unsigned spare_used;     // bytes of `spare` already used (BLOCK: none left)
    EVP_CIPHER_CTX *ecb;
} icm_state;

static srtp_err_status_t icm_alloc(srtp_cipher_pointer_t *cp, int key_len, int tag_len) {
    (void)tag_len;
    if (key_len != ICM_KEY_WITH_SALT) return srtp_err_status_bad_param;
    srtp_cipher_t *c = calloc(1, sizeof(srtp_cipher_t));
    icm_state *s = calloc(1, sizeof(icm_state));
    if (c == NULL || s == NULL || (s->ecb = EVP_CIPHER_CTX_new()) == NULL) {
        free(c);
        free(s);
        return srtp_err_status_alloc_fail;
    }
    s->spare_used = BLOCK;
    c->type = &CSRTPOpenSSL_icm_type;
    c->state = s;
    c->key_len = key_len;
    c->algorithm = SRTP_AES_ICM_128;
    *cp = c;
    return srtp_err_status_ok;
}

static srtp_err_status_t icm_dealloc(srtp_cipher_pointer_t c) {
    icm_state *s = c->state;
    EVP_CIPHER_CTX_free(s->ecb);
    OPENSSL_cleanse(s, sizeof(*s));
    free(s);
    free(c);
    return srtp_err_status_ok;
}

static srtp_err_status_t icm_init(void *state, const uint8_t *key) {
    icm_state *s = state;
    memset(s->offset, 0, sizeof(s->offset));
    memcpy(s->offset, key + ICM_KEY, ICM_SALT);
    s->spare_used = BLOCK;
    if (!EVP_EncryptInit_ex(s->ecb, EVP_aes_128_ecb(), NULL, key, NULL) || !EVP_CIPHER_CTX_set_padding(s->ecb, 0)) {
        return srtp_err_status_init_fail;
    }
    return srtp_err_status_ok;
}

static srtp_err_status_t icm_set_iv(void *state, uint8_t *iv, srtp_cipher_direction_t direction) {
    (void)direction;
    icm_state *s = state;
    for (int i = 0; i < BLOCK; i++) s->counter[i] = s->offset[i] ^ iv[i];
    s->spare_used = BLOCK;
    return srtp_err_status_ok;
}

// The 128-bit counter, big-endian, plus one.
static inline void increment(uint8_t counter[BLOCK]) {
    for (int i = BLOCK - 1; i >= 0; i--) {
        if (++counter[i] != 0) break;
    }
}

static inline void xor_into(uint8_t *buffer, const uint8_t *keystream, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, buffer + i, 8);
        memcpy(&b, keystream + i, 8);
        a ^= b;
        memcpy(buffer + i, &a, 8);
    }
    for (; i < n; i++) buffer[i] ^= keystream[i];
}

// Counter mode: encrypting and decrypting are the same XOR with the keystream, in place;
// a call may end inside a block and the next continue from there.
static srtp_err_status_t icm_crypt(void *state, uint8_t *buffer, unsigned int *octets) {
    icm_state *s = state;
    size_t left = *octets;
    while (left > 0 && s->spare_used < BLOCK) {
        *buffer++ ^= s->spare[s->spare_used++];
        left--;
    }
    uint8_t counters[CHUNK_BLOCKS * BLOCK], keystream[CHUNK_BLOCKS * BLOCK];
    while (left > 0) {
        size_t blocks = (left + BLOCK - 1) / BLOCK;
        if (blocks > CHUNK_BLOCKS) blocks = CHUNK_BLOCKS;
        for (size_t b = 0; b < blocks; b++) {
            memcpy(counters + b * BLOCK, s->counter, BLOCK);
            increment(s->counter);
        }
        int out = 0;
        if (!EVP_EncryptUpdate(s->ecb, keystream, &out, counters, (int)(blocks * BLOCK)) ||
            out != (int)(blocks * BLOCK)) {
            return srtp_err_status_cipher_fail;
        }
        size_t n = left < blocks * BLOCK ? left : blocks * BLOCK;
        xor_into(buffer, keystream, n);
        buffer += n;
        left -= n;
        if (n % BLOCK != 0) {
            // Keep the rest of the last block for a call that continues the stream.
            memcpy(s->spare, keystream + (n / BLOCK) * BLOCK, BLOCK);
            s->spare_used = (unsigned)(n % BLOCK);
        }
    }
    OPENSSL_cleanse(keystream, sizeof(keystream));
    return srtp_err_status_ok;
}

// RFC 3711 B.2: the first three keystream blocks for this key and salt at index 0.
static const uint8_t icm_test_key[ICM_KEY_WITH_SALT] = {
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd};
static uint8_t icm_test_index[16] = {0};
static const uint8_t icm_test_plaintext[48] = {0};
static const uint8_t icm_test_ciphertext[48] = {
    0xe0, 0x3e, 0xad, 0x09, 0x35, 0xc9, 0x5e, 0x80, 0xe1, 0x66, 0xb1, 0x6d, 0xd9, 0x2b, 0x4e, 0xb4,
    0xd2, 0x35, 0x13, 0x16, 0x2b, 0x02, 0xd0, 0xf7, 0x2a, 0x43, 0xa2, 0xfe, 0x4a, 0x5f, 0x97, 0xab,
    0x41, 0xe9, 0x5b, 0x3b, 0xb0, 0xa2, 0xe8, 0xdd, 0x47, 0x79, 0x01, 0xe4, 0xfc, 0xa8, 0x94, 0xc0};
static const srtp_cipher_test_case_t icm_test = {
    ICM_KEY_WITH_SALT, icm_test_key, icm_test_index, 48, icm_test_plaintext, 48, icm_test_ciphertext, 0, NULL, 0, NULL};

const srtp_cipher_type_t CSRTPOpenSSL_icm_type = {
    icm_alloc, icm_dealloc, icm_init, NULL, icm_crypt, icm_crypt, icm_set_iv, NULL,
    "AES-128 counter mode (OpenSSL, ECB keystream)", &icm_test, SRTP_AES_ICM_128};
