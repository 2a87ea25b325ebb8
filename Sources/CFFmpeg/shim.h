#ifndef DUALCAM_CFFMPEG_SHIM_H
#define DUALCAM_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
#include <libavutil/time.h>
#include <libavcodec/bsf.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Local input files, opened so that nothing but local files inside the input's own folder
 * is read. Every name is a file: FFmpeg takes "take12:30.mov" for a URL of a protocol
 * "take12" unless it is given as "file:take12:30.mov". A playlist (HLS) can
 * only open files in its folder, and only through the file protocol: nested opens go
 * through dc_input_io_open, which resolves the name and refuses anything outside. */
typedef int (*dc_io_open_fn)(struct AVFormatContext *, AVIOContext **, const char *, int, AVDictionary **);

/* The context's opaque: FFmpeg's own io_open, then the folder. */
typedef struct { dc_io_open_fn original; int refused; char folder[]; } dc_local_input;

static int dc_input_io_open(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                            AVDictionary **options) {
    dc_local_input *input = s->opaque;
    const char *name = strncmp(url, "file:", 5) == 0 ? url + 5 : url;
    char resolved[PATH_MAX];
    if (!input) return AVERROR(EINVAL);
    /* Why the name does not resolve is what to say (a missing file was "Permission denied"). */
    if (!realpath(name, resolved)) return AVERROR(errno);
    size_t n = strlen(input->folder);
    int inside = strncmp(resolved, input->folder, n) == 0
        && (resolved[n] == '/' || resolved[n] == 0 || strcmp(input->folder, "/") == 0);
    if (!inside) { input->refused = 1; return AVERROR(EPERM); }
    /* The name checked is the name opened: a link swapped in after the check leads nowhere new. */
    char opened[PATH_MAX + 8];
    snprintf(opened, sizeof opened, "file:%s", resolved);
    return input->original(s, pb, opened, flags, options);
}

/* Every demuxer but those that open the files they name past the context's io_open, for
 * format_whitelist: concat opens each listed file in a context of its own with FFmpeg's
 * io_open; DASH and IMF open their segments and resources with avio_open2 (a manifest inside
 * the folder could name ../secret, seen done with DASH). The others that open files of their
 * own (HLS, image sequences, QuickTime references) do so through io_open, which checks them.
 * Made once; never freed. */
static inline int dc_reads_past_io_open(const char *name) {
    return strcmp(name, "concat") == 0 || strcmp(name, "dash") == 0 || strcmp(name, "imf") == 0;
}

/* A variable of a static function's: one a header declares at file scope is not emitted for
 * Swift's importer. */
static inline char **dc_confined_format_slot(void) {
    static char *list;
    return &list;
}

static void dc_make_confined_formats(void) {
    size_t size = 1;
    const AVInputFormat *f;
    void *it = NULL;
    while ((f = av_demuxer_iterate(&it))) if (!dc_reads_past_io_open(f->name)) size += strlen(f->name) + 1;
    char *names = calloc(size, 1);
    if (!names) return;
    it = NULL;
    while ((f = av_demuxer_iterate(&it))) {
        if (dc_reads_past_io_open(f->name)) continue;
        if (names[0]) strcat(names, ",");
        strcat(names, f->name);
    }
    *dc_confined_format_slot() = names;
}

static inline const char *dc_confined_formats(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, dc_make_confined_formats);
    return *dc_confined_format_slot();
}

/* Opens `file_url` ("file:" and the path) for input; `folder` is the real path of its
 * folder, kept in the context's opaque (dc_close_local_input frees it). */
static inline int dc_open_local_input(AVFormatContext **out, const char *file_url, const char *folder) {
    AVFormatContext *ctx = avformat_alloc_context();
    if (!ctx) return AVERROR(ENOMEM);
    dc_local_input *input = malloc(sizeof(dc_local_input) + strlen(folder) + 1);
    if (!input) { avformat_free_context(ctx); return AVERROR(ENOMEM); }
    input->original = ctx->io_open;
    input->refused = 0;
    strcpy(input->folder, folder);
    ctx->opaque = input;
    ctx->io_open = dc_input_io_open;
    AVDictionary *options = NULL;
    av_dict_set(&options, "protocol_whitelist", "file", 0);
    const char *formats = dc_confined_formats();
    if (!formats) { avformat_free_context(ctx); free(input); return AVERROR(ENOMEM); }
    av_dict_set(&options, "format_whitelist", formats, 0);
    int rc = avformat_open_input(&ctx, file_url, NULL, &options);
    av_dict_free(&options);
    /* A demuxer may turn the refusal into an error of its own: the refusal is what to say. */
    if (rc < 0) { if (input->refused) rc = AVERROR(EPERM); free(input); *out = NULL; return rc; }
    *out = ctx;
    return 0;
}

static inline void dc_close_local_input(AVFormatContext **ctx) {
    if (!ctx || !*ctx) return;
    void *opaque = (*ctx)->opaque;
    avformat_close_input(ctx);
    free(opaque);
}

/* Outputs written through a descriptor the caller opened (O_EXCL, O_NOFOLLOW, locked), never
 * re-opened by name: a link or another file swapped in at the name cannot redirect the
 * write. Each I/O context keeps its own position (pread/pwrite), so the faststart pass
 * that reads the file back while writing it can share the descriptor. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#if LIBAVFORMAT_VERSION_MAJOR >= 61
typedef const uint8_t *dc_avio_write_buffer;
#else
typedef uint8_t *dc_avio_write_buffer;
#endif

typedef struct { int fd; int64_t position; } dc_descriptor_io;

static int dc_descriptor_read(void *opaque, uint8_t *buf, int size) {
    dc_descriptor_io *io = opaque;
    ssize_t n;
    do { n = pread(io->fd, buf, (size_t)size, io->position); } while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    io->position += n;
    return (int)n;
}

static int dc_descriptor_write(void *opaque, dc_avio_write_buffer buf, int size) {
    dc_descriptor_io *io = opaque;
    int done = 0;
    while (done < size) {
        ssize_t n = pwrite(io->fd, buf + done, (size_t)(size - done), io->position);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return AVERROR(errno);
        done += (int)n;
        io->position += n;
    }
    return done;
}

static int64_t dc_descriptor_seek(void *opaque, int64_t offset, int whence) {
    dc_descriptor_io *io = opaque;
    struct stat st;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return fstat(io->fd, &st) == 0 ? (int64_t)st.st_size : AVERROR(errno);
    case SEEK_SET: io->position = offset; break;
    case SEEK_CUR: io->position += offset; break;
    case SEEK_END:
        if (fstat(io->fd, &st) != 0) return AVERROR(errno);
        io->position = (int64_t)st.st_size + offset;
        break;
    default: return AVERROR(EINVAL);
    }
    return io->position;
}

static inline int dc_avio_open_descriptor(AVIOContext **pb, int fd, int writable) {
    const int size = 1 << 16;
    dc_descriptor_io *io = malloc(sizeof *io);
    uint8_t *buffer = av_malloc(size);
    *pb = io && buffer ? avio_alloc_context(buffer, size, writable, io, dc_descriptor_read,
                                            writable ? dc_descriptor_write : NULL, dc_descriptor_seek) : NULL;
    if (!*pb) { free(io); av_free(buffer); return AVERROR(ENOMEM); }
    io->fd = fd;
    io->position = 0;
    return 0;
}

/* Flushes and frees a context from dc_avio_open_descriptor (the descriptor stays open);
 * returns the first write error it met. */
static inline int dc_avio_close_descriptor(AVIOContext **pb) {
    if (!pb || !*pb) return 0;
    if ((*pb)->write_flag) avio_flush(*pb);
    int rc = (*pb)->error;
    free((*pb)->opaque);
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
static inline int dc_output_use_descriptor(AVFormatContext *ctx, int fd) {
    ctx->opaque = (void *)(intptr_t)fd;
    ctx->io_open = dc_output_io_open;
    ctx->io_close2 = dc_output_io_close;
    ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
    return dc_avio_open_descriptor(&ctx->pb, fd, 1);
}

/* A live stream's network calls (connect, each write) give up once a deadline passes or a
 * stop is asked for: FFmpeg polls the interrupt callback while it waits on the network. */
typedef struct { volatile int64_t deadline_us; volatile int stop; } dc_deadline;

static int dc_deadline_passed(void *opaque) {
    const dc_deadline *d = opaque;
    return d->stop || (d->deadline_us > 0 && av_gettime_relative() > d->deadline_us);
}

static inline void dc_deadline_set(dc_deadline *d, double seconds) {
    d->deadline_us = av_gettime_relative() + (int64_t)(seconds * 1e6);
}

/* Opens `url` for writing as the muxer's I/O, interruptible by `d`. */
static inline int dc_open_live_output(AVFormatContext *ctx, const char *url, dc_deadline *d, AVDictionary **options) {
    ctx->interrupt_callback.callback = dc_deadline_passed;
    ctx->interrupt_callback.opaque = d;
    return avio_open2(&ctx->pb, url, AVIO_FLAG_WRITE, &ctx->interrupt_callback, options);
}

/* Swift cannot import function-like or casting macros; these expose them. */

static inline int dc_averror(int posix_errno) { return AVERROR(posix_errno); }
static inline int dc_averror_eof(void) { return AVERROR_EOF; }
static inline int dc_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int dc_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int dc_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int dc_averror_encoder_not_found(void) { return AVERROR_ENCODER_NOT_FOUND; }
static inline int dc_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int64_t dc_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int dc_av_time_base(void) { return AV_TIME_BASE; }

/* av_err2str is a macro over a compound literal; this writes into a caller buffer. */
static inline const char *dc_av_err2str(int errnum, char *buf, size_t size) {
    av_strerror(errnum, buf, size);
    return buf;
}

static inline int dc_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int dc_codec_flag_qscale(void) { return AV_CODEC_FLAG_QSCALE; }
static inline int dc_ff_qp2lambda(void) { return FF_QP2LAMBDA; }
static inline int dc_fmt_globalheader(void) { return AVFMT_GLOBALHEADER; }
static inline int dc_fmt_nofile(void) { return AVFMT_NOFILE; }
static inline int dc_avio_flag_write(void) { return AVIO_FLAG_WRITE; }

/* FFmpeg 5.1 to 7.1 (Debian 12 to 13) differ in a few names; each difference is one
 * helper here, so Swift code never branches on a version.  FFmpeg 8 removes the
 * FF_PROFILE_* names and AVFrame.pkt_duration for good. */

/* How long a decoded frame lasts, in its stream's time base (0 when unknown).
 * AVFrame.duration arrived in libavutil 57.30 (FFmpeg 6.0); pkt_duration is gone in 7. */
static inline int64_t dc_frame_duration(const AVFrame *f) {
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
    return f->duration;
#else
    return f->pkt_duration;
#endif
}

/* The AAC-LC profile id: AV_PROFILE_* replaced FF_PROFILE_* in libavcodec 60.26 (6.1). */
static inline int dc_profile_aac_low(void) {
#ifdef AV_PROFILE_AAC_LOW
    return AV_PROFILE_AAC_LOW;
#else
    return FF_PROFILE_AAC_LOW;
#endif
}

/* A stream's display matrix (nine int32), or NULL. Stream side data moved to
 * AVCodecParameters.coded_side_data in libavcodec 60.29 (6.1); av_stream_get_side_data
 * is gone in 7. */
static inline const int32_t *dc_stream_display_matrix(const AVStream *st) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
    const AVPacketSideData *sd = av_packet_side_data_get(st->codecpar->coded_side_data,
                                                         st->codecpar->nb_coded_side_data,
                                                         AV_PKT_DATA_DISPLAYMATRIX);
    if (!sd || sd->size < 9 * sizeof(int32_t)) return NULL;
    return (const int32_t *)sd->data;
#else
    size_t size = 0;
    const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!m || size < 9 * sizeof(int32_t)) return NULL;
    return (const int32_t *)m;
#endif
}

/* Gives a stream the display matrix av_display_rotation_set makes for `degrees` (which
 * players turn clockwise by `degrees`). 0 or a negative AVERROR. */
static inline int dc_stream_set_rotation(AVStream *st, double degrees) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
    AVPacketSideData *sd = av_packet_side_data_new(&st->codecpar->coded_side_data,
                                                   &st->codecpar->nb_coded_side_data,
                                                   AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t), 0);
    if (!sd) return AVERROR(ENOMEM);
    av_display_rotation_set((int32_t *)sd->data, degrees);
#else
    uint8_t *m = av_stream_new_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
    if (!m) return AVERROR(ENOMEM);
    av_display_rotation_set((int32_t *)m, degrees);
#endif
    return 0;
}

/* Copies a stream's display matrix to another stream (a remux). From 6.1 it travels in
 * the codec parameters, which the caller copies; before, beside them. */
static inline int dc_stream_copy_display_matrix(AVStream *dst, const AVStream *src) {
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
    (void)dst; (void)src;
    return 0;
#else
    const int32_t *m = dc_stream_display_matrix(src);
    if (!m) return 0;
    uint8_t *copy = av_stream_new_side_data(dst, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
    if (!copy) return AVERROR(ENOMEM);
    memcpy(copy, m, 9 * sizeof(int32_t));
    return 0;
#endif
}

/* Display-matrix rotation of a stream in degrees (counter-clockwise, as libavutil
 * reports it), or 0 when the stream carries none. */
static inline double dc_stream_rotation(const AVStream *st) {
    const int32_t *m = dc_stream_display_matrix(st);
    if (!m) return 0.0;
    double r = av_display_rotation_get(m);
    return r != r ? 0.0 : r; /* NaN for a degenerate matrix */
}

/* A decoded frame about to be encoded as it is (composed in place): what the decoder
 * recorded of the source must not steer the encoder. libx265 and libx264 turn an I
 * pict_type into a forced keyframe (the source's GOP instead of ours: measured, a 48 %
 * larger file), and read regions of interest and SEI from side data.
 * AV_FRAME_FLAG_KEY replaced key_frame in libavutil 58.29 (6.1). */
static inline void dc_frame_forget_source(AVFrame *f) {
    f->pict_type = AV_PICTURE_TYPE_NONE;
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 29, 100)
    f->flags &= ~AV_FRAME_FLAG_KEY;
#else
    f->key_frame = 0;
#endif
    while (f->nb_side_data > 0) av_frame_remove_side_data(f, f->side_data[0]->type);
    f->quality = 0;
}

#endif
