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
#endif
