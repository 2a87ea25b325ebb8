// Floor for record-mjpeg-1080p with the decoder dualcam uses: libjpeg-turbo decoding the
// same 1080p 4:2:2 JPEGs (j1.jpg ... j8.jpg in the working directory) to its raw planes,
// as the camera path asks it to, and nothing else. Prints p50 and p99 over 400 decodes,
// after 20 to warm up.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>

#include "timing.h"

enum { JPEGS = 8, WARMUP = 20, DECODES = 400, MAX_WIDTH = 4096, MAX_ROWS = 2176 };

static unsigned char planes[3][MAX_WIDTH * MAX_ROWS];

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
        jpeg_mem_src(&cinfo, jpeg[n], (unsigned long)size[n]);
        jpeg_read_header(&cinfo, TRUE);
        cinfo.raw_data_out = TRUE;
        jpeg_start_decompress(&cinfo);
        JSAMPROW rows[3][32];
        JSAMPARRAY image[3] = { rows[0], rows[1], rows[2] };
        int lines = cinfo.max_v_samp_factor * cinfo.min_DCT_scaled_size;
        for (JDIMENSION band = 0; band < cinfo.total_iMCU_rows; band++) {
            for (int c = 0; c < 3; c++) {
                int bandRows = cinfo.comp_info[c].v_samp_factor * cinfo.comp_info[c].DCT_scaled_size;
                for (int r = 0; r < bandRows; r++)
                    rows[c][r] = planes[c] + (size_t)(band * bandRows + r) % MAX_ROWS * MAX_WIDTH;
            }
            jpeg_read_raw_data(&cinfo, image, lines);
        }
        jpeg_finish_decompress(&cinfo);
        if (k >= 0) times[k] = milliseconds() - t0;
    }
    qsort(times, DECODES, sizeof times[0], byValue);
    printf("MJPEG decode floor, libjpeg-turbo (dualcam's decoder), same JPEGs: p50 %.2f ms, p99 %.2f ms\n",
           times[DECODES / 2], times[DECODES * 99 / 100]);
    return 0;
}
