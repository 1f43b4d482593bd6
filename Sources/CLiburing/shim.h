#ifndef IRISGW_CLIBURING_SHIM_H
#define IRISGW_CLIBURING_SHIM_H
// Debian's liburing (liburing-dev 2.3): the media threads' batched UDP I/O. Its helpers are
// `static inline` and import as they are; what takes macros (CMSG_*), flag fallbacks or
// several calls in a row is wrapped here.
// The system headers first, with the feature macros every other module sees: liburing.h
// defines _GNU_SOURCE and _XOPEN_SOURCE, and types declared under them (fd_set) would
// differ from CLinux's and Glibc's copies.
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <time.h>
#include <liburing.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

/// Sets up `ring` for one thread: SINGLE_ISSUER and DEFER_TASKRUN (completions are posted
/// only when the thread enters the ring to wait, so one wait reaps a whole batch), falling
/// back to plain flags on an older kernel. 0 or -errno (ENOSYS, EPERM: io_uring disabled).
static inline int CLiburing_queue_init(struct io_uring *ring, unsigned entries, unsigned cq_entries) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = cq_entries;
    int rc = io_uring_queue_init_params(entries, ring, &p);
    if (rc == -EINVAL) {
        memset(&p, 0, sizeof p);
        p.flags = IORING_SETUP_CQSIZE;
        p.cq_entries = cq_entries;
        rc = io_uring_queue_init_params(entries, ring, &p);
    }
    return rc;
}

/// Registers a provided-buffer ring of `entries` (a power of two) buffers of `size` bytes
/// each, laid end to end in `buffers`, as group `bgid`, and hands them all to the kernel.
/// The ring's own memory is returned (NULL with *err set on failure).
static inline struct io_uring_buf_ring *CLiburing_setup_buf_ring(
    struct io_uring *ring, unsigned entries, int bgid, unsigned char *buffers, unsigned size, int *err) {
    size_t bytes = entries * sizeof(struct io_uring_buf);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (mem == MAP_FAILED) { *err = -errno; return NULL; }
    struct io_uring_buf_reg reg;
    memset(&reg, 0, sizeof reg);
    reg.ring_addr = (unsigned long)mem;
    reg.ring_entries = entries;
    reg.bgid = bgid;
    int rc = io_uring_register_buf_ring(ring, &reg, 0);
    if (rc != 0) { munmap(mem, bytes); *err = rc; return NULL; }
    struct io_uring_buf_ring *br = (struct io_uring_buf_ring *)mem;
    io_uring_buf_ring_init(br);
    int mask = io_uring_buf_ring_mask(entries);
    for (unsigned i = 0; i < entries; i++) io_uring_buf_ring_add(br, buffers + (size_t)i * size, size, i, mask, i);
    io_uring_buf_ring_advance(br, entries);
    *err = 0;
    return br;
}

static inline void CLiburing_free_buf_ring(struct io_uring *ring, struct io_uring_buf_ring *br, unsigned entries, int bgid) {
    io_uring_unregister_buf_ring(ring, bgid);
    munmap(br, entries * sizeof(struct io_uring_buf));
}

/// Gives buffer `bid` back to the kernel.
static inline void CLiburing_recycle(struct io_uring_buf_ring *br, unsigned char *buffers, unsigned size, unsigned bid, unsigned entries) {
    io_uring_buf_ring_add(br, buffers + (size_t)bid * size, size, bid, io_uring_buf_ring_mask(entries), 0);
    io_uring_buf_ring_advance(br, 1);
}

/// An SQE, submitting what is queued first when the queue is full; NULL if still none.
static inline struct io_uring_sqe *CLiburing_sqe(struct io_uring *ring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (sqe == NULL) { io_uring_submit(ring); sqe = io_uring_get_sqe(ring); }
    return sqe;
}

/// Arms a multishot recvmsg on registered file `slot` (or plain fd `fd` when `slot` < 0)
/// taking buffers from group `bgid`; `msg` is the template (name and control lengths) and
/// must outlive the request. 0 or -EBUSY (no SQE).
static inline int CLiburing_arm_recvmsg(struct io_uring *ring, int fd, int slot, struct msghdr *msg, int bgid, unsigned long long user_data) {
    struct io_uring_sqe *sqe = CLiburing_sqe(ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_recvmsg_multishot(sqe, slot >= 0 ? slot : fd, msg, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT | (slot >= 0 ? IOSQE_FIXED_FILE : 0);
    sqe->buf_group = bgid;
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

/// Queues a send of `len` bytes at `buf` to `addr` (both must live until its completion) on
/// registered file `slot` (or plain fd `fd` when `slot` < 0): IORING_OP_SEND with a
/// destination (kernel 6.0, like multishot recvmsg), no msghdr to copy in. 0 or -EBUSY.
static inline int CLiburing_prep_sendto(struct io_uring *ring, int fd, int slot, const void *buf, size_t len,
                                        const struct sockaddr *addr, socklen_t addr_len, unsigned long long user_data) {
    struct io_uring_sqe *sqe = CLiburing_sqe(ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_send(sqe, slot >= 0 ? slot : fd, buf, len, 0);
    io_uring_prep_send_set_addr(sqe, addr, (__u16)addr_len);
    if (slot >= 0) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

/// Queues the cancellation of every request on `fd` (before it is closed). 0 or -EBUSY.
static inline int CLiburing_prep_cancel_fd(struct io_uring *ring, int fd, unsigned long long user_data) {
    struct io_uring_sqe *sqe = CLiburing_sqe(ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

/// Queues the cancellation of every request on registered file `slot` (before the socket
/// is closed). 0 or -EBUSY.
static inline int CLiburing_prep_cancel_slot(struct io_uring *ring, int slot, unsigned long long user_data) {
    struct io_uring_sqe *sqe = CLiburing_sqe(ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_cancel_fd(sqe, slot, IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD_FIXED);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

/// Puts `fd` into registered-file slot `slot` (-1 empties it, dropping the ring's reference).
static inline int CLiburing_set_file(struct io_uring *ring, int slot, int fd) {
    return io_uring_register_files_update(ring, (unsigned)slot, &fd, 1);
}

/// Queues a multishot POLLIN on `fd` (the event loop's epoll set). 0 or -EBUSY.
static inline int CLiburing_prep_poll(struct io_uring *ring, int fd, unsigned long long user_data) {
    struct io_uring_sqe *sqe = CLiburing_sqe(ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_poll_multishot(sqe, fd, POLLIN);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

/// Submits what is queued and waits up to `timeout_ns` for one completion (0: just submit
/// and collect what is done): one system call either way.
static inline int CLiburing_submit_and_wait(struct io_uring *ring, long long timeout_ns) {
    if (timeout_ns <= 0) return io_uring_submit_and_get_events(ring);
    struct __kernel_timespec ts = { .tv_sec = timeout_ns / 1000000000LL, .tv_nsec = timeout_ns % 1000000000LL };
    struct io_uring_cqe *cqe = NULL;
    return io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
}

/// CLOCK_REALTIME in nanoseconds (what SO_TIMESTAMPNS stamps are in).
static inline long long CLiburing_realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/// Reads a multishot recvmsg buffer of `len` bytes: the payload (its length returned; -1
/// when the buffer is malformed or the datagram was truncated), the source address, and
/// its age in nanoseconds against `now_ns` (SO_TIMESTAMPNS; 0 when unstamped).
static inline long CLiburing_recvmsg_parse(
    void *buf, int len, struct msghdr *msg, void **payload, struct sockaddr **name, socklen_t *namelen,
    long long now_ns, long long *age_ns) {
    *age_ns = 0;
    struct io_uring_recvmsg_out *o = io_uring_recvmsg_validate(buf, len, msg);
    if (o == NULL || (o->flags & MSG_TRUNC)) return -1;
    *name = (struct sockaddr *)io_uring_recvmsg_name(o);
    *namelen = o->namelen > msg->msg_namelen ? msg->msg_namelen : o->namelen;
    for (struct cmsghdr *c = io_uring_recvmsg_cmsg_firsthdr(o, msg); c != NULL; c = io_uring_recvmsg_cmsg_nexthdr(o, msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec stamp;
            memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
            long long age = now_ns - ((long long)stamp.tv_sec * 1000000000LL + stamp.tv_nsec);
            *age_ns = age > 0 ? age : 0;
        }
    }
    *payload = io_uring_recvmsg_payload(o, msg);
    return (long)io_uring_recvmsg_payload_length(o, len, msg);
}

/// The control space a recvmsg template needs for one SO_TIMESTAMPNS stamp.
static inline unsigned CLiburing_timestamp_control_size(void) { return CMSG_SPACE(sizeof(struct timespec)); }
#endif
