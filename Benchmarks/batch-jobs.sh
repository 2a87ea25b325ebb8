#!/usr/bin/env bash
# `dualcam batch` of ROWS short rows (the bundled 3 s clips, 1280x720 HEVC) with --jobs 1,
# 2 and 4 and with the planner's choice (no --jobs), release build, each from nothing
# (--force), alternated ROUNDS times so that a slow spell of a shared machine falls on
# every setting alike. Prints the wall seconds of each run and the median of each setting.
# Usage: Benchmarks/batch-jobs.sh [ROWS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-12} rounds=${2:-3}
swift build -c release --product dualcam >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp Fixtures/back-16x9-30fps.mp4 "$dir/talk.mp4"
cp Fixtures/front-4x3-25fps.mkv "$dir/face.mkv"
{ echo "back,front,output"; for i in $(seq "$rows"); do echo "talk.mp4,face.mkv,out-$i.mov"; done; } > "$dir/rows.csv"
declare -A times
for round in $(seq "$rounds"); do
  for jobs in 1 2 4 planned; do
    option=(); [ "$jobs" = planned ] || option=(--jobs "$jobs")
    start=$(date +%s.%N)
    .build/release/dualcam batch "$dir/rows.csv" --size 1280x720 --force "${option[@]}" > /dev/null
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    times[$jobs]+="$seconds "
    printf 'round %d, --jobs %s: %.2f s\n' "$round" "$jobs" "$seconds"
  done
done
for jobs in 1 2 4 planned; do
  median=$(tr ' ' '\n' <<<"${times[$jobs]}" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf 'batch-jobs: %d rows, --jobs %s: median %.2f s of %d runs\n' "$rows" "$jobs" "$median" "$rounds"
done
echo "batch-jobs: $(nproc) CPUs here; the planner runs two per CPU, at most 16 (memory allowing) at a time"
