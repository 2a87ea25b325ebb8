// How the libjpeg-turbo floor programs decode, as dualcam's camera path asks it to
// (Sources/CJPEG/shim.h): to the raw planes, no colour conversion nor upsampling, at
// 1/denom of the size. The rows of each band go round one large buffer per component.
#include <stdio.h>
#include <jpeglib.h>

enum { RAW_MAX_WIDTH = 4096, RAW_MAX_ROWS = 2176 };

static unsigned char rawPlanes[3][RAW_MAX_WIDTH * RAW_MAX_ROWS];

static void decodeRaw(struct jpeg_decompress_struct *cinfo, unsigned char *jpeg, unsigned long size, unsigned denom) {
    jpeg_mem_src(cinfo, jpeg, size);
    jpeg_read_header(cinfo, TRUE);
    cinfo->raw_data_out = TRUE;
    cinfo->scale_num = 1;
    cinfo->scale_denom = denom;
    jpeg_start_decompress(cinfo);
    JSAMPROW rows[3][32];
    JSAMPARRAY image[3] = { rows[0], rows[1], rows[2] };
    int lines = cinfo->max_v_samp_factor * cinfo->min_DCT_scaled_size;
    for (JDIMENSION band = 0; band < cinfo->total_iMCU_rows; band++) {
        for (int c = 0; c < 3; c++) {
            int bandRows = cinfo->comp_info[c].v_samp_factor * cinfo->comp_info[c].DCT_scaled_size;
            for (int r = 0; r < bandRows; r++)
                rows[c][r] = rawPlanes[c] + (size_t)(band * bandRows + r) % RAW_MAX_ROWS * RAW_MAX_WIDTH;
        }
        jpeg_read_raw_data(cinfo, image, lines);
    }
    jpeg_finish_decompress(cinfo);
}
