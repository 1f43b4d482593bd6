#ifndef IRISGW_CLINUX_SHIM_H
#define IRISGW_CLINUX_SHIM_H
// Linux system headers that Swift's Glibc module does not export.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/socket.h>

/// accept4(2), which glibc declares only under _GNU_SOURCE (Swift's Glibc module is built
/// without it). Non-blocking and close-on-exec in one call: a child process started at the
/// same moment must not inherit the connection.
static inline int CLinux_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    extern int accept4(int, struct sockaddr *, socklen_t *, int);
    return accept4(fd, addr, len, flags);
}

/// Names the calling thread (prctl is variadic, so it needs a shim); Linux keeps 15 bytes.
static inline void CLinux_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/// How many CPUs the calling thread may run on (sched_getaffinity(2)); -1 when the call
/// fails (a machine with more than 4096 CPUs, or no such call). CPU_COUNT is a macro and
/// sched_getaffinity needs _GNU_SOURCE, which Swift's Glibc module is built without.
static inline int CLinux_affinity_cpu_count(void) {
    extern int sched_getaffinity(int, size_t, void *);
    unsigned long mask[4096 / (8 * sizeof(unsigned long))] = {0};
    if (sched_getaffinity(0, sizeof mask, mask) != 0) return -1;
    int count = 0;
    for (size_t i = 0; i < sizeof mask / sizeof mask[0]; i++) count += __builtin_popcountl(mask[i]);
    return count;
}
#endif
