// Floor for record-mjpeg-1080p: libavcodec's MJPEG decoder alone, one thread as the camera
// path configures it, on the 1080p 4:2:2 JPEGs j1.jpg ... j8.jpg in the working directory.
// Prints p50 and p99 over 400 decodes, after 20 to warm up.
#include <libavcodec/avcodec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

enum { JPEGS = 8, WARMUP = 20, DECODES = 400 };

int main(void) {
    unsigned char *jpeg[JPEGS];
    long size[JPEGS];
    if (loadJPEGs(jpeg, size, JPEGS, AV_INPUT_BUFFER_PADDING_SIZE)) return 1;
    const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG);
    AVCodecContext *context = avcodec_alloc_context3(codec);
    context->thread_count = 1;
    if (avcodec_open2(context, codec, NULL) < 0) return 1;
    AVPacket *packet = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    double times[DECODES];
    for (int k = -WARMUP; k < DECODES; k++) {
        int n = (k + WARMUP) % JPEGS;
        double t0 = milliseconds();
        packet->data = jpeg[n];
        packet->size = (int)size[n];
        if (avcodec_send_packet(context, packet) < 0 || avcodec_receive_frame(context, frame) < 0) return 1;
        av_frame_unref(frame);
        if (k >= 0) times[k] = milliseconds() - t0;
    }
    qsort(times, DECODES, sizeof times[0], byValue);
    printf("MJPEG decode floor, 1080p 4:2:2, %ld kB JPEGs: p50 %.2f ms, p99 %.2f ms\n",
           size[0] / 1000, times[DECODES / 2], times[DECODES * 99 / 100]);
    return 0;
}
