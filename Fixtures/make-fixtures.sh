#!/usr/bin/env bash
# Regenerates the bundled test clips with the ffmpeg CLI (Debian 12: ffmpeg 5.1).
# Each is a few seconds of synthetic video, small enough to commit.
#
#   back-16x9-30fps.mp4      640x360 H.264 30 fps, BT.709, AAC 44.1 kHz mono 440 Hz (16:9 back with audio)
#   front-4x3-25fps.mkv      640x480 H.264 25 fps, tagged BT.601, no audio         (4:3 front)
#   portrait-rotated-60fps.mp4  stored 640x360, display matrix -> shows 360x640 upright,
#                            red upper half / blue lower half, 60 fps, AAC 48 kHz stereo 880 Hz
#   webcam-mjpeg-30fps.avi   320x240 MJPEG yuvj422p (full range) 30 fps, no audio (what webcams send)
#   audio-only.m4a           AAC only: a file with no video stream, for error tests
set -euo pipefail
cd "$(dirname "$0")"
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
x264=(-c:v libx264 -preset medium -crf 30 -pix_fmt yuv420p -g 30 -bf 0)

ff -f lavfi -i "testsrc2=size=640x360:rate=30:duration=3" \
   -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=3" \
   "${x264[@]}" -colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range tv \
   -c:a aac -b:a 48k -ac 1 -movflags +faststart back-16x9-30fps.mp4

ff -f lavfi -i "testsrc=size=640x480:rate=25:duration=3" \
   "${x264[@]}" -colorspace smpte170m -color_primaries smpte170m -color_trc smpte170m -color_range tv \
   front-4x3-25fps.mkv

# Upright picture: red above blue, with a moving white square so frames differ.
# Stored turned a quarter counter-clockwise; the rotate tag tells players to turn it back.
ff -f lavfi -i "color=red:s=360x320:r=60:d=2[a];color=blue:s=360x320:r=60:d=2[b];[a][b]vstack,format=yuv420p,drawbox=x=20+t*100:y=300:w=40:h=40:color=white:t=fill,transpose=clock" \
   -f lavfi -i "sine=frequency=880:sample_rate=48000:duration=2" \
   "${x264[@]}" -g 60 -colorspace bt709 -color_primaries bt709 -color_trc bt709 \
   -c:a aac -b:a 64k -ac 2 portrait-unrotated.tmp.mp4
ff -i portrait-unrotated.tmp.mp4 -c copy -metadata:s:v:0 rotate=90 -movflags +faststart portrait-rotated-60fps.mp4
rm -f portrait-unrotated.tmp.mp4

ff -f lavfi -i "testsrc2=size=320x240:rate=30:duration=1.5" \
   -c:v mjpeg -pix_fmt yuvj422p -q:v 14 webcam-mjpeg-30fps.avi

ff -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=1" -c:a aac -b:a 32k audio-only.m4a

ls -l
