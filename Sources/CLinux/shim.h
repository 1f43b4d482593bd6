#ifndef IRISGW_CLINUX_SHIM_H
#define IRISGW_CLINUX_SHIM_H
// Linux system headers that Swift's Glibc module does not export.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <malloc.h>

/// Names the calling thread (prctl is variadic, so it needs a shim); Linux keeps 15 bytes.
static inline void CLinux_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
#endif
