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

/* What dualcam allows FFmpeg to open and how its files are written (inputs confined to
 * their folder, outputs through a descriptor, network deadlines) is in the CFFmpegPolicy
 * target; this header only exposes what Swift cannot import. */

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
