// The decoding part of record's CPU floor: libjpeg-turbo, the decoder dualcam's camera path
// uses, decoding each JPEG named on the command line once, to its raw planes and at
// 1/DENOM of its size (the scale dualcam decodes that camera at), and nothing else. Prints
// the CPU seconds this process spent decoding.
//   jpeg-turbo-decode-files DENOM FILE...
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <jpeglib.h>

enum { MAX_WIDTH = 4096, MAX_ROWS = 2176 };

static unsigned char planes[3][MAX_WIDTH * MAX_ROWS];

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
        jpeg_mem_src(&cinfo, jpeg, (unsigned long)size);
        jpeg_read_header(&cinfo, TRUE);
        cinfo.raw_data_out = TRUE;
        cinfo.scale_num = 1;
        cinfo.scale_denom = (unsigned)denom;
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
        spent += cpuSeconds() - t0;
        free(jpeg);
    }
    printf("%.3f\n", spent);
    return 0;
}
