#ifndef IRISGW_CCIVETWEB_SHIM_H
#define IRISGW_CCIVETWEB_SHIM_H
#include <civetweb.h>
// Fixed-size arrays inside mg_request_info import as 64- and 48-element tuples:
// one accessor each instead of pointer arithmetic in Swift.
static inline const struct mg_header *CCivetWeb_header(const struct mg_request_info *ri, int i) { return &ri->http_headers[i]; }
static inline const char *CCivetWeb_remote_addr(const struct mg_request_info *ri) { return ri->remote_addr; }
#endif
