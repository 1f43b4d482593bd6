// Linked into the SIP fuzz binary only (`make fuzz`), never into irisgw. Not a Swift
// package target: Package.swift does not see Fuzz/.
//
// A virtual CLOCK_MONOTONIC for the sequence fuzzer (FuzzSIPSession.swift). The SIP event
// loop (EventLoop.now), its timer heap and osip's transaction timers (osip_gettimeofday) all
// read CLOCK_MONOTONIC through clock_gettime; defining it here overrides the C library's
// (and AddressSanitizer's weak interceptor) for the whole process. Once frozen, the clock
// moves only when the harness advances it, so Timer E/F/H/J, 2xx and reliable-provisional
// retransmissions, session timers and bans run in microseconds and in the same order every
// run. libFuzzer itself measures time with system_clock (CLOCK_REALTIME), left alone.
//
// getaddrinfo is refused for every name: fuzzed Contact and Route hosts would otherwise
// become DNS queries. Numeric addresses never reach it (SIPUserAgent.resolve).
//
// LeakSanitizer is told about Swift's weak-reference side tables: the object points to its
// table through a tagged, shifted word LSan does not recognise, so every `weak var` (a
// delegate) would read as a leak. Leaks of anything else, retain cycles included, still fail.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_support.h"

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static _Atomic(clock_gettime_fn) real_clock_gettime;
static _Atomic int frozen;
static _Atomic int64_t virtual_ns;

static int call_real(clockid_t clock, struct timespec *ts) {
    clock_gettime_fn real = atomic_load(&real_clock_gettime);
    if (!real) {
        real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
        if (real) atomic_store(&real_clock_gettime, real);
    }
    if (real) return real(clock, ts);
    return (int)syscall(SYS_clock_gettime, clock, ts);
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    if (clock != CLOCK_MONOTONIC || !atomic_load(&frozen)) return call_real(clock, ts);
    int64_t ns = atomic_load(&virtual_ns);
    ts->tv_sec = (time_t)(ns / 1000000000);
    ts->tv_nsec = (long)(ns % 1000000000);
    return 0;
}

void fuzz_clock_freeze(void) {
    if (atomic_load(&frozen)) return;
    struct timespec now;
    call_real(CLOCK_MONOTONIC, &now);
    atomic_store(&virtual_ns, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
    atomic_store(&frozen, 1);
}

void fuzz_clock_advance(int64_t ns) {
    if (ns > 0) atomic_fetch_add(&virtual_ns, ns);
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res) {
    (void)node; (void)service; (void)hints;
    if (res) *res = NULL;
    return EAI_NONAME;
}

const char *__lsan_default_suppressions(void) {
    return "leak:formWeakReference\n";
}
