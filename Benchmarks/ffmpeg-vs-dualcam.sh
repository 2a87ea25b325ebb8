#!/usr/bin/env bash
# Compositing cost per frame: the ffmpeg CLI's scale+overlay against `dualcam bench`, in one
# run on the same machine. ffmpeg reads raw I420 frames (no decoding), composes our layout
# (back 1920x1080, front aspect-filled into a 160x213 inset at 1744,16) and discards the
# result; a pass-through run with the same inputs is subtracted, leaving the filters' cost.
#
#   bash Benchmarks/ffmpeg-vs-dualcam.sh [FRAMES]      (release build of dualcam first)
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-600}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
dualcam=.build/release/dualcam
[ -x "$dualcam" ] || swift build -c release >/dev/null

# 30 distinct raw frames per source, looped: the inputs ffmpeg and dualcam get are alike.
ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=1920x1080:r=30:d=1 -pix_fmt yuv420p -f rawvideo "$dir/back.yuv"
ffmpeg -nostdin -v error -f lavfi -i testsrc=s=1280x720:r=30:d=1 -pix_fmt yuv420p -f rawvideo "$dir/front.yuv"

loops=$(( (frames + 29) / 30 - 1 ))
inputs=(-stream_loop "$loops" -f rawvideo -pix_fmt yuv420p -s 1920x1080 -r 30 -i "$dir/back.yuv"
        -stream_loop "$loops" -f rawvideo -pix_fmt yuv420p -s 1280x720 -r 30 -i "$dir/front.yuv")
rtime() {  # seconds of wall time ffmpeg reports for the filter graph $1
  ffmpeg -nostdin -hide_banner -benchmark "${inputs[@]}" -filter_complex "$1" -map "[o]" -frames:v "$frames" -f null - 2>&1 \
    | sed -n 's/.*rtime=\([0-9.]*\)s.*/\1/p'
}
# The same crops dualcam takes (whole pixels): 720p -> 541x720 for the inset, 1080p -> 811x1080;
# swapped: the 720p front fills the frame, the 1080p back is the inset.
pip='[1:v]crop=541:720:370:0,scale=160:213:flags=area[i];[0:v][i]overlay=1744:16[o]'
swapped='[1:v]scale=1920:1080:flags=bilinear[f];[0:v]crop=811:1080:555:0,scale=160:213:flags=area[i];[f][i]overlay=1744:16[o]'
base='[0:v]null[o];[1:v]nullsink'
echo "ffmpeg $(ffmpeg -version | head -1 | cut -d' ' -f3), $frames frames per run"
t_base=$(rtime "$base"); t_pip=$(rtime "$pip"); t_swapped=$(rtime "$swapped")

"$dualcam" bench --frames "$frames" --cases inset-only-720p,kernels-swapped-720p --sources warm --json > "$dir/warm.json"
"$dualcam" bench --frames "$frames" --cases inset-only-720p,kernels-swapped-720p --sources cold --json > "$dir/cold.json"

python3 - "$frames" "$t_base" "$t_pip" "$t_swapped" "$dir/warm.json" "$dir/cold.json" <<'PY'
import json, sys
frames, base, pip, swapped = int(sys.argv[1]), *map(float, sys.argv[2:5])
warm = {c["name"]: c for c in json.load(open(sys.argv[5]))["cases"]}
cold = {c["name"]: c for c in json.load(open(sys.argv[6]))["cases"]}
print(f"{'case':14} {'ffmpeg ms/frame':>16} {'dualcam p50 warm':>17} {'cold':>7} {'ratio warm':>11} {'ratio cold':>11}")
for name, total in (("inset-only-720p", pip), ("kernels-swapped-720p", swapped)):
    ff = (total - base) / frames * 1000
    w, c = warm[name]["p50_ms"], cold[name]["p50_ms"]
    print(f"{name:14} {ff:16.3f} {w:17.3f} {c:7.3f} {ff / w:10.1f}x {ff / c:10.1f}x")
print(f"(ffmpeg: filter graph wall time minus a pass-through run ({base / frames * 1000:.3f} ms/frame), divided by frames)")
PY
