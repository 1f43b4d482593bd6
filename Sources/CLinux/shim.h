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

#include <time.h>
#include <string.h>

/// Asks the kernel to stamp every datagram a socket receives (SO_TIMESTAMPNS); 0 or -1.
static inline int CLinux_enable_rx_timestamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}

/// recvfrom(2) that also says how long ago the kernel received the datagram, in
/// nanoseconds (its SO_TIMESTAMPNS stamp against CLOCK_REALTIME now; 0 when unstamped).
/// The CMSG_* accessors are macros, hence the shim.
static inline long CLinux_recv_aged(int fd, void *buf, size_t len, struct sockaddr *from, socklen_t *fromlen, long long *age_ns) {
    char control[64];
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_name = from;
    msg.msg_namelen = *fromlen;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    long n = recvmsg(fd, &msg, 0);
    *age_ns = 0;
    if (n < 0) return n;
    *fromlen = msg.msg_namelen;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec stamp, now;
            memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
            clock_gettime(CLOCK_REALTIME, &now);
            long long age = (long long)(now.tv_sec - stamp.tv_sec) * 1000000000LL + (now.tv_nsec - stamp.tv_nsec);
            *age_ns = age > 0 ? age : 0;
        }
    }
    return n;
}
/// One datagram slot of recvmmsg(2): glibc's `struct mmsghdr`, which it declares only under
/// _GNU_SOURCE (Swift's Glibc module is built without it). Same layout.
struct CLinux_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

/// recvmmsg(2) under its own name, for the same reason.
extern int CLinux_recvmmsg_call(int, struct CLinux_mmsghdr *, unsigned int, int, struct timespec *) __asm__("recvmmsg");

/// Reads up to `count` waiting datagrams (at most 64) from a non-blocking socket in one
/// system call: datagram i into `buffers + i * slot` (at most `slot` bytes), its size into
/// `lengths[i]` and its source into `sources[i]` (`source_lengths[i]` bytes). Returns how many
/// were read, or -1 with errno (EAGAIN: none waiting). A datagram longer than `slot` is cut
/// and flagged in `truncated[i]`. The headers live on this stack frame: one call per batch.
static inline int CLinux_recv_batch(int fd, unsigned char *buffers, size_t slot, unsigned int count,
                                    struct sockaddr_storage *sources, socklen_t *source_lengths,
                                    unsigned int *lengths, unsigned char *truncated) {
    struct CLinux_mmsghdr headers[64];
    struct iovec iovs[64];
    if (count > 64) count = 64;
    memset(headers, 0, sizeof(struct CLinux_mmsghdr) * count);
    for (unsigned int i = 0; i < count; i++) {
        iovs[i].iov_base = buffers + i * slot;
        iovs[i].iov_len = slot;
        headers[i].msg_hdr.msg_name = &sources[i];
        headers[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
        headers[i].msg_hdr.msg_iov = &iovs[i];
        headers[i].msg_hdr.msg_iovlen = 1;
    }
    int n = CLinux_recvmmsg_call(fd, headers, count, 0, NULL);
    for (int i = 0; i < n; i++) {
        lengths[i] = headers[i].msg_len;
        source_lengths[i] = headers[i].msg_hdr.msg_namelen;
        truncated[i] = (headers[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
    }
    return n;
}
#endif
