#!/usr/bin/env bash
# x265 alone (the ffmpeg CLI), 1080p ultrafast as a recording encodes (no B-frames, lookahead
# 2), on camera-like frames (testsrc2 with noise, raw, from the page cache): default threading
# against wpp=0 (what `record` uses), idle and beside two busy processes (one per core), and
# at nice 10 (the live encoder's priority) beside them. Alternated ROUNDS times; prints fps.
#   bash Benchmarks/x265-threading.sh [ROUNDS]
set -euo pipefail
rounds=${1:-2}
dir=$(mktemp -d)
burners=()
cleanup() { for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=1920x1080:r=30:d=5,noise=alls=6:allf=t" -f rawvideo -pix_fmt yuv420p "$dir/clip.yuv"
encode() {  # FRAMES NICE PARAMS
  local start end
  start=$(date +%s.%N)
  nice -n "$2" ffmpeg -nostdin -v error -f rawvideo -pix_fmt yuv420p -s 1920x1080 -r 30 -i "$dir/clip.yuv" -frames:v "$1" \
    -c:v libx265 -preset ultrafast -crf 28 -x265-params "log-level=none:bframes=0:rc-lookahead=2${3:+:$3}" -f null -
  end=$(date +%s.%N)
  python3 -c "print('%.1f' % ($1 / ($end - $start)))"
}
for round in $(seq "$rounds"); do
  for load in idle busy; do
    if [ "$load" = busy ]; then yes > /dev/null & burners+=($!); yes > /dev/null & burners+=($!); sleep 0.5; fi
    frames=150; [ "$load" = busy ] && frames=60
    for params in "" "wpp=0"; do
      echo "round $round, $load, nice 0, ${params:-default threading}: $(encode $frames 0 "$params") fps"
    done
    if [ "$load" = busy ]; then echo "round $round, busy, nice 10, wpp=0: $(encode 30 10 wpp=0) fps"; fi
    for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
    burners=()
  done
done
