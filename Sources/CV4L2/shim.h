#ifndef DUALCAM_CV4L2_SHIM_H
#define DUALCAM_CV4L2_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

/* libv4l2's open and ioctl are variadic, which Swift cannot call. */
static inline int dc_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }
static inline int dc_v4l2_close(int fd) { return v4l2_close(fd); }
static inline int dc_v4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }
static inline void *dc_v4l2_mmap(void *start, size_t length, int prot, int flags, int fd, int64_t offset) {
    return v4l2_mmap(start, length, prot, flags, fd, offset);
}
static inline int dc_v4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }

/* libv4l2 prints its own errors to stderr; they reach us as return codes, and DualCam
 * reports them in one line. */
#include <stdio.h>
static inline void dc_v4l2_quiet(void) {
    static FILE *null;
    if (!null) null = fopen("/dev/null", "w");
    if (null) v4l2_log_file = null;
}

/* The same calls straight to the kernel, for devices libv4l2 would only wrap in a plugin
 * (multi-planar ones), and for the first look at a device. */
static inline int dc_raw_open(const char *path, int flags) { return open(path, flags); }
static inline int dc_raw_ioctl(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }
static inline int dc_raw_close(int fd) { return close(fd); }

/* _IOR/_IOWR request numbers are function-like macros. */
static inline unsigned long dc_VIDIOC_QUERYCAP(void) { return VIDIOC_QUERYCAP; }
static inline unsigned long dc_VIDIOC_ENUM_FMT(void) { return VIDIOC_ENUM_FMT; }
static inline unsigned long dc_VIDIOC_ENUM_FRAMESIZES(void) { return VIDIOC_ENUM_FRAMESIZES; }
static inline unsigned long dc_VIDIOC_ENUM_FRAMEINTERVALS(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
static inline unsigned long dc_VIDIOC_G_FMT(void) { return VIDIOC_G_FMT; }
static inline unsigned long dc_VIDIOC_S_FMT(void) { return VIDIOC_S_FMT; }
static inline unsigned long dc_VIDIOC_TRY_FMT(void) { return VIDIOC_TRY_FMT; }
static inline unsigned long dc_VIDIOC_G_PARM(void) { return VIDIOC_G_PARM; }
static inline unsigned long dc_VIDIOC_S_PARM(void) { return VIDIOC_S_PARM; }
static inline unsigned long dc_VIDIOC_REQBUFS(void) { return VIDIOC_REQBUFS; }
static inline unsigned long dc_VIDIOC_QUERYBUF(void) { return VIDIOC_QUERYBUF; }
static inline unsigned long dc_VIDIOC_QBUF(void) { return VIDIOC_QBUF; }
static inline unsigned long dc_VIDIOC_DQBUF(void) { return VIDIOC_DQBUF; }
static inline unsigned long dc_VIDIOC_STREAMON(void) { return VIDIOC_STREAMON; }
static inline unsigned long dc_VIDIOC_STREAMOFF(void) { return VIDIOC_STREAMOFF; }
static inline unsigned long dc_VIDIOC_S_CTRL(void) { return VIDIOC_S_CTRL; }
static inline unsigned long dc_VIDIOC_G_CTRL(void) { return VIDIOC_G_CTRL; }
static inline unsigned long dc_VIDIOC_QUERYCTRL(void) { return VIDIOC_QUERYCTRL; }
static inline uint32_t dc_V4L2_CTRL_FLAG_NEXT_CTRL(void) { return V4L2_CTRL_FLAG_NEXT_CTRL; }

/* A menu entry's name (menus) or value (integer menus): the union in v4l2_querymenu is
 * packed, which Swift does not import. 0, or -errno. */
#include <string.h>
static inline int dc_querymenu(int fd, int through_libv4l2, uint32_t id, uint32_t index,
                               char *name, size_t length, int64_t *value) {
    struct v4l2_querymenu m;
    memset(&m, 0, sizeof m);
    m.id = id;
    m.index = index;
    int rc;
    do {
        rc = through_libv4l2 ? v4l2_ioctl(fd, VIDIOC_QUERYMENU, &m) : ioctl(fd, VIDIOC_QUERYMENU, &m);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return -errno;
    if (name && length) snprintf(name, length, "%s", (const char *)m.name);
    if (value) *value = m.value;
    return 0;
}

/* v4l2_fourcc() codes. */
static inline uint32_t dc_V4L2_PIX_FMT_YUYV(void) { return V4L2_PIX_FMT_YUYV; }
static inline uint32_t dc_V4L2_PIX_FMT_UYVY(void) { return V4L2_PIX_FMT_UYVY; }
static inline uint32_t dc_V4L2_PIX_FMT_NV12(void) { return V4L2_PIX_FMT_NV12; }
static inline uint32_t dc_V4L2_PIX_FMT_YUV420(void) { return V4L2_PIX_FMT_YUV420; }
static inline uint32_t dc_V4L2_PIX_FMT_MJPEG(void) { return V4L2_PIX_FMT_MJPEG; }

#endif
