#ifndef IRISGW_COPENSSL_SHIM_H
#define IRISGW_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif
