#!/usr/bin/env bash
# Runs inside the vivid VM (Scripts/vivid-vm.sh): one camera scenario against real V4L2
# devices, writing into OUT (on the shared host file system) for the host to check.
#   scenario.sh NAME OUT       (DUALCAM: the dualcam binary)
# The back camera (/dev/video0) shows solid blue, the front (/dev/video1) solid red, no text.
set -u
name=$1 out=$2
mkdir -p "$out"
colour() { v4l2-ctl -d "$1" --set-ctrl=test_pattern="$2" --set-ctrl=osd_text_mode=2 >/dev/null 2>&1; }
[ -e /dev/video0 ] && colour /dev/video0 9
[ -e /dev/video1 ] && colour /dev/video1 7
record() { "$DUALCAM" record --capture 640x360 --json "$@" > "$out/summary.json" 2> "$out/stderr.txt"; echo $? > "$out/status"; }
case $name in
  devices)
    "$DUALCAM" devices > "$out/devices.txt" 2>&1
    "$DUALCAM" devices --json > "$out/devices.json" 2>&1
    echo $? > "$out/status" ;;
  two-yuyv) record --duration 3 -o "$out/out.mov" ;;
  two-nv12) record --duration 3 --pixel-format NV12 -o "$out/out.mov" ;;
  single) record --duration 2 -o "$out/out.mov" ;;
  streamon-refused)
    # The back camera's next STREAMON fails (vivid answers EINVAL; a USB bus out of
    # bandwidth answers ENOSPC): record must go on with the next format and say so.
    v4l2-ctl -d /dev/video0 --set-ctrl=inject_vidioc_streamon_error=1
    record --duration 2 -o "$out/out.mov" ;;
  front-unplugged | back-fatal-error)
    if [ "$name" = front-unplugged ]; then dev=/dev/video1 ctl=disconnect; else dev=/dev/video0 ctl=inject_fatal_streaming_error; fi
    # Real time matters here (the picture must change mid-file): a 640x360 MPEG-4 canvas,
    # as the emulated VM cannot encode 1080p HEVC at more than 1.6 fps.
    record --duration 4 --canvas 640x360 --video-encoder mpeg4 -o "$out/out.mov" &
    pid=$!
    # Once recording has begun (the file's temporary twin exists), pull the plug.
    for _ in $(seq 100); do ls "$out"/.out.mov.* >/dev/null 2>&1 && break; sleep 0.1; done
    sleep 2
    v4l2-ctl -d "$dev" --set-ctrl="$ctl"=1
    wait "$pid" ;;
  av-sync)
    # One reference event for eye and ear: dualcam-av-marker beeps into the loopback and
    # flips the camera's test pattern at the instant each beep is heard. A small canvas and
    # a cheap encoder keep the emulated VM in real time (it manages 1.6 fps of 1080p x265).
    modprobe -d "$VIVID_VM_MODDIR" snd-aloop
    control=$(v4l2-ctl -d /dev/video0 -L | awk '$1 == "test_pattern" { print $2 }')
    # Debian 12's vivid (6.1) stamps "End of Frame" buffers with the frame's nominal start
    # plus 0.9 of a period, which is ~30 ms after it fills the buffer (later kernels stamp the
    # fill time). "Start of Exposure" stamps the nominal start: the moment the picture is made.
    v4l2-ctl -d /dev/video0 --set-ctrl=timestamp_source=1
    "$DUALCAM" record --capture 320x180 --canvas 320x180 --inset 64x48 --margin 8 --video-encoder mpeg4 \
      --audio hw:Loopback,1 --duration 7 --json -o "$out/out.mov" > "$out/summary.json" 2> "$out/stderr.txt" &
    pid=$!
    for _ in $(seq 100); do ls "$out"/.out.mov.* >/dev/null 2>&1 && break; sleep 0.1; done
    # 8 markers from 1 s on, 0.50417 s apart: 4.17 ms of phase against the camera's 30 fps
    # frames each time, so together they sample the whole frame interval.
    "$MARKER" hw:Loopback,0 /dev/video0 "$control" 7 9 8 1.0 0.50417 > "$out/markers.txt" 2> "$out/marker-stderr.txt"
    echo $? > "$out/marker-status"
    wait "$pid"
    echo $? > "$out/status" ;;
  *) echo "unknown scenario $name" >&2; exit 2 ;;
esac
