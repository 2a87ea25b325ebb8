#!/usr/bin/env bash
# `record` of two 1080p30 MJPEG cameras against its CPU floor, in CPU seconds per recorded
# second. The cameras are MJPEG files played as cameras: each JPEG, as a webcam sends it
# (full-range 4:2:2, ~100 kB), arrives when its time comes and goes through the camera path
# (libjpeg-turbo, the front at the inset's size). The floor, timed in the same rounds:
# libjpeg-turbo decoding the same number of the same JPEGs alone at the same scales
# (Benchmarks/floors/jpeg-turbo-decode-files.c), and x265 alone, with record's settings,
# on the same composite as raw frames (ffmpeg's overlay of the same JPEGs), less reading
# those frames. dualcam's CPU is
# counted from its "recording to" line to its exit (the file's finishing included; the
# encoder speed check and the cameras' opening before it are not). Runs alternate, RUNS
# times; medians. Exits 1 above 1.1x the floor, or if the encoder fell behind (skipped
# frames would make the take look cheaper than it is).
#
#   bash Benchmarks/record-floor.sh [RUNS] [SECONDS]     (3 and 20; needs gcc and libjpeg's -dev package)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
seconds=${2:-20}
dualcam=$PWD/.build/release/dualcam
[ -x "$dualcam" ] || swift build -c release --product dualcam >/dev/null
floors=$PWD/Benchmarks/floors
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
gcc -O2 "$floors/jpeg-turbo-decode-files.c" -o decode-files $(pkg-config --cflags --libs libjpeg)

# Two seconds more than the take: the cameras start before the recording does.
length=$((seconds + 2))
ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=1920x1080:r=30:d=$length,noise=alls=8:allf=t" \
  -c:v mjpeg -q:v 4 -pix_fmt yuvj422p back.avi
ffmpeg -nostdin -v error -f lavfi -i "smptehdbars=s=1920x1080:r=30:d=$length,noise=alls=8:allf=t" \
  -c:v mjpeg -q:v 4 -pix_fmt yuvj422p front.avi
mkdir back front
ffmpeg -nostdin -v error -i back.avi -c:v copy -f image2 back/%04d.jpg
ffmpeg -nostdin -v error -i front.avi -c:v copy -f image2 front/%04d.jpg

x265=(-c:v libx265 -preset ultrafast -crf 28 -bf 0 -x265-params log-level=none:bframes=0:rc-lookahead=2 -tag:v hvc1)
for i in $(seq "$runs"); do
  python3 - "$dualcam" "$seconds" <<'PY' >> dualcam.txt
import json, os, subprocess, sys
dualcam, seconds = sys.argv[1], sys.argv[2]
p = subprocess.Popen([dualcam, "record", "--back", "back.avi", "--front", "front.avi", "--duration", seconds,
                      "--audio", "none", "--json", "--overwrite", "-o", "out.mov"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
hz = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
at_start, log = None, []
for line in p.stderr:
    log.append(line)
    if at_start is None and "recording to" in line:
        at_start = cpu()
_, status, usage = os.wait4(p.pid, 0)
out = p.stdout.read()
if status != 0 or at_start is None:
    sys.exit("record failed: " + "".join(log))
s = json.loads(out)
print(usage.ru_utime + usage.ru_stime - at_start, s["frames"], s["encoder_skipped_frames"], s["repeated_frames"],
      s["latency_p50_ms"], "decoding MJPG at 1/4 size" in "".join(log))
PY
  # The same number of JPEGs as the take's slots, each camera at the scale dualcam used.
  frames=$(tail -1 dualcam.txt | cut -d' ' -f2)
  shift_front=$(tail -1 dualcam.txt | cut -d' ' -f6)
  [ "$shift_front" = True ] || { echo "record-floor: the front was not decoded at 1/4 size as expected" >&2; exit 1; }
  ./decode-files 1 $(ls back/*.jpg | head -n "$frames") >> decode-back.txt
  ./decode-files 4 $(ls front/*.jpg | head -n "$frames") >> decode-front.txt
  # The composite as raw frames, made by ffmpeg from the same JPEGs (untimed): not the
  # recorded file decoded, whose pictures x265 has already smoothed (re-encoding them cost
  # 13 % less than the take's encoding did).
  [ -f composite.yuv ] || ffmpeg -nostdin -v error -i back.avi -i front.avi -filter_complex \
    "[1]crop=w=ih*160/213:h=ih,scale=160:213[f];[0][f]overlay=1744:16,format=yuv420p" \
    -frames:v "$frames" -f rawvideo composite.yuv
  raw=(-f rawvideo -pix_fmt yuv420p -s 1920x1080 -r 30 -i composite.yuv)
  /usr/bin/time -f "%U %S" -a -o encode.txt ffmpeg -nostdin -v error -y "${raw[@]}" "${x265[@]}" encode.mov
  /usr/bin/time -f "%U %S" -a -o read.txt ffmpeg -nostdin -v error "${raw[@]}" -f null -
done

python3 - "$seconds" <<'PY'
import statistics, sys
seconds = float(sys.argv[1])
runs = [line.split() for line in open("dualcam.txt")]
def cpu(name): return [sum(map(float, line.split())) for line in open(name)]
d = statistics.median(float(r[0]) for r in runs)
back, front = statistics.median(cpu("decode-back.txt")), statistics.median(cpu("decode-front.txt"))
encode = max(statistics.median(cpu("encode.txt")) - statistics.median(cpu("read.txt")), 0)
floor = back + front + encode
for r in runs:
    print(f"dualcam record: {float(r[0]):.2f} CPU s for {r[1]} frames; {r[2]} skipped while the encoder was behind, "
          f"{r[3]} repeated, latency p50 {float(r[4]):.1f} ms")
print(f"per recorded second: dualcam {d / seconds:.3f} CPU s; floor {floor / seconds:.3f} = libjpeg-turbo back "
      f"{back / seconds:.3f} + front at 1/4 {front / seconds:.3f} + x265 alone {encode / seconds:.3f}")
print(f"dualcam record at {d / floor:.3f}x its CPU floor")
bad = []
if any(int(r[2]) > 0 for r in runs): bad.append("the encoder fell behind (frames skipped): the figure is not the whole take's")
if d / floor > 1.1: bad.append(f"{d / floor:.3f}x the floor (1.1x wanted)")
if bad: sys.exit("record-floor: " + "; ".join(bad))
print("record-floor: within 1.1x")
PY
