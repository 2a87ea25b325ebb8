/* What dualcam lets FFmpeg open, and how it writes: local inputs confined to their own
 * folder, outputs written through a descriptor the caller opened, network calls with a
 * deadline. Policy, in C because FFmpeg calls it back; declared in CFFmpegPolicy.h. */
#include "CFFmpegPolicy.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libavutil/time.h>

typedef int (*dc_io_open_fn)(struct AVFormatContext *, AVIOContext **, const char *, int, AVDictionary **);

/* Local input files, opened so that nothing but local files inside the input's own folder
 * is read. Every name is a file: FFmpeg takes "take12:30.mov" for a URL of a protocol
 * "take12" unless it is given as "file:take12:30.mov". A playlist (HLS) can
 * only open files in its folder, and only through the file protocol: nested opens go
 * through dc_input_io_open, which resolves the name and refuses anything outside. */

/* How often one playlist may be opened for one input: a playlist that names itself (or two
 * that name each other) was re-read without end, 250 MB more memory a second; a live
 * playlist that never ends is reloaded without end. A finished playlist is read once or
 * twice (probing, then reading). */
enum { DC_PLAYLIST_OPENS_MAX = 8, DC_PLAYLISTS_COUNTED = 32 };

/* Refusals, kept to say the right thing when a demuxer turns them into an error of its own. */
enum { DC_REFUSED_OUTSIDE = 1, DC_REFUSED_LOOP = 2 };

/* The context's opaque: FFmpeg's own io_open, what was refused, the playlists opened so far
 * (by device and inode) and how often, then the folder. */
typedef struct {
    dc_io_open_fn original;
    int refused;
    int playlist_count;
    struct { dev_t device; ino_t inode; int opens; } playlists[DC_PLAYLISTS_COUNTED];
    char folder[];
} dc_local_input;

/* Whether the file starts as an HLS playlist does. */
static int dc_is_playlist(const char *path) {
    char head[7];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == (ssize_t)sizeof head && memcmp(head, "#EXTM3U", sizeof head) == 0;
}

/* Counts one more open of `path` if it is a playlist; false once it has been opened too often. */
static int dc_playlist_open_allowed(dc_local_input *input, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !dc_is_playlist(path)) return 1;
    for (int i = 0; i < input->playlist_count; i++) {
        if (input->playlists[i].device == st.st_dev && input->playlists[i].inode == st.st_ino) {
            return ++input->playlists[i].opens <= DC_PLAYLIST_OPENS_MAX;
        }
    }
    if (input->playlist_count < DC_PLAYLISTS_COUNTED) {
        input->playlists[input->playlist_count].device = st.st_dev;
        input->playlists[input->playlist_count].inode = st.st_ino;
        input->playlists[input->playlist_count].opens = 1;
        input->playlist_count++;
    }
    return 1;
}

/* Set once a stop is asked for (dc_interrupt_inputs): every input's blocking call (a read, a
 * playlist's reload wait) then returns at once. */
static volatile sig_atomic_t inputs_interrupted;

static int dc_inputs_interrupt(void *opaque) {
    (void)opaque;
    return inputs_interrupted;
}

void dc_interrupt_inputs(void) { inputs_interrupted = 1; }

int dc_averror_playlist_loop(void) { return FFERRTAG('D', 'C', 'P', 'L'); }

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
    if (!inside) { input->refused = DC_REFUSED_OUTSIDE; return AVERROR(EPERM); }
    if (!dc_playlist_open_allowed(input, resolved)) { input->refused = DC_REFUSED_LOOP; return dc_averror_playlist_loop(); }
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
static int dc_reads_past_io_open(const char *name) {
    return strcmp(name, "concat") == 0 || strcmp(name, "dash") == 0 || strcmp(name, "imf") == 0;
}

static char *confined_format_list;

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
    confined_format_list = names;
}

static const char *dc_confined_formats(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, dc_make_confined_formats);
    return confined_format_list;
}

/* Opens `file_url` ("file:" and the path) for input; `named_folder` is the folder its name
 * gives. The real path of the file's own folder (a link followed: the user named it) is kept
 * in the context's opaque (dc_close_local_input frees it). Resolved here, in bytes: a folder
 * whose name is not UTF-8 came back from Swift's String altered and was refused. */
int dc_open_local_input(AVFormatContext **out, const char *file_url, const char *named_folder) {
    char real[PATH_MAX];
    const char *folder = named_folder;
    if (realpath(file_url + strlen("file:"), real)) {
        char *slash = strrchr(real, '/');
        if (slash == real) slash[1] = 0; else if (slash) *slash = 0;
        folder = real;
    } else if (realpath(named_folder, real)) {
        folder = real;
    }
    AVFormatContext *ctx = avformat_alloc_context();
    if (!ctx) return AVERROR(ENOMEM);
    dc_local_input *input = malloc(sizeof(dc_local_input) + strlen(folder) + 1);
    if (!input) { avformat_free_context(ctx); return AVERROR(ENOMEM); }
    input->original = ctx->io_open;
    input->refused = 0;
    input->playlist_count = 0;
    strcpy(input->folder, folder);
    ctx->opaque = input;
    ctx->io_open = dc_input_io_open;
    ctx->interrupt_callback.callback = dc_inputs_interrupt;
    AVDictionary *options = NULL;
    /* HLS: a playlist that does not grow is given up after a few reloads, not a thousand. */
    av_dict_set(&options, "max_reload", "3", 0);
    av_dict_set(&options, "m3u8_hold_counters", "3", 0);
    av_dict_set(&options, "protocol_whitelist", "file", 0);
    const char *formats = dc_confined_formats();
    if (!formats) { avformat_free_context(ctx); free(input); return AVERROR(ENOMEM); }
    av_dict_set(&options, "format_whitelist", formats, 0);
    int rc = avformat_open_input(&ctx, file_url, NULL, &options);
    av_dict_free(&options);
    /* A demuxer may turn the refusal into an error of its own: the refusal is what to say. */
    if (rc < 0) {
        if (input->refused) rc = input->refused == DC_REFUSED_LOOP ? dc_averror_playlist_loop() : AVERROR(EPERM);
        free(input);
        *out = NULL;
        return rc;
    }
    *out = ctx;
    return 0;
}

int dc_local_input_left_out(const AVFormatContext *ctx) {
    const dc_local_input *input = ctx ? ctx->opaque : NULL;
    return input && input->refused == DC_REFUSED_OUTSIDE;
}

void dc_close_local_input(AVFormatContext **ctx) {
    if (!ctx || !*ctx) return;
    void *opaque = (*ctx)->opaque;
    avformat_close_input(ctx);
    free(opaque);
}

/* A live stream's network calls (connect, each write) give up once a deadline passes or a
 * stop is asked for: FFmpeg polls the interrupt callback while it waits on the network. */

/* The stop is asked for from another thread than the one FFmpeg polls on (and the deadline
 * is read from whichever thread FFmpeg calls back on): atomics, which ThreadSanitizer sees,
 * where `volatile` is only a hope. */
static int dc_deadline_passed(void *opaque) {
    dc_deadline *d = opaque;
    int64_t deadline = __atomic_load_n(&d->deadline_us, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&d->stop, __ATOMIC_ACQUIRE) || (deadline > 0 && av_gettime_relative() > deadline);
}

void dc_deadline_set(dc_deadline *d, double seconds) {
    __atomic_store_n(&d->deadline_us, av_gettime_relative() + (int64_t)(seconds * 1e6), __ATOMIC_RELEASE);
}

void dc_deadline_stop(dc_deadline *d) {
    __atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
}

/* Opens `url` for writing as the muxer's I/O, interruptible by `d`. */
int dc_open_live_output(AVFormatContext *ctx, const char *url, dc_deadline *d, AVDictionary **options) {
    ctx->interrupt_callback.callback = dc_deadline_passed;
    ctx->interrupt_callback.opaque = d;
    return avio_open2(&ctx->pb, url, AVIO_FLAG_WRITE, &ctx->interrupt_callback, options);
}

static dc_log_sink log_sink;

static void dc_log_callback(void *avcl, int level, const char *format, va_list args) {
    if (level > av_log_get_level()) return;
    char line[2048];
    int print_prefix = 1;
    av_log_format_line2(avcl, level, format, args, line, sizeof line, &print_prefix);
    dc_log_sink sink = log_sink;
    if (sink && line[0]) sink(line, level);
}

void dc_log_to(dc_log_sink sink) {
    log_sink = sink;
    av_log_set_callback(sink ? dc_log_callback : av_log_default_callback);
}
