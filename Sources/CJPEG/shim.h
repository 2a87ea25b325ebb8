#ifndef DUALCAM_CJPEG_SHIM_H
#define DUALCAM_CJPEG_SHIM_H
/* libjpeg(-turbo) reports fatal errors by calling error_exit, which must not return: the
 * standard one exits the process. Swift cannot setjmp, so every call that can fail goes
 * through a function here that catches the longjmp and returns -1 with the message. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct dc_jpeg {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr errors;
    jmp_buf jump;
    /* A warning that means picture data was lost (libjpeg patches it and goes on). */
    int damaged;
    char message[JMSG_LENGTH_MAX];
} dc_jpeg;

static void dc_jpeg_error_exit(j_common_ptr c) {
    dc_jpeg *d = (dc_jpeg *)c;
    c->err->format_message(c, d->message);
    longjmp(d->jump, 1);
}

/* Many webcams end every JPEG with a byte or two of padding before the end-of-image
 * marker ("N extraneous bytes", a libjpeg warning people see with most cheap cameras);
 * thousands of them mean the scan ended far from where its data did: a frame cut short in
 * transfer whose buffer still holds the tail of an older one. */
enum { DC_JPEG_PADDING_TOLERATED = 64 };

static void dc_jpeg_emit_message(j_common_ptr c, int level) {
    dc_jpeg *d = (dc_jpeg *)c;
    if (level >= 0) return;
    switch (c->err->msg_code) {
    case JWRN_EXTRANEOUS_DATA:
        if (c->err->msg_parm.i[0] <= DC_JPEG_PADDING_TOLERATED) break;
        /* fall through */
    case JWRN_HIT_MARKER: case JWRN_HUFF_BAD_CODE: case JWRN_JPEG_EOF: case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL: case JWRN_BOGUS_PROGRESSION:
        if (!d->damaged) c->err->format_message(c, d->message);
        d->damaged = 1;
        break;
    default: break;
    }
}

static inline dc_jpeg *dc_jpeg_create(void) {
    dc_jpeg *d = (dc_jpeg *)calloc(1, sizeof *d);
    if (!d) return NULL;
    d->cinfo.err = jpeg_std_error(&d->errors);
    d->errors.error_exit = dc_jpeg_error_exit;
    d->errors.emit_message = dc_jpeg_emit_message;
    if (setjmp(d->jump)) { free(d); return NULL; }
    jpeg_create_decompress(&d->cinfo);
    return d;
}

static inline void dc_jpeg_destroy(dc_jpeg *d) {
    if (!d) return;
    jpeg_destroy_decompress(&d->cinfo);
    free(d);
}

/* What a raw decode will write, per component: samples per row and rows, each padded to
 * whole blocks, and rows per jpeg_read_raw_data call. */
typedef struct dc_jpeg_layout {
    int width, height, components, ycbcr;
    int plane_width[3], plane_rows[3], band_rows[3];
} dc_jpeg_layout;

#define DC_JPEG_MAX_PIXELS (8192 * 8192)

/* Reads the header and starts a raw (planar, not upsampled) decode at 1/2^shift. */
static inline int dc_jpeg_start(dc_jpeg *d, const uint8_t *jpeg, size_t size, int shift, dc_jpeg_layout *out) {
    d->damaged = 0;
    d->message[0] = 0;
    if (setjmp(d->jump)) { jpeg_abort_decompress(&d->cinfo); return -1; }
    jpeg_mem_src(&d->cinfo, jpeg, (unsigned long)size);
    jpeg_read_header(&d->cinfo, TRUE);
    /* Before anything is allocated for it: a damaged or crafted header can say 65500x65500. */
    if ((uint64_t)d->cinfo.image_width * d->cinfo.image_height > (uint64_t)DC_JPEG_MAX_PIXELS) {
        snprintf(d->message, sizeof d->message, "a %ux%u picture, larger than 8192x8192",
                 (unsigned)d->cinfo.image_width, (unsigned)d->cinfo.image_height);
        jpeg_abort_decompress(&d->cinfo);
        return -1;
    }
    d->cinfo.raw_data_out = TRUE;
    d->cinfo.dct_method = JDCT_ISLOW;
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = 1u << shift;
    jpeg_start_decompress(&d->cinfo);
    out->width = (int)d->cinfo.output_width;
    out->height = (int)d->cinfo.output_height;
    out->components = d->cinfo.num_components;
    out->ycbcr = d->cinfo.jpeg_color_space == JCS_YCbCr;
    for (int c = 0; c < 3 && c < d->cinfo.num_components; c++) {
        jpeg_component_info *k = &d->cinfo.comp_info[c];
        out->plane_width[c] = (int)k->width_in_blocks * k->DCT_scaled_size;
        out->band_rows[c] = k->v_samp_factor * k->DCT_scaled_size;
        out->plane_rows[c] = (int)d->cinfo.total_iMCU_rows * out->band_rows[c];
    }
    return 0;
}

/* Decodes iMCU row `band` (band_rows[c] rows of each component) into three planes laid
 * out as dc_jpeg_start said. Bands go in order, from 0 to dc_jpeg_bands() - 1. */
static inline int dc_jpeg_read_band(dc_jpeg *d, uint8_t *const planes[3], const int strides[3], const dc_jpeg_layout *l,
                                    int band) {
    JSAMPROW rows[3][32];
    JSAMPARRAY image[3] = { rows[0], rows[1], rows[2] };
    for (int c = 0; c < 3; c++) {
        if (l->band_rows[c] > 32) { strcpy(d->message, "unsupported sampling"); jpeg_abort_decompress(&d->cinfo); return -1; }
        for (int r = 0; r < l->band_rows[c]; r++)
            rows[c][r] = planes[c] + (size_t)(band * l->band_rows[c] + r) * (size_t)strides[c];
    }
    if (setjmp(d->jump)) { jpeg_abort_decompress(&d->cinfo); return -1; }
    const JDIMENSION lines = (JDIMENSION)(d->cinfo.max_v_samp_factor * d->cinfo.min_DCT_scaled_size);
    if (jpeg_read_raw_data(&d->cinfo, image, lines) == 0) {
        strcpy(d->message, "JPEG data ended early");
        jpeg_abort_decompress(&d->cinfo);
        return -1;
    }
    return 0;
}

static inline int dc_jpeg_bands(const dc_jpeg *d) { return (int)d->cinfo.total_iMCU_rows; }

static inline int dc_jpeg_finish(dc_jpeg *d) {
    if (setjmp(d->jump)) { jpeg_abort_decompress(&d->cinfo); return -1; }
    jpeg_finish_decompress(&d->cinfo);
    return 0;
}

static inline void dc_jpeg_abort(dc_jpeg *d) { jpeg_abort_decompress(&d->cinfo); }
#endif
