#!/usr/bin/env bash
# The README's kill-and-finish recipe, RUNS times beside BUSY busy loops: record two 1080p
# and 720p files as cameras (default settings: --encode auto), kill -9 four seconds after the
# command, then `dualcam finish`. For each run: finish's exit status, the seconds the finished
# take holds, and what it should hold at least: from "recording to" to the kill, less a
# second. Fails when a finish fails or a take holds less.
#   bash Benchmarks/kill-and-finish.sh DUALCAM [RUNS] [BUSY]   (a release build)
set -euo pipefail
dualcam=$(realpath "$1"); runs=${2:-10}; busy=${3:-3}
dir=$(mktemp -d)
loops=()
trap 'kill "${loops[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
ffmpeg -nostdin -v error -f lavfi -i testsrc2=s=1920x1080:r=30:d=12 -f lavfi -i sine=f=440:d=12 \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -shortest talk.mp4
ffmpeg -nostdin -v error -f lavfi -i mandelbrot=s=1280x720:r=30 -t 12 -c:v libx264 -preset veryfast -pix_fmt yuv420p face.mp4
for _ in $(seq "$busy"); do (while :; do :; done) & loops+=($!); done
echo "machine: $(nproc) CPUs, $busy busy loops beside it"
failed=0
for i in $(seq "$runs"); do
  rm -f killed.mov killed.mov.* rec.err
  start=$(date +%s.%N)
  "$dualcam" record --back talk.mp4 --front face.mp4 --audio back -o killed.mov 2>rec.err >/dev/null &
  recorder=$!
  until grep -q "recording to" rec.err 2>/dev/null; do sleep 0.02; done
  began=$(echo "$(date +%s.%N) - $start" | bc)
  sleep "$(echo "4 - $began" | bc)"
  kill -9 "$recorder"
  killed=$(echo "$(date +%s.%N) - $start" | bc)
  wait "$recorder" 2>/dev/null || true
  status=0
  "$dualcam" finish killed.mov >/dev/null 2>finish.err || status=$?
  kept=$(ffprobe -v error -show_entries format=duration -of csv=p=0 killed.mov 2>/dev/null || echo 0)
  # The sound from the take's first instant (it began at 0.149 s when the take went to its
  # intermediate at once) and as long as the picture.
  IFS=, read -r sound_start sound_length < <(ffprobe -v error -select_streams a:0 -show_entries stream=start_time,duration \
    -of csv=p=0 killed.mov 2>/dev/null || echo "9,0")
  needed=$(echo "$killed - $began - 1" | bc)
  verdict=ok
  if [ "$status" != 0 ] || [ "$(echo "$kept < $needed" | bc)" = 1 ] || [ "$(echo "$sound_start > 0.05" | bc)" = 1 ]; then
    verdict=FAIL; failed=$((failed + 1))
  fi
  printf 'run %d: finish exit %d, kept %.2f s (sound %.3f-%.2f s), recording from %.2f s to the kill at %.2f s: at least %.2f s needed: %s %s\n' \
    "$i" "$status" "$kept" "$sound_start" "$(echo "$sound_start + $sound_length" | bc)" "$began" "$killed" "$needed" "$verdict" \
    "$(tail -1 finish.err)"
done
echo "kill and finish: $runs runs, $failed failed"
[ "$failed" = 0 ]
