#ifndef IRISGW_CHIREDIS_SHIM_H
#define IRISGW_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
// redisReaderGetError is a macro over a char array Swift imports as a tuple, and the unread
// byte count has no accessor at all: one inline function each.
static inline const char *CHiredis_readerError(const redisReader *r) { return r->errstr; }
static inline size_t CHiredis_readerUnread(const redisReader *r) { return r->len - r->pos; }
static inline int CHiredis_readerFailed(const redisReader *r) { return r->err != 0; }
#endif
