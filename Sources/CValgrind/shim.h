// Callgrind's client requests: they are macros of inline assembly, which Swift cannot
// import, and do nothing (a few instructions) when the program does not run under valgrind.
#include <valgrind/valgrind.h>
#include <valgrind/callgrind.h>

static inline int dc_running_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
static inline void dc_callgrind_zero_stats(void) { CALLGRIND_ZERO_STATS; }
static inline void dc_callgrind_toggle_collect(void) { CALLGRIND_TOGGLE_COLLECT; }
static inline void dc_callgrind_dump_stats_at(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
