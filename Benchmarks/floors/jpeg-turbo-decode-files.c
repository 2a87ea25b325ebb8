// The decoding part of record's CPU floor: libjpeg-turbo, the decoder dualcam's camera path
// uses, decoding each JPEG named on the command line once, to its raw planes and at
// 1/DENOM of its size (the scale dualcam decodes that camera at), and nothing else. Prints
// the CPU seconds this process spent decoding.
//   jpeg-turbo-decode-files DENOM FILE...
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "jpeg-raw-decode.h"

static double cpuSeconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

// The whole file in memory, as a camera's buffer is: reading it is not decoding.
static unsigned char *load(const char *name, long *size) {
    FILE *f = fopen(name, "rb");
    if (!f) { perror(name); return NULL; }
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    rewind(f);
    unsigned char *data = malloc((size_t)*size);
    if (!data || fread(data, 1, (size_t)*size, f) != (size_t)*size) { perror(name); fclose(f); free(data); return NULL; }
    fclose(f);
    return data;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s DENOM FILE...\n", argv[0]); return 2; }
    int denom = atoi(argv[1]);
    if (denom != 1 && denom != 2 && denom != 4 && denom != 8) { fprintf(stderr, "DENOM: 1, 2, 4 or 8\n"); return 2; }
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr errors;
    cinfo.err = jpeg_std_error(&errors);
    jpeg_create_decompress(&cinfo);
    double spent = 0;
    for (int i = 2; i < argc; i++) {
        long size;
        unsigned char *jpeg = load(argv[i], &size);
        if (!jpeg) return 1;
        double t0 = cpuSeconds();
        decodeRaw(&cinfo, jpeg, (unsigned long)size, (unsigned)denom);
        spent += cpuSeconds() - t0;
        free(jpeg);
    }
    printf("%.3f\n", spent);
    return 0;
}
