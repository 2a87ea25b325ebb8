#!/usr/bin/env bash
# What this machine allows at best on the camera paths, measured without dualcam, so that
# `dualcam bench`'s record-* figures can be read against them (README, "Latency benchmarks"):
# - memory-floor: a cold 1080p YUYV buffer's traffic (4 MB read, 3 MB written) as plain
#   memcpy, on one thread and on two: no conversion can be cheaper;
# - mjpeg-decode-floor: libavcodec decoding a 100 kB 1080p 4:2:2 JPEG, nothing else;
# - jpeg-turbo-decode-floor: libjpeg-turbo, the decoder dualcam's camera path uses, on the
#   same JPEGs.
#
#   bash Benchmarks/floors.sh        (needs gcc, and the libavcodec and libjpeg -dev packages)
set -euo pipefail
cd "$(dirname "$0")/floors"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gcc -O3 memory-floor.c -o "$dir/memory-floor" -lpthread
gcc -O2 mjpeg-decode-floor.c -o "$dir/mjpeg-decode-floor" $(pkg-config --cflags --libs libavcodec libavutil)
gcc -O2 jpeg-turbo-decode-floor.c -o "$dir/jpeg-turbo-decode-floor" $(pkg-config --cflags --libs libjpeg)
"$dir/memory-floor"
ffmpeg -nostdin -loglevel error -f lavfi -i "testsrc2=s=1920x1080,noise=alls=3:allf=t" -frames:v 8 -q:v 4 \
  -pix_fmt yuvj422p "$dir/j%d.jpg"
(cd "$dir" && ./mjpeg-decode-floor && ./jpeg-turbo-decode-floor)
