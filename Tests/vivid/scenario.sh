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
    record --duration 4 -o "$out/out.mov" &
    pid=$!
    # Once recording has begun (the file's temporary twin exists), pull the plug.
    for _ in $(seq 100); do ls "$out"/.out.mov.* >/dev/null 2>&1 && break; sleep 0.1; done
    sleep 2
    v4l2-ctl -d "$dev" --set-ctrl="$ctl"=1
    wait "$pid" ;;
  audio)
    # ALSA's loopback: what is played on hw:Loopback,0 is captured on hw:Loopback,1.
    modprobe -d "$VIVID_VM_MODDIR" snd-aloop
    record --duration 5 --audio hw:Loopback,1 -o "$out/out.mov" &
    pid=$!
    for _ in $(seq 100); do ls "$out"/.out.mov.* >/dev/null 2>&1 && break; sleep 0.1; done
    sleep 1.5
    # The picture turns red, then the tone starts (aplay's start-up comes after).
    v4l2-ctl -d /dev/video0 --set-ctrl=test_pattern=7
    aplay -q -D hw:Loopback,0 "$TONE"
    wait "$pid" ;;
  *) echo "unknown scenario $name" >&2; exit 2 ;;
esac
