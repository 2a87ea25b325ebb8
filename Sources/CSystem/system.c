#define _GNU_SOURCE
#include "CSystem.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int dc_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int dc_open_unnamed(const char *folder, mode_t mode) {
    return open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
}

int dc_link_descriptor(int fd, const char *to) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, self, AT_FDCWD, to, AT_SYMLINK_FOLLOW);
}
