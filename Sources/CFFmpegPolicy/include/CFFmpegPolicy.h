#ifndef DUALCAM_FFMPEG_POLICY_H
#define DUALCAM_FFMPEG_POLICY_H
/* What dualcam lets FFmpeg open and how it writes (policy.c says why each is so). */
#include <stdint.h>
#include <libavformat/avformat.h>

/* Opens `file_url` ("file:" and the path) for input, reading nothing outside the real path
 * of its folder (`named_folder`, the folder its name gives, resolved): nested opens are
 * resolved and checked, demuxers that open files past the check are not used. Close with
 * dc_close_local_input. */
int dc_open_local_input(AVFormatContext **out, const char *file_url, const char *named_folder);
void dc_close_local_input(AVFormatContext **ctx);
/* Whether something the input named outside its folder was refused while it was read (an
 * HLS demuxer skips such a segment and goes on). */
int dc_local_input_left_out(const AVFormatContext *ctx);
/* Makes every local input's blocking calls return at once from now on (a stop was asked
 * for). Async-signal-safe. */
void dc_interrupt_inputs(void);
/* What an input's open returns when one of its playlists was opened too often (it names
 * itself, or it is live and never ends). */
int dc_averror_playlist_loop(void);

/* An I/O context over `fd` (pread/pwrite at its own position; the descriptor stays the
 * caller's); closing it flushes and returns the first write error. */
int dc_avio_open_descriptor(AVIOContext **pb, int fd, int writable);
int dc_avio_close_descriptor(AVIOContext **pb);
/* From now on, what is written waits in memory until dc_avio_commit, which writes it so
 * that it appears only whole (a kill never leaves part of it); for a writer that commits at
 * box boundaries (a fragmented file's fragments). */
void dc_avio_stage_until_commit(AVIOContext *pb);
/* Flushes the I/O buffer and writes what is staged; the write error, also left in pb->error. */
int dc_avio_commit(AVIOContext *pb);

/* Makes `ctx` write through `fd`, its own re-opens (faststart's read-back) too. */
int dc_output_use_descriptor(AVFormatContext *ctx, int fd);

/* A live stream's network calls give up once the deadline passes or `stop` is set. */
typedef struct { int64_t deadline_us; int stop; } dc_deadline;
void dc_deadline_set(dc_deadline *d, double seconds);
/* Asks for the stop: safe from any thread. */
void dc_deadline_stop(dc_deadline *d);
/* Opens `url` for writing as the muxer's I/O, interruptible by `d`. */
int dc_open_live_output(AVFormatContext *ctx, const char *url, dc_deadline *d, AVDictionary **options);

/* FFmpeg's log lines (at `level` or more severe) handed to `sink` whole, one formatted line at a
 * time, instead of printed: dualcam masks secrets in them (a stream's passphrase) before they
 * reach stderr. NULL puts FFmpeg's own printing back. */
typedef void (*dc_log_sink)(const char *line, int level);
void dc_log_to(dc_log_sink sink);

#endif
