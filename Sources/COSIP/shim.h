#ifndef IRISGW_COSIP_SHIM_H
#define IRISGW_COSIP_SHIM_H
// osip needs struct timeval before its headers; do not define OSIP_MONOTHREAD
// (Debian builds osip multi-threaded and the define changes struct layouts).
#include <sys/time.h>
#include <stdlib.h>
#include <osip2/osip.h>
#include <osipparser2/osip_parser.h>

/// osip's trace goes to stdout unless a function is installed; this one drops it.
static void COSIP_silent_trace(const char *fi, int li, osip_trace_level_t level, const char *chfr, va_list ap) {
    (void)fi; (void)li; (void)level; (void)chfr; (void)ap;
}
static inline void COSIP_silence_trace(void) {
    osip_trace_initialize_func(TRACE_LEVEL7, COSIP_silent_trace);
}

static inline int COSIP_is_request(const osip_message_t *m) { return m->status_code == 0; }
static inline const char *COSIP_method(const osip_message_t *m) { return m->sip_method; }
static inline int COSIP_status(const osip_message_t *m) { return m->status_code; }
static inline const char *COSIP_version(const osip_message_t *m) { return m->sip_version; }
static inline osip_uri_t *COSIP_req_uri(const osip_message_t *m) { return m->req_uri; }
static inline osip_call_id_t *COSIP_call_id(const osip_message_t *m) { return m->call_id; }
static inline osip_cseq_t *COSIP_cseq(const osip_message_t *m) { return m->cseq; }
static inline osip_from_t *COSIP_from(const osip_message_t *m) { return m->from; }
static inline osip_to_t *COSIP_to(const osip_message_t *m) { return m->to; }
static inline int COSIP_via_count(const osip_message_t *m) { return osip_list_size(&m->vias); }
static inline osip_content_length_t *COSIP_content_length(const osip_message_t *m) { return m->content_length; }

/// osip_free is a macro over a replaceable global function pointer.
static inline void COSIP_free(void *p) { osip_free(p); }

/// osip's header-name tables must be built once before any parse (osip_init does it too).
static inline void COSIP_parser_init_once(void) {
    static int done = 0;
    if (!__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) parser_init();
}

/// Parses one message into a new osip_message_t; returns 0 on success.
static inline int COSIP_parse(const char *buf, size_t len, osip_message_t **out) {
    osip_message_t *m = NULL;
    COSIP_parser_init_once();
    if (osip_message_init(&m) != 0) return -1;
    if (osip_message_parse(m, buf, len) != 0) { osip_message_free(m); return -2; }
    *out = m;
    return 0;
}
#endif
