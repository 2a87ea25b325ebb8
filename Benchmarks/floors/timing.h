// What the floor programs share: a monotonic clock in milliseconds, a sort order for the
// times they collect, and the JPEGs j1.jpg ... jN.jpg of the working directory loaded.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double milliseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int byValue(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Reads j1.jpg ... j<count>.jpg, each into a zeroed buffer `padding` bytes longer than the
// file (libavcodec reads a little past the data). Returns 0, or 1 after saying what failed.
static int loadJPEGs(unsigned char *jpeg[], long size[], int count, size_t padding) {
    for (int i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "j%d.jpg", i + 1);
        FILE *f = fopen(name, "rb");
        if (!f) { perror(name); return 1; }
        fseek(f, 0, SEEK_END);
        size[i] = ftell(f);
        rewind(f);
        jpeg[i] = calloc(1, (size_t)size[i] + padding);
        if (!jpeg[i] || fread(jpeg[i], 1, (size_t)size[i], f) != (size_t)size[i]) { perror(name); return 1; }
        fclose(f);
    }
    return 0;
}
