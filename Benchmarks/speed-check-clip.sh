#!/usr/bin/env bash
# What the start-up speed check says against what x265 makes of a camera-like picture, for
# one or two dualcam builds, alternated ROUNDS times. The check's figure (the fastest live
# configuration, a fresh cache each time): `dualcam doctor` (ultrafast at 720p, 1080p, 4K) and
# `record --dry-run --preset P` (1080p). The reference: the ffmpeg CLI's libx265 with the live
# take's in-order settings (bframes=0, rc-lookahead=2, its default threading) on raw frames of
# testsrc2 with temporal noise (alls=3, a clean camera; alls=10, a noisy one) and a mandelbrot
# inset, composed beforehand and read from the page cache (N frames; 4K: 45).
#   bash Benchmarks/speed-check-clip.sh [OLD_DUALCAM] NEW_DUALCAM [ROUNDS]   (release builds)
set -euo pipefail
if [ $# -ge 2 ] && [ -x "$2" ]; then builds=("$1" "$2"); rounds=${3:-2}; else builds=("$1"); rounds=${2:-2}; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fixtures=$(cd "$(dirname "$0")/../Fixtures" && pwd)
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); $(ffmpeg -version | head -1)"

compose_raw() {  # size noise frames -> $dir/n$noise-$size.yuv
  local w=${1%x*}
  ffmpeg -nostdin -y -v error -f lavfi -i "testsrc2=s=$1:r=30,noise=alls=$2:allf=t" \
    -f lavfi -i "mandelbrot=s=1280x720:r=30,scale=$((w / 12 * 2)):$((w / 9 * 2))" \
    -filter_complex "[0:v][1:v]overlay=$((w * 10 / 12)):20,format=yuv420p" -frames:v "$3" -f rawvideo "$dir/n$2-$1.yuv"
}
cli_fps() {  # size noise frames preset
  local s
  s=$( { /usr/bin/time -f %e ffmpeg -nostdin -y -v error -f rawvideo -pix_fmt yuv420p -s "$1" -r 30 -i "$dir/n$2-$1.yuv" \
        -c:v libx265 -preset "$4" -x265-params bframes=0:rc-lookahead=2:log-level=error -f null - ; } 2>&1 | tail -1)
  python3 -c "print(round($3 / $s, 1))"
}
check_fps() {  # dualcam -> "720p 1080p 4K veryfast medium"
  local cache="$dir/cache-$RANDOM"
  XDG_CACHE_HOME=$cache "$1" doctor --json > /dev/null
  for p in veryfast medium; do
    XDG_CACHE_HOME=$cache "$1" record --back "$fixtures/back-16x9-30fps.mp4" --front "$fixtures/front-4x3-25fps.mkv" \
      --preset "$p" --dry-run -o "$dir/x.mov" > /dev/null 2>&1
  done
  python3 - "$cache/dualcam/live-encoder.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
def best(prefix):
    k = next(k for k in t if k.startswith(prefix))
    return round(max(x["fps"] for x in t[k]["trials"]), 1)
print(*[best(p) for p in ("libx265 ultrafast crf28 1280x720", "libx265 ultrafast crf28 1920x1080",
                          "libx265 ultrafast crf28 3840x2160", "libx265 veryfast crf28 1920x1080",
                          "libx265 medium crf28 1920x1080")])
EOF
}

for n in 3 10; do compose_raw 1280x720 $n 150; compose_raw 1920x1080 $n 150; compose_raw 3840x2160 $n 45; done
echo "columns: 720p ultrafast, 1080p ultrafast, 4K ultrafast, 1080p veryfast, 1080p medium (fps)"
for round in $(seq "$rounds"); do
  for b in "${builds[@]}"; do echo "round $round check $b: $(check_fps "$b")"; done
  for n in 3 10; do
    echo "round $round x265 on testsrc2 noise=$n: $(cli_fps 1280x720 $n 150 ultrafast) $(cli_fps 1920x1080 $n 150 ultrafast)" \
         "$(cli_fps 3840x2160 $n 45 ultrafast) $(cli_fps 1920x1080 $n 150 veryfast) $(cli_fps 1920x1080 $n 150 medium)"
  done
done
