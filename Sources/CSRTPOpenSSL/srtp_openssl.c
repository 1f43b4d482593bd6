// See include/CSRTPOpenSSL.h. The structures follow libsrtp 2's public cipher.h and auth.h.
#include "CSRTPOpenSSL.h"
#include "internal.h"

#include <string.h>

int CSRTPOpenSSL_install(void) {
    // libsrtp runs each type's self tests (their test_data) before it takes it.
    srtp_err_status_t status = srtp_replace_cipher_type(&CSRTPOpenSSL_icm_type, SRTP_AES_ICM_128);
    if (status == srtp_err_status_ok) status = srtp_replace_cipher_type(&CSRTPOpenSSL_gcm_type, SRTP_AES_GCM_128);
    if (status == srtp_err_status_ok) status = srtp_replace_auth_type(&CSRTPOpenSSL_hmac_type, SRTP_HMAC_SHA1);
    return (int)status;
}

// MARK: Known-answer hooks for the tests: the primitives driven as libsrtp drives them.

int CSRTPOpenSSL_icm_keystream(const uint8_t *key_and_salt, const uint8_t *iv, uint8_t *out, unsigned int length) {
    srtp_cipher_t *c = NULL;
    srtp_err_status_t status = CSRTPOpenSSL_icm_type.alloc(&c, 30, 0);
    if (status != srtp_err_status_ok) return (int)status;
    uint8_t index[16];
    memcpy(index, iv, sizeof(index));
    memset(out, 0, length);
    status = c->type->init(c->state, key_and_salt);
    if (status == srtp_err_status_ok) status = c->type->set_iv(c->state, index, srtp_direction_encrypt);
    // In two calls, the first ending inside a block, as a continued stream must.
    unsigned int first = length / 2 + (length > 2 ? 1 : 0), rest = length - first;
    if (status == srtp_err_status_ok) status = c->type->encrypt(c->state, out, &first);
    if (status == srtp_err_status_ok) status = c->type->encrypt(c->state, out + first, &rest);
    c->type->dealloc(c);
    return (int)status;
}

int CSRTPOpenSSL_hmac_sha1(const uint8_t *key, int key_length, const uint8_t *data, int length, uint8_t *tag) {
    srtp_auth_t *a = NULL;
    srtp_err_status_t status = CSRTPOpenSSL_hmac_type.alloc(&a, key_length, 20);
    if (status != srtp_err_status_ok) return (int)status;
    status = a->type->init(a->state, key, key_length);
    // Twice over, with start, update and compute: a restart must forget the first message.
    for (int round = 0; round < 2 && status == srtp_err_status_ok; round++) {
        status = a->type->start(a->state);
        if (status == srtp_err_status_ok) status = a->type->update(a->state, data, length / 2);
        if (status == srtp_err_status_ok) status = a->type->compute(a->state, data + length / 2, length - length / 2, 20, tag);
    }
    a->type->dealloc(a);
    return (int)status;
}

int CSRTPOpenSSL_gcm(
    int encrypt, const uint8_t *key_and_salt, const uint8_t *iv, const uint8_t *aad, unsigned int aad_length,
    uint8_t *buffer, unsigned int *length) {
    srtp_cipher_t *c = NULL;
    srtp_err_status_t status = CSRTPOpenSSL_gcm_type.alloc(&c, 28, 16);
    if (status != srtp_err_status_ok) return (int)status;
    uint8_t nonce[12];
    memcpy(nonce, iv, sizeof(nonce));
    status = c->type->init(c->state, key_and_salt);
    if (status == srtp_err_status_ok) {
        status = c->type->set_iv(c->state, nonce, encrypt ? srtp_direction_encrypt : srtp_direction_decrypt);
    }
    if (status == srtp_err_status_ok) status = c->type->set_aad(c->state, aad, aad_length);
    if (status == srtp_err_status_ok && encrypt) {
        status = c->type->encrypt(c->state, buffer, length);
        uint32_t tag_length = 0;
        if (status == srtp_err_status_ok) status = c->type->get_tag(c->state, buffer + *length, &tag_length);
        if (status == srtp_err_status_ok) *length += tag_length;
    } else if (status == srtp_err_status_ok) {
        status = c->type->decrypt(c->state, buffer, length);
    }
    c->type->dealloc(c);
    return (int)status;
}

int CSRTPOpenSSL_self_test(void) {
    srtp_err_status_t status = srtp_cipher_type_self_test(&CSRTPOpenSSL_icm_type);
    if (status == srtp_err_status_ok) status = srtp_cipher_type_self_test(&CSRTPOpenSSL_gcm_type);
    if (status == srtp_err_status_ok) status = srtp_auth_type_self_test(&CSRTPOpenSSL_hmac_type);
    return (int)status;
}
