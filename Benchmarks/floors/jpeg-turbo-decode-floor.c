// Floor for record-mjpeg-1080p with the decoder dualcam uses: libjpeg-turbo decoding the
// same 1080p 4:2:2 JPEGs (j1.jpg ... j8.jpg in the working directory) to its raw planes,
// as the camera path asks it to, and nothing else. Prints p50 and p99 over 400 decodes,
// after 20 to warm up.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "jpeg-raw-decode.h"
#include "timing.h"

enum { JPEGS = 8, WARMUP = 20, DECODES = 400 };

int main(void) {
    unsigned char *jpeg[JPEGS];
    long size[JPEGS];
    if (loadJPEGs(jpeg, size, JPEGS, 0)) return 1;
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr errors;
    cinfo.err = jpeg_std_error(&errors);
    jpeg_create_decompress(&cinfo);
    double times[DECODES];
    for (int k = -WARMUP; k < DECODES; k++) {
        int n = (k + WARMUP) % JPEGS;
        double t0 = milliseconds();
        decodeRaw(&cinfo, jpeg[n], (unsigned long)size[n], 1);
        if (k >= 0) times[k] = milliseconds() - t0;
    }
    qsort(times, DECODES, sizeof times[0], byValue);
    printf("MJPEG decode floor, libjpeg-turbo (dualcam's decoder), same JPEGs: p50 %.2f ms, p99 %.2f ms\n",
           times[DECODES / 2], times[DECODES * 99 / 100]);
    return 0;
}
