#!/usr/bin/env bash
# Two dualcam builds side by side, as users run them: `record` (defaults, --audio back) of two
# file cameras, 1080p30 and 720p30, for SECONDS, idle and beside two busy processes (one per
# core), alternated ROUNDS times. The back clip flashes white and beeps (1 kHz) from 1.0 to
# 1.2 s into every 2 s. Per run: frames in the summary and in the file, distinct pictures
# (ffmpeg's mpdecimate), composing latency p50/p99/max, skipped slots, the time from the stop
# to the finished file, file size, SSIM against the back clip (the inset's corner aside, the
# same for both), and the flashes' and beeps' times (every beep within a frame of its flash).
# LOADS (default "idle busy") picks the situations; RECORD_ARGS adds options to every take
# (RECORD_ARGS="--size 2560x1440": a take the encoder cannot keep up with even idle).
#   bash Benchmarks/busy-record.sh OLD_DUALCAM NEW_DUALCAM [SECONDS] [ROUNDS]   (release builds)
set -euo pipefail
old=$1 new=$2 seconds=${3:-20} rounds=${4:-2} loads=${LOADS:-idle busy}
read -r -a extra <<< "${RECORD_ARGS:-}"
dir=$(mktemp -d)
burners=()
cleanup() { for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
length=$((seconds + 3)) when='between(mod(t,2),1,1.2)'
ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=1920x1080:r=30:d=$length,noise=alls=3:allf=t,drawbox=c=white:t=fill:enable='$when'" \
  -f lavfi -i "aevalsrc='if($when,0.3*sin(2*PI*1000*t),0)':s=48000:c=stereo:d=$length" \
  -c:v libx264 -preset veryfast -b:v 12M -bf 0 -g 30 -pix_fmt yuv420p -c:a aac -b:a 192k -shortest "$dir/back.mp4"
ffmpeg -nostdin -v error -f lavfi -i "mandelbrot=s=1280x720:r=30,trim=duration=$length" \
  -c:v libx264 -preset veryfast -b:v 4M -bf 0 -g 30 -pix_fmt yuv420p "$dir/front.mp4"
measure() {  # NAME FILE SUMMARY
  local distinct size ssim flashes beeps
  distinct=$(ffmpeg -nostdin -i "$2" -vf mpdecimate -f null - 2>&1 | tr '\r' '\n' | sed -n 's/.*frame= *\([0-9]*\).*/\1/p' | tail -1)
  size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 "$2")
  ssim=$(ffmpeg -nostdin -i "$2" -i "$dir/back.mp4" -lavfi "[1:v]scale=${size/x/:}[ref];[0:v][ref]ssim" -f null - 2>&1 \
    | sed -n 's/.*All:\([0-9.]*\).*/\1/p')
  flashes=$(ffmpeg -nostdin -v error -i "$2" -vf "scale=8:8,format=gray" -f rawvideo - | python3 -c "
import sys; d=sys.stdin.buffer.read(); out=[]; dark=True
for n in range(len(d)//64):
    m=sum(d[64*n:64*n+64])/64
    if dark and m>200: out.append(round(n/30,3))
    dark=m<180
print(' '.join(map(str,out)))")
  beeps=$(ffmpeg -nostdin -v error -i "$2" -ac 1 -ar 48000 -f f32le - | python3 -c "
import sys, array; a=array.array('f'); a.frombytes(sys.stdin.buffer.read()); out=[]; quiet=0
for i,x in enumerate(a):
    if abs(x)>0.05:
        if quiet>=480: out.append(round(i/48000,4))
        quiet=0
    else: quiet+=1
print(' '.join(map(str,out)))")
  python3 - "$1" "$3" "$(stat -c %s "$2")" "$distinct" "$ssim" "$flashes" "$beeps" \
    "$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames,codec_name -of csv=p=0 "$2")" <<'PY'
import json, sys
name, s, size, distinct, ssim, flashes, beeps, probe = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6].split(), sys.argv[7].split(), sys.argv[8]
fl, be = [float(x) for x in flashes], [float(x) for x in beeps]
worst = max((min(abs(b - f) for b in be) for f in fl), default=float("nan")) if be else float("nan")
print(f"{name:12} {probe:12} frames {s['frames']:4} distinct {distinct:4} repeated {s['repeated_frames']:3} "
      f"skipped {s['encoder_skipped_frames']:4} "
      f"p50 {s['latency_p50_ms']:5.2f} p99 {s['latency_p99_ms']:6.2f} max {s['latency_max_ms']:6.1f} ms "
      f"during-take {s.get('frames_encoded_during_take', 0):4} after-stop {s.get('frames_encoded_after_stop', 0):4} finished {s.get('finishing_seconds', float('nan')):5.1f} s "
      f"size {size / 1e6:6.2f} MB SSIM {ssim:.4f} flashes {len(fl)} beeps {len(be)} worst sync {worst * 1000:5.1f} ms")
PY
}
for round in $(seq "$rounds"); do
  for load in $loads; do
    for which in old new; do
      bin=$old; [ "$which" = new ] && bin=$new
      if [ "$load" = busy ]; then yes > /dev/null & burners+=($!); yes > /dev/null & burners+=($!); fi
      sleep 1
      start=$(date +%s.%N)
      "$bin" record --back "$dir/back.mp4" --front "$dir/front.mp4" --audio back --duration "$seconds" --json ${extra[@]+"${extra[@]}"} \
        -o "$dir/$which-$load.mov" --overwrite > "$dir/$which-$load.json" 2> "$dir/$which-$load.log"
      for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
      burners=()
      measure "$which-$load" "$dir/$which-$load.mov" "$dir/$which-$load.json"
    done
  done
done
