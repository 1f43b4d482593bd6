#ifndef IRISGW_CARES_SHIM_H
#define IRISGW_CARES_SHIM_H
// c-ares (Debian libc-ares-dev). Only Sources/DNS/CAresChannel.swift uses this module.
#include <sys/time.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <ares.h>

/// The option bits `ares_init_options` reads from our `struct ares_options`: a per-try
/// timeout in milliseconds, the tries per server, and the socket-state callback through
/// which the SIP event loop drives c-ares's sockets.
static inline int CAres_option_mask(void) {
    return ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS;
}

/// Flags: never append search domains (SRV and NAPTR owners are absolute names).
static inline int CAres_flags(void) { return ARES_FLAG_NOSEARCH; }

static inline int CAres_socket_bad(void) { return ARES_SOCKET_BAD; }

static inline int CAres_library_init(void) { return ares_library_init(ARES_LIB_INIT_ALL); }

/// The status codes a query's callback gets (ares.h defines them as macros).
static inline int CAres_success(void) { return ARES_SUCCESS; }
static inline int CAres_enodata(void) { return ARES_ENODATA; }
static inline int CAres_eformerr(void) { return ARES_EFORMERR; }
static inline int CAres_eservfail(void) { return ARES_ESERVFAIL; }
static inline int CAres_enotfound(void) { return ARES_ENOTFOUND; }
static inline int CAres_enotimp(void) { return ARES_ENOTIMP; }
static inline int CAres_erefused(void) { return ARES_EREFUSED; }
static inline int CAres_ebadname(void) { return ARES_EBADNAME; }
static inline int CAres_econnrefused(void) { return ARES_ECONNREFUSED; }
static inline int CAres_etimeout(void) { return ARES_ETIMEOUT; }
static inline int CAres_edestruction(void) { return ARES_EDESTRUCTION; }
static inline int CAres_ecancelled(void) { return ARES_ECANCELLED; }

/// The n-th address of a hostent (NULL past the last), as bytes of h_length.
static inline const char *CAres_hostent_address(const struct hostent *h, int n) {
    return h->h_addr_list[n];
}
#endif
