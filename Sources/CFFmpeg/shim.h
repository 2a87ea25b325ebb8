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
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

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
static inline int dc_fmt_globalheader(void) { return AVFMT_GLOBALHEADER; }
static inline int dc_fmt_nofile(void) { return AVFMT_NOFILE; }
static inline int dc_avio_flag_write(void) { return AVIO_FLAG_WRITE; }

/* Display-matrix rotation of a stream in degrees (counter-clockwise, as libavutil
 * reports it), or 0 when the stream carries none. */
static inline double dc_stream_rotation(const AVStream *st) {
    size_t size = 0;
    const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!m || size < 9 * sizeof(int32_t)) return 0.0;
    double r = av_display_rotation_get((const int32_t *)m);
    return r != r ? 0.0 : r; /* NaN for a degenerate matrix */
}

#endif
