// Memory floor for record-yuyv-1080p: the traffic of converting a cold 1080p YUYV buffer
// (4 MB read, 3 MB written) done as plain memcpy, the least any conversion can do, on one
// thread and on two. Buffers cycle through 72 MB, more than the last-level cache, like
// `dualcam bench --sources cold`. Prints p50 and p99 over 600 frames.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

enum { RING = 18, FRAMES = 600 };
static const size_t yuyvBytes = 1920 * 1080 * 2, i420Bytes = 1920 * 1080 * 3 / 2;
static uint8_t *sources[RING], *destinations[RING];

typedef struct { const uint8_t *source; uint8_t *destination; size_t written; } Part;
static Part parts[2];
static pthread_barrier_t start, finish;

// Writes `written` bytes and reads a third more than that: a YUYV frame's 4 bytes per
// 2 pixels become 3 bytes of I420.
static void copyPart(const Part *p) {
    memcpy(p->destination, p->source, p->written);
    volatile uint64_t sum = 0;
    for (size_t i = p->written; i < p->written * 4 / 3; i += 64) sum += p->source[i];
}

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        pthread_barrier_wait(&start);
        copyPart(&parts[1]);
        pthread_barrier_wait(&finish);
    }
    return NULL;
}

int main(void) {
    for (int i = 0; i < RING; i++) {
        sources[i] = aligned_alloc(64, yuyvBytes);
        destinations[i] = aligned_alloc(64, i420Bytes);
        memset(sources[i], i, yuyvBytes);
        memset(destinations[i], i, i420Bytes);
    }
    pthread_barrier_init(&start, NULL, 2);
    pthread_barrier_init(&finish, NULL, 2);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    for (int threads = 1; threads <= 2; threads++) {
        double times[FRAMES];
        for (int k = 0; k < FRAMES; k++) {
            const uint8_t *source = sources[k % RING];
            uint8_t *destination = destinations[(k * 7) % RING];
            double t0 = milliseconds();
            if (threads == 1) {
                Part whole = { source, destination, i420Bytes };
                copyPart(&whole);
            } else {
                parts[0] = (Part){ source, destination, i420Bytes / 2 };
                parts[1] = (Part){ source + yuyvBytes / 2, destination + i420Bytes / 2, i420Bytes / 2 };
                pthread_barrier_wait(&start);
                copyPart(&parts[0]);
                pthread_barrier_wait(&finish);
            }
            times[k] = milliseconds() - t0;
        }
        qsort(times, FRAMES, sizeof times[0], byValue);
        printf("memory floor, %d thread(s): 4 MB read + 3 MB written, cold: p50 %.3f ms, p99 %.3f ms\n",
               threads, times[FRAMES / 2], times[FRAMES * 99 / 100]);
    }
    return 0;
}
