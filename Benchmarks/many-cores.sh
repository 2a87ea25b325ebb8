#!/usr/bin/env bash
# How dualcam fits the machine that runs it, against the ffmpeg CLI and the encoder alone, in
# one run alternated ROUNDS times (any machine: 2 cores here, 16 on a lent one; run the same
# script on both and compare within each run, never across machines).
#
# compose, four cases (10 s of 1080p30 H.264 back with AAC + 720p30 front, both with sensor-
# like noise; 4K cases from a 3840x2160 back, SECONDS_4K long):
#   1080p x265, 4K x265, 1080p x264, 4K x264 (ultrafast, crf 28; same AAC)
# Per case: wall seconds of dualcam compose, of the ffmpeg one-liner making the same picture-
# in-picture (crop, area scale, overlay), and of the encoder alone on the composite as raw
# frames (the floor: what no compositor can beat); peak RSS of dualcam and ffmpeg. Prints
# dualcam/ffmpeg (fps ratio, >= 1 is faster) and encoder-alone/dualcam (1 = as fast as the
# encoder alone; 0.9 = within 10 %).
# record, two checks (files played as cameras, --audio back, --json): a RECORD_SECONDS 1080p30
# HEVC take and a RECORD_SECONDS 4K30 HEVC take: frames, skipped, whether it fell back on the
# intermediate, frames encoded after the stop, seconds from the stop to the finished file.
#
#   bash Benchmarks/many-cores.sh [DUALCAM] [ROUNDS]   (DUALCAM: .build/release/dualcam; ROUNDS: 2)
#   SECONDS_4K=5 RECORD_SECONDS=20 bash Benchmarks/many-cores.sh ...
#   BEFORE=OTHER_DUALCAM ... times another build of dualcam too, alternated in the same rounds
#   RECORD_SECONDS=0 ... leaves the record checks out
#   RESULTS=DIR ... keeps the raw figures (times, each record's --json, --verbose and --dry-run)
# Needs ffmpeg with libx265 and libx264, GNU time, python3 (Benchmarks/carry packs all but python3).
set -euo pipefail
dualcam=$(realpath "${1:-.build/release/dualcam}")
rounds=${2:-2}
seconds_4k=${SECONDS_4K:-5}
record_seconds=${RECORD_SECONDS:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
echo "machine: $(nproc) CPUs allowed of $(getconf _NPROCESSORS_ONLN), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "dualcam: $("$dualcam" --version | head -1); ffmpeg: $(ffmpeg -version | head -1)"

noise=noise=alls=10:allf=t
ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=1920x1080:r=30:d=10,$noise" -f lavfi -i "sine=f=440:r=48000:d=10" \
  -c:v libx264 -preset veryfast -b:v 16M -bf 0 -g 30 -pix_fmt yuv420p -c:a aac -ac 2 -b:a 128k back.mp4
ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=3840x2160:r=30:d=$seconds_4k,$noise" -f lavfi -i "sine=f=440:r=48000:d=$seconds_4k" \
  -c:v libx264 -preset veryfast -b:v 40M -bf 0 -g 30 -pix_fmt yuv420p -c:a aac -ac 2 -b:a 128k back4k.mp4
ffmpeg -nostdin -v error -f lavfi -i "mandelbrot=s=1280x720:r=30,trim=duration=10,$noise" \
  -c:v libx264 -preset veryfast -b:v 6M -bf 0 -g 30 -pix_fmt yuv420p front.mp4

# dualcam's layout in ffmpeg's terms: the front's centre crop (541x720 of 1280x720), area-
# scaled into the inset (160x213 at 1080p, twice that at 4K), 16 (32) pixels from the top right.
graph_1080='[1:v]crop=541:720:370:0,scale=160:213:flags=area[i];[0:v][i]overlay=1744:16[o]'
graph_4k='[1:v]crop=541:720:370:0,scale=320:426:flags=area[i];[0:v][i]overlay=3488:32[o]'
# The encoders' input for the floor, made untimed: each composite as raw frames, the sound as PCM.
ffmpeg -nostdin -v error -i back.mp4 -i front.mp4 -filter_complex "$graph_1080" -map '[o]' -f rawvideo -pix_fmt yuv420p raw1080.yuv
ffmpeg -nostdin -v error -i back4k.mp4 -i front.mp4 -filter_complex "$graph_4k" -map '[o]' -f rawvideo -pix_fmt yuv420p raw4k.yuv
ffmpeg -nostdin -v error -i back.mp4 -vn -c:a pcm_s16le sound.wav

# GNU time: the one on PATH first (a packed one on a machine without it, Benchmarks/carry).
time_command=$(type -P time || echo /usr/bin/time)
aac=(-c:a aac -b:a 160k)
encoder_args() { [ "$1" = hevc ] && echo "-c:v libx265 -preset ultrafast -crf 28 -x265-params log-level=none -tag:v hvc1" \
                   || echo "-c:v libx264 -preset ultrafast -crf 28"; }
timed() {  # NAME COMMAND...: one line in times.txt: name, wall, CPU, peak RSS (kB)
  local name=$1; shift
  "$time_command" -f "$name %e %U %S %M" -a -o times.txt "$@" >/dev/null 2>>errors.txt
}
for round in $(seq "$rounds"); do
  for case in "1080p hevc" "4k hevc" "1080p h264" "4k h264"; do
    set -- $case
    size=$1 codec=$2
    if [ "$size" = 4k ]; then back=back4k.mp4 graph=$graph_4k raw=raw4k.yuv dims=3840x2160; else back=back.mp4 graph=$graph_1080 raw=raw1080.yuv dims=1920x1080; fi
    # shellcheck disable=SC2046
    timed "$size-$codec-ffmpeg" ffmpeg -nostdin -v error -y -i "$back" -i front.mp4 -filter_complex "$graph" -map '[o]' -map 0:a \
      $(encoder_args "$codec") "${aac[@]}" ffmpeg.mov
    if [ -n "${BEFORE:-}" ]; then
      timed "$size-$codec-before" "$BEFORE" compose "$back" front.mp4 -o dualcam.mov --overwrite --size "$dims" --codec "$codec" \
        --preset ultrafast --crf 28 --quiet
    fi
    timed "$size-$codec-dualcam" "$dualcam" compose "$back" front.mp4 -o dualcam.mov --overwrite --size "$dims" --codec "$codec" \
      --preset ultrafast --crf 28 --quiet
    # shellcheck disable=SC2046
    timed "$size-$codec-encoder" ffmpeg -nostdin -v error -y -f rawvideo -pix_fmt yuv420p -s "$dims" -r 30 -i "$raw" -i sound.wav \
      -map 0:v -map 1:a $(encoder_args "$codec") "${aac[@]}" encode.mov
  done
done

# With RESULTS: what compose says of itself in the heaviest case (its plan, stage by stage).
if [ -n "${RESULTS:-}" ]; then
  "$dualcam" compose back4k.mp4 front.mp4 -o dualcam.mov --overwrite --size 3840x2160 --codec hevc --preset ultrafast --crf 28 \
    --verbose --json > compose-4k-hevc.json 2> compose-4k-hevc.log || true
fi

# The record checks, once each: a take of files as cameras, finished.
for size in 1920x1080 3840x2160; do
  [ "$record_seconds" -gt 0 ] || break
  back=back.mp4; [ "$size" = 3840x2160 ] && back=back4k.mp4
  # A camera file at least as long as the take: the clip looped.
  ffmpeg -nostdin -v error -y -stream_loop -1 -i "$back" -t $((record_seconds + 3)) -c copy "cam-$size.mp4"
  ffmpeg -nostdin -v error -y -stream_loop -1 -i front.mp4 -t $((record_seconds + 3)) -c copy "front-$size.mp4"
  "$dualcam" record --back "cam-$size.mp4" --front "front-$size.mp4" --audio back --size "$size" --dry-run > "plan-$size.txt" 2>&1 || true
  "$dualcam" record --back "cam-$size.mp4" --front "front-$size.mp4" --audio back --size "$size" --duration "$record_seconds" \
    --json --verbose -o "take-$size.mov" --overwrite > "record-$size.json" 2> "record-$size.log" || true
done

if [ -n "${RESULTS:-}" ]; then
  mkdir -p "$RESULTS" && cp times.txt errors.txt compose-4k-hevc.* plan-*.txt record-*.json record-*.log "$RESULTS/" 2>/dev/null || true
fi
python3 - "$rounds" "$seconds_4k" "$record_seconds" <<'PY'
import json, statistics, sys
from collections import defaultdict
rounds, seconds_4k = int(sys.argv[1]), float(sys.argv[2])
wall, rss = defaultdict(list), defaultdict(list)
for line in open("times.txt"):
    name, w, user, system, kb = line.split()
    wall[name].append(float(w)); rss[name].append(int(kb) / 1024)
if wall.get("1080p-hevc-before"):
    print(f"{'case':12} {'before s':>9} {'dualcam s':>10} {'before/dualcam':>15}")
    for case in ("1080p-hevc", "4k-hevc", "1080p-h264", "4k-h264"):
        b, d = (statistics.median(wall[f"{case}-{t}"]) for t in ("before", "dualcam"))
        print(f"{case:12} {b:9.2f} {d:10.2f} {b / d:14.2f}x   RSS before {max(rss[case + '-before']):.0f} MB")
print(f"{'case':12} {'dualcam s':>10} {'ffmpeg s':>9} {'encoder s':>10} {'vs ffmpeg':>10} {'vs encoder':>11} {'RSS dualcam':>12} {'RSS ffmpeg':>11}")
for case in ("1080p-hevc", "4k-hevc", "1080p-h264", "4k-h264"):
    d, f, e = (statistics.median(wall[f"{case}-{t}"]) for t in ("dualcam", "ffmpeg", "encoder"))
    print(f"{case:12} {d:10.2f} {f:9.2f} {e:10.2f} {f / d:9.2f}x {e / d:10.2f}x {max(rss[case + '-dualcam']):10.0f} MB "
          f"{max(rss[case + '-ffmpeg']):9.0f} MB")
for size in ("1920x1080", "3840x2160") if int(sys.argv[3]) > 0 else ():
    try:
        s = json.load(open(f"record-{size}.json"))
    except Exception:
        print(f"record {size}: no summary: " + open(f"record-{size}.log").read().strip().splitlines()[-1])
        continue
    log = open(f"record-{size}.log").read()
    print(f"record {size}: {s['frames']} frames, {s['encoder_skipped_frames']} skipped, "
          f"{'fell back on the intermediate' if 'fell behind' in log else 'live all along'}, "
          f"{s.get('frames_encoded_during_take', 0)} of the intermediate encoded during the take, "
          f"{s.get('frames_encoded_after_stop', 0)} after the stop, finished {s.get('finishing_seconds', float('nan')):.1f} s "
          f"after it; p99 {s['latency_p99_ms']:.1f} ms; live encoder {s['plan'].get('live_encoder_trials')}")
PY
