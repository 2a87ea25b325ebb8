#ifndef DUALCAM_CALSA_SHIM_H
#define DUALCAM_CALSA_SHIM_H
#include <alsa/asoundlib.h>
/* alsa-lib's *_alloca helpers are macros; the _malloc variants are used instead. */
static inline int dc_snd_pcm_format_s16(void) { return SND_PCM_FORMAT_S16_LE; }
/* alsa-lib prints its own diagnostics to stderr; errors reach us as return codes, and
 * DualCam reports them in one line. The handler is variadic, which Swift cannot define. */
static void dc_snd_silent_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline void dc_snd_quiet(void) { snd_lib_error_set_handler(dc_snd_silent_error); }
#endif
