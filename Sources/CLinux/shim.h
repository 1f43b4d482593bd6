#ifndef IRISGW_CLINUX_SHIM_H
#define IRISGW_CLINUX_SHIM_H
// Linux system headers that Swift's Glibc module does not export.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <netinet/tcp.h>
#endif
