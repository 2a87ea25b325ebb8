/* Outputs written through a descriptor the caller opened (O_EXCL, O_NOFOLLOW, locked), never
 * re-opened by name: a link or another file swapped in at the name cannot redirect the
 * write. Each I/O context keeps its own position (pread/pwrite), so the faststart pass
 * that reads the file back while writing it can share the descriptor. */
#include "CFFmpegPolicy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if LIBAVFORMAT_VERSION_MAJOR >= 61
typedef const uint8_t *dc_avio_write_buffer;
#else
typedef uint8_t *dc_avio_write_buffer;
#endif

/* A fragmented file's writes are staged, when asked for, until the writer says a fragment
 * is complete: AVIO hands a fragment over in buffer-sized pieces, and a kill between two of
 * them left a torn fragment (its pictures without their sound, which one demuxer played
 * and another dropped). */
typedef struct {
    int fd;
    int64_t position;
    int stages;
    uint8_t *staged;
    size_t staged_length, staged_capacity;
    int64_t staged_at;
} dc_descriptor_io;

static int dc_write_all(int fd, const uint8_t *buf, size_t size, int64_t at) {
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fd, buf + done, size - done, at + (int64_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return AVERROR(errno);
        done += (size_t)n;
    }
    return 0;
}

static int dc_box_type_is_plain(const uint8_t *type) {
    for (int i = 0; i < 4; i++) if (type[i] < 0x20 || type[i] > 0x7e) return 0;
    return 1;
}

/* Writes what is staged so that it appears only whole: first as one `free` box over all of
 * it, which every reader skips (torn or not), then its first box's real header (eight
 * bytes; a kill in that write leaves a `free` box over the first box alone, and what follows
 * it, an mdat no moof describes, is skipped too). Staged bytes that do not start with a box
 * header are written as they are. */
static int dc_write_staged(dc_descriptor_io *io) {
    if (io->staged_length == 0) return 0;
    uint8_t *data = io->staged;
    size_t length = io->staged_length;
    io->staged_length = 0;
    uint8_t header[8];
    int boxed = length >= 16 && length <= UINT32_MAX && dc_box_type_is_plain(data + 4);
    if (!boxed) return dc_write_all(io->fd, data, length, io->staged_at);
    struct stat st;
    int64_t before = fstat(io->fd, &st) == 0 ? (int64_t)st.st_size : -1;
    memcpy(header, data, 8);
    uint32_t whole = (uint32_t)length;
    const uint8_t hidden[8] = {(uint8_t)(whole >> 24), (uint8_t)(whole >> 16), (uint8_t)(whole >> 8), (uint8_t)whole,
                               'f', 'r', 'e', 'e'};
    memcpy(data, hidden, 8);
    int rc = dc_write_all(io->fd, data, length, io->staged_at);
    if (rc == 0) rc = dc_write_all(io->fd, header, 8, io->staged_at);
    /* A write that failed (a full disk) leaves the file as its last whole fragment left it,
     * and the room it took is given back: a take that got no fragment holds no picture,
     * and is not kept as though it did. */
    if (rc < 0 && before >= 0 && before <= io->staged_at) {
        int kept;
        do { kept = ftruncate(io->fd, before); } while (kept < 0 && errno == EINTR);
    }
    return rc;
}

static int dc_descriptor_read(void *opaque, uint8_t *buf, int size) {
    dc_descriptor_io *io = opaque;
    ssize_t n;
    do { n = pread(io->fd, buf, (size_t)size, io->position); } while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    io->position += n;
    return (int)n;
}

static int dc_stage(dc_descriptor_io *io, const uint8_t *buf, size_t size) {
    if (io->staged_length > 0 && io->position != io->staged_at + (int64_t)io->staged_length) {
        int rc = dc_write_staged(io);
        if (rc < 0) return rc;
    }
    if (io->staged_length == 0) io->staged_at = io->position;
    if (io->staged_length + size > io->staged_capacity) {
        size_t capacity = io->staged_capacity ? io->staged_capacity : 1 << 20;
        while (capacity < io->staged_length + size) capacity *= 2;
        uint8_t *grown = realloc(io->staged, capacity);
        if (!grown) return AVERROR(ENOMEM);
        io->staged = grown;
        io->staged_capacity = capacity;
    }
    memcpy(io->staged + io->staged_length, buf, size);
    io->staged_length += size;
    return 0;
}

static int dc_descriptor_write(void *opaque, dc_avio_write_buffer buf, int size) {
    dc_descriptor_io *io = opaque;
    int rc = io->stages ? dc_stage(io, buf, (size_t)size) : dc_write_all(io->fd, buf, (size_t)size, io->position);
    if (rc < 0) return rc;
    io->position += size;
    return size;
}

static int64_t dc_descriptor_seek(void *opaque, int64_t offset, int whence) {
    dc_descriptor_io *io = opaque;
    struct stat st;
    int64_t staged_end = io->staged_length ? io->staged_at + (int64_t)io->staged_length : 0;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE:
        if (fstat(io->fd, &st) != 0) return AVERROR(errno);
        return (int64_t)st.st_size > staged_end ? (int64_t)st.st_size : staged_end;
    case SEEK_SET: io->position = offset; break;
    case SEEK_CUR: io->position += offset; break;
    case SEEK_END:
        if (fstat(io->fd, &st) != 0) return AVERROR(errno);
        io->position = ((int64_t)st.st_size > staged_end ? (int64_t)st.st_size : staged_end) + offset;
        break;
    default: return AVERROR(EINVAL);
    }
    return io->position;
}

int dc_avio_open_descriptor(AVIOContext **pb, int fd, int writable) {
    const int size = 1 << 16;
    dc_descriptor_io *io = calloc(1, sizeof *io);
    uint8_t *buffer = av_malloc(size);
    *pb = io && buffer ? avio_alloc_context(buffer, size, writable, io, dc_descriptor_read,
                                            writable ? dc_descriptor_write : NULL, dc_descriptor_seek) : NULL;
    if (!*pb) { free(io); av_free(buffer); return AVERROR(ENOMEM); }
    io->fd = fd;
    return 0;
}

void dc_avio_stage_until_commit(AVIOContext *pb) {
    ((dc_descriptor_io *)pb->opaque)->stages = 1;
}

int dc_avio_commit(AVIOContext *pb) {
    avio_flush(pb);
    if (pb->error < 0) return pb->error;
    int rc = dc_write_staged(pb->opaque);
    if (rc < 0) pb->error = rc;
    return rc;
}

/* Flushes and frees a context from dc_avio_open_descriptor (the descriptor stays open);
 * returns the first write error it met. */
int dc_avio_close_descriptor(AVIOContext **pb) {
    if (!pb || !*pb) return 0;
    int rc = (*pb)->write_flag ? dc_avio_commit(*pb) : 0;
    if (rc == 0) rc = (*pb)->error;
    dc_descriptor_io *io = (*pb)->opaque;
    free(io->staged);
    free(io);
    av_freep(&(*pb)->buffer);
    avio_context_free(pb);
    return rc;
}

/* The muxer's own opens: only a read-back of its output (faststart), through the descriptor. */
static int dc_output_io_open(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                             AVDictionary **options) {
    (void)options;
    if ((flags & AVIO_FLAG_WRITE) || !s->url || strcmp(url, s->url) != 0) return AVERROR(EPERM);
    return dc_avio_open_descriptor(pb, (int)(intptr_t)s->opaque, 0);
}

static int dc_output_io_close(struct AVFormatContext *s, AVIOContext *pb) {
    (void)s;
    return dc_avio_close_descriptor(&pb);
}

/* Makes `ctx` write through `fd`; dc_avio_close_descriptor(&ctx->pb) closes what this opens. */
int dc_output_use_descriptor(AVFormatContext *ctx, int fd) {
    ctx->opaque = (void *)(intptr_t)fd;
    ctx->io_open = dc_output_io_open;
    ctx->io_close2 = dc_output_io_close;
    ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
    return dc_avio_open_descriptor(&ctx->pb, fd, 1);
}
