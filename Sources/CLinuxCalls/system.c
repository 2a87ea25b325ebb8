#define _GNU_SOURCE
#include "CLinuxCalls.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>

int dc_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int dc_rename_exchange(const char *a, const char *b) {
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

int dc_open_unnamed(const char *folder, mode_t mode) {
    return open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
}

int dc_link_descriptor(int fd, const char *to) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, self, AT_FDCWD, to, AT_SYMLINK_FOLLOW);
}

int dc_open_folder_place(const char *path) { return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); }

int dc_bind_abstract(const char *name) {
    struct sockaddr_un address;
    size_t length = strlen(name);
    if (length + 1 > sizeof address.sun_path) { errno = ENAMETOOLONG; return -1; }
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    memcpy(address.sun_path + 1, name, length);  /* sun_path[0] == 0: the abstract namespace */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (bind(fd, (struct sockaddr *)&address, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + length)) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

pid_t dc_thread_id(void) {
    return (pid_t)syscall(SYS_gettid);
}

int dc_stop_with_parent(pid_t parent, int signal) {
    if (prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0) return -1;
    /* The parent may have gone before the request was made: then nothing would ever come. */
    return getppid() == parent ? 0 : -1;
}

void dc_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    prctl(PR_SET_NAME, shortened, 0, 0, 0);
}

/* Calls `act` on every thread of this process; returns how many it said it changed (1), -1
 * when the threads cannot be listed. */
static int for_each_thread(int (*act)(pid_t tid, const void *context), const void *context) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int changed = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks))) {
        char *end;
        long tid = strtol(entry->d_name, &end, 10);
        if (*end != '\0' || tid <= 0) continue;
        changed += act((pid_t)tid, context);
    }
    closedir(tasks);
    return changed;
}

static int confine(pid_t tid, const void *context) {
    const cpu_set_t *wanted = context;
    cpu_set_t now;
    if (sched_getaffinity(tid, sizeof now, &now) != 0 || CPU_EQUAL(&now, wanted)) return 0;
    return sched_setaffinity(tid, sizeof *wanted, wanted) == 0;
}

int dc_confine_threads(const int *cpus, int count) {
    cpu_set_t wanted;
    CPU_ZERO(&wanted);
    for (int i = 0; i < count; i++) {
        if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE) CPU_SET(cpus[i], &wanted);
    }
    return for_each_thread(confine, &wanted);
}

/* Whether thread `tid` of this process is named `name` (its comm). */
static int is_named(pid_t tid, const char *name) {
    char path[64], comm[32] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
    fclose(f);
    comm[strcspn(comm, "\n")] = 0;
    return strcmp(comm, name) == 0;
}

/* `from` INT_MIN: every thread of the name below `to` in nice value (above it in priority);
 * else those at exactly `from`. */
struct moving { const char *name; int from; int to; };

static int move(pid_t tid, const void *context) {
    const struct moving *wanted = context;
    if (!is_named(tid, wanted->name)) return 0;
    errno = 0;
    int now = getpriority(PRIO_PROCESS, (id_t)tid);
    if (errno != 0) return 0;
    if (wanted->from == INT_MIN ? now >= wanted->to : now != wanted->from) return 0;
    return setpriority(PRIO_PROCESS, (id_t)tid, wanted->to) == 0;
}

static int count(pid_t tid, const void *context) {
    const struct moving *wanted = context;
    if (!is_named(tid, wanted->name)) return 0;
    errno = 0;
    int now = getpriority(PRIO_PROCESS, (id_t)tid);
    return errno == 0 && now == wanted->from;
}

int dc_count_threads_named_at(const char *name, int level) {
    struct moving wanted = { name, level, level };
    return for_each_thread(count, &wanted);
}

int dc_move_threads_named(const char *name, int from, int to) {
    struct moving wanted = { name, from, to };
    return for_each_thread(move, &wanted);
}

int dc_lower_threads_named(const char *name, int level) {
    return dc_move_threads_named(name, INT_MIN, level);
}

/* libnuma, which x265 calls to pin its pool to NUMA nodes, prints its warnings and errors on
 * stderr itself, and lets a program replace both (weak symbols). Where /sys is not mounted
 * (a chroot, a bare container) every x265 opened printed up to four such lines around
 * dualcam's own; x265 carries on with its threads unpinned, which is all the lines said.
 * The executable exports these (Package.swift) so that libnuma's calls reach them. */
void numa_warn(int number, char *format, ...) {
    (void)number;
    (void)format;
}

void numa_error(char *where) {
    (void)where;
}
