// A hardware counter of the calling thread's user-space instructions (perf_event_open): the
// system call and its ioctls are variadic in C, which Swift cannot call.
#ifndef DUALCAM_PERF_EVENT_H
#define DUALCAM_PERF_EVENT_H

#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// A disabled counter of `config` (PERF_COUNT_HW_INSTRUCTIONS, or for tests on machines
// without one a software event: PERF_COUNT_SW_TASK_CLOCK), or -1 with errno set (ENOENT or
// EOPNOTSUPP: no such counter here, as in virtual machines without a virtual PMU; EACCES:
// perf_event_paranoid).
static inline int dc_perf_open(int software, unsigned long long config) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = software ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = config;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static inline int dc_perf_enable(int fd) { return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0); }
static inline int dc_perf_disable(int fd) { return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0); }
static inline int dc_perf_reset(int fd) { return ioctl(fd, PERF_EVENT_IOC_RESET, 0); }

#endif
