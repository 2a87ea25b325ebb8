#ifndef DUALCAM_CLINUXCALLS_H
#define DUALCAM_CLINUXCALLS_H

#include <sys/types.h>

/* Linux calls Swift's Glibc module does not show (they are GNU extensions). Each returns what
 * the call returns, with errno set on failure. */

/* rename(2) that fails with EEXIST rather than replace `to` (renameat2 RENAME_NOREPLACE). */
int dc_rename_noreplace(const char *from, const char *to);

/* Exchanges the files at `a` and `b` in one step (renameat2 RENAME_EXCHANGE): both must exist. */
int dc_rename_exchange(const char *a, const char *b);

/* A new regular file in `folder` with no name (O_TMPFILE), open for reading and writing, the
 * mode as open(2) gives it (the umask applied by the kernel); linkable by dc_link_descriptor. */
int dc_open_unnamed(const char *folder, mode_t mode);

/* Gives the file open at `fd` the name `to` (failing with EEXIST when it is taken): linkat of
 * /proc/self/fd/N, which needs no privilege, unlike AT_EMPTY_PATH. */
int dc_link_descriptor(int fd, const char *to);

/* The folder `path` open as a place only (O_PATH | O_DIRECTORY | O_CLOEXEC): names under
 * /proc/PID/fd/N then reach into it. */
int dc_open_folder_place(const char *path);

/* Binds a Unix socket to `name` in the abstract namespace (no file: it goes away with the last
 * descriptor, so with the process however it ends) and returns it; -1 with EADDRINUSE when
 * another socket has that name. A lock on a name that needs nothing on disk. */
int dc_bind_abstract(const char *name);

/* The calling thread's id (gettid), which setpriority(PRIO_PROCESS, ...) takes for one thread. */
pid_t dc_thread_id(void);

/* Has the kernel send `signal` to this process when `parent` ends (prctl PR_SET_PDEATHSIG):
 * 0, or -1 when it could not be asked or `parent` is no longer this process's parent. */
int dc_stop_with_parent(pid_t parent, int signal);

/* Names the calling thread for the kernel (/proc, top -H, gdb): its first 15 bytes. */
void dc_name_thread(const char *name);

/* Puts every thread of this process whose CPU affinity is not `count` CPUs `cpus` back inside
 * them (sched_setaffinity per thread of /proc/self/task); returns how many it moved, -1 when
 * the threads cannot be listed. A library that pins its threads itself (x265, to NUMA nodes)
 * leaves a mask the process was started in. */
int dc_confine_threads(const int *cpus, int count);

/* Puts every thread of this process named `name` whose nice value is below `level` at it;
 * returns how many it moved, -1 when the threads cannot be listed. */
int dc_lower_threads_named(const char *name, int level);

/* How many threads named `name` run at nice `level`. */
int dc_count_threads_named_at(const char *name, int level);

/* Puts every thread named `name` at nice `from` at `to` (up in priority needs a privilege);
 * returns how many it moved. */
int dc_move_threads_named(const char *name, int from, int to);

#endif
