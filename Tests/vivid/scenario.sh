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
# dualcam's stderr stays in the VM's own tmpfs while it runs (polled below; the shared 9p
# mount caches), and is copied to OUT when it exits.
log=/run/dualcam-stderr.txt
# Each copy is written beside stderr.txt and renamed over it: the VM kills what is left
# running once the scenario ends, and a copy cut off there had left an empty stderr.txt (a
# CI run failed on a missing "microphone lost" with the recording itself fine).
copy_log() { cp "$log" "$out/.stderr-$1.txt" && mv -f "$out/.stderr-$1.txt" "$out/stderr.txt"; }
# Also every 2 s while it runs: a scenario that hangs until the VM's time limit keeps its log.
( while sleep 2; do [ -f "$log" ] && copy_log polled; done ) &
log_copier=$!
keep_log() { kill "$log_copier" 2>/dev/null; wait "$log_copier" 2>/dev/null; copy_log final; }
# poll TRIES COMMAND...: runs COMMAND every 0.1 s until it succeeds, TRIES times at most
# (false then): the one place this script waits for a condition.
poll() {
  local tries=$1
  shift
  for _ in $(seq "$tries"); do "$@" && return 0; sleep 0.1; done
  return 1
}
# Whether dualcam's stderr has said TEXT yet.
said() { grep -q "$1" "$log" 2>/dev/null; }
# swap_each_after_the_last COUNT GAP: from 1 s into the take, COUNT swaps (SIGUSR1), each
# sent GAP seconds after the one before it is in the log; then, 1 s after the last, the stop
# (SIGINT). Signals are sent with kill, a builtin: a pkill took 0.4 s of the emulated VM's time.
swaps_said() { [ "$(grep -c "swap at" "$log" 2>/dev/null)" -ge "$1" ]; }
swap_each_after_the_last() {
  local count=$1 gap=$2 pid
  pid=$(dualcam_pid)
  sleep 1
  for n in $(seq "$count"); do
    kill -USR1 "$pid"
    poll 600 swaps_said "$n" || break
    sleep "$gap"
  done
  sleep 1
  kill -INT "$pid"
}
# Returns once dualcam has its first picture: the file starts there, and cameras can take a
# second or more to deliver in the emulated VM.
recording_started() { poll 300 said "recording to"; }
record() { "$DUALCAM" record --capture 640x360 --json --skip-speed-check "$@" > "$out/summary.json" 2> "$log"; echo $? > "$out/status"; keep_log; }
# The canvas the camera scenarios record: 640x360 MPEG-4 (the emulated VM encodes 1080p HEVC
# at 1.6 fps), encoded live with slots waiting up to 5 s. Not through the intermediate: there
# x264 and then the take's encoder working through it took the emulated VM's CPUs from the
# cameras and the script (CI, two emulated CPUs on a slower host: a replugged camera lost 4 s
# late and never back before the take's end, an inset missing from a 2 s take). These test
# the cameras' side; the intermediate is tested on the host.
small_live=(--canvas 640x360 --video-encoder mpeg4 --encode live --max-encoder-lag 5)
# The recording dualcam, which `record ... &` runs in a subshell a signal to $! never reaches.
dualcam_pid() { pgrep -x "$(basename "$DUALCAM")"; }
# ffmpeg reading the virtual camera /dev/video5 as any program reads a webcam: 30 frames.
read_camera() {
  timeout 30 ffmpeg -nostdin -v error -f v4l2 -i /dev/video5 -frames:v 30 -fps_mode passthrough -enc_time_base:v -1 \
    -f rawvideo -pix_fmt yuv420p -y "$out/$1.yuv" 2>> "$out/readers.txt"
  echo "$1: exit $?" >> "$out/readers.txt"
}
# Two MJPEG cameras from v4l2loopback (LOOPBACK_KO, built on the host by
# Scripts/v4l2loopback.sh), /dev/video5 and /dev/video6, fed by ffmpeg with the files given:
# a stream copy, so each buffer is one of the files' JPEGs, as a USB webcam sends them.
loopback_cameras() {
  modprobe -d "$VIVID_VM_MODDIR" videodev
  insmod "$LOOPBACK_KO" devices=2 video_nr=5,6 exclusive_caps=1,1 card_label=BackCam,FrontCam
  ffmpeg -nostdin -v error -re -stream_loop -1 -i "$1" -c:v copy -f v4l2 /dev/video5 2>> "$out/feeder.txt" &
  ffmpeg -nostdin -v error -re -stream_loop -1 -i "$2" -c:v copy -f v4l2 /dev/video6 2>> "$out/feeder.txt" &
  # With exclusive_caps a loopback device is a capture device once something writes to it.
  captures() { v4l2-ctl -d "$1" -D 2>/dev/null | grep -A3 "Device Caps" | grep -q "Video Capture"; }
  for dev in /dev/video5 /dev/video6; do poll 300 captures "$dev"; done
}
# unplugged_during DEV AFTER FOR RECORD-ARGS...: a small-canvas recording (real time matters)
# during which DEV is unplugged AFTER seconds in (the uptime just before in unplugged-at), and
# plugged back in FOR seconds after dualcam says it is lost (or never: "forever"; the uptime
# just before in plugged-at); then the
# take ends on SIGINT 2 s after dualcam says it is back (--duration only bounds it): the
# emulated VM's sleeps and process starts run late on a slow host, and a take of fixed length
# once ended before the camera was back. vivid brings an unplugged node back once every handle on it is
# closed, so this script holds one open for as long as the camera is to stay out.
unplugged_during() {
  local dev=$1 after=$2 away=$3
  shift 3
  record "${small_live[@]}" -o "$out/out.mov" "$@" &
  local pid=$!
  exec 3< "$dev"
  recording_started
  sleep "$after"
  cut -d' ' -f1 /proc/uptime > "$out/unplugged-at"
  v4l2-ctl -d "$dev" --set-ctrl=disconnect=1
  if [ "$away" != forever ]; then
    poll 300 said "$dev lost"
    sleep "$away"
    cut -d' ' -f1 /proc/uptime > "$out/plugged-at"
    exec 3<&-
    poll 300 said "$dev is back"
    sleep 2
    kill -INT "$(dualcam_pid)"
  fi
  wait "$pid"
  exec 3<&-
}
# One second of a SINE Hz tone (a whole number of cycles), 48 kHz stereo, repeated for a
# minute: longer than the slowest start the emulated VM has shown, and quick to make.
tone_wav() {
  python3 -c 'import math, struct, sys, wave
f = int(sys.argv[1])
w = wave.open("/run/tone.wav", "wb"); w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
second = b"".join(struct.pack("<hh", v, v) for v in (int(12000 * math.sin(2 * math.pi * f * i / 48000)) for i in range(48000)))
w.writeframes(second * 60)' "$1"
}
# Plays /run/tone.wav into snd-aloop's device N (captured on the other one) and returns
# once it plays: aplay can take a second to start in the emulated VM. Sets $tone.
play_tone() {
  aplay -q -D "hw:Loopback,$1,0" /run/tone.wav > /dev/null 2>&1 &
  tone=$!
  poll 100 grep -q RUNNING "/proc/asound/Loopback/pcm$1p/sub0/status" 2>/dev/null
}
# Only the MJPEG pair records 1080p HEVC (about two minutes in the emulated VM): the other
# scenarios test the cameras' side on the small MPEG-4 canvas.
case $name in
  readme)
    # The README's camera recipes, as written, against the two virtual webcams.
    here=$(cd "$(dirname "$0")/.." && pwd)
    python3 "$here/readme/recipes.py" --dualcam "$DUALCAM" --kind cameras --vm --work "$out/work" > "$out/recipes.txt" 2>&1
    echo $? > "$out/status" ;;
  devices)
    "$DUALCAM" devices > "$out/devices.txt" 2>&1
    "$DUALCAM" devices --json > "$out/devices.json" 2>&1
    echo $? > "$out/status"
    # Tab after --back and after --control back: in bash, with the completion script the
    # program writes and real cameras: the cameras, then the back camera's control names.
    "$DUALCAM" --generate-completion-script bash > /run/dualcam.bash
    here=$(cd "$(dirname "$0")/.." && pwd)
    (cd /run && PATH="$(dirname "$DUALCAM"):$PATH" bash "$here/complete.sh" /run/dualcam.bash dualcam record --back /dev/vi) \
      > "$out/complete-back.txt" 2>&1
    (cd /run && PATH="$(dirname "$DUALCAM"):$PATH" bash "$here/complete.sh" /run/dualcam.bash dualcam record --control back:) \
      > "$out/complete-control.txt" 2>&1 ;;
  webcam-default)
    # As a new user records: no size, format, rate or audio option. vivid's webcam input is
    # slow at large sizes (1920x1080 at 5 fps, 1280x720 at 12.5), and snd-aloop is the only
    # sound card, a 440 Hz tone playing into it: ALSA's default device must capture it. The
    # small canvas keeps the emulated VM's encoder in real time (at 640x360 it fell a second
    # behind); the cameras are still asked for the output's --size, 1920x1080, at 30 fps.
    modprobe -d "$VIVID_VM_MODDIR" snd-aloop
    # First, a size and rate the user asks for are what the cameras stream. This also runs
    # the recording's code once, so the emulator has translated it before the timed run.
    "$DUALCAM" record --capture 1280x720 --fps 10 --audio none --canvas 320x180 --inset 64x48 --margin 8 \
      --video-encoder mpeg4 --skip-speed-check --duration 2 --json -o "$out/hd.mov" > "$out/hd-summary.json" 2> "$out/hd-stderr.txt"
    echo $? > "$out/hd-status"
    tone_wav 440
    play_tone 1
    "$DUALCAM" record --canvas 320x180 --inset 64x48 --margin 8 --video-encoder mpeg4 --skip-speed-check --duration 6 \
      --json -o "$out/out.mov" > "$out/summary.json" 2> "$log"
    echo $? > "$out/status"
    keep_log
    kill "$tone" 2>/dev/null ;;
  two-nv12) record --duration 3 --pixel-format NV12 "${small_live[@]}" -o "$out/out.mov" ;;
  two-uyvy) record --duration 3 --pixel-format UYVY "${small_live[@]}" -o "$out/out.mov" ;;
  two-mplane) record --duration 3 "${small_live[@]}" -o "$out/out.mov" ;;  # vivid started with multiplanar=2
  virtual-camera)
    # The composed picture of two files written to a v4l2loopback device while ffmpeg reads
    # it as a camera: one reader for 30 frames, none for a second, another for 30 frames.
    # ffmpeg takes 5-6 s to start in the emulated VM: the take ends on SIGINT once the second
    # reader is done (a fixed 16 s once ended 3 frames before it), --duration only bounds it.
    # Encoded live, slots waiting up to 5 s: the emulated VM's intermediate skipped 270 of 480.
    # The output's size, as -o none's scenario has it: the readers' frames are matched against
    # compose's lossless composition of the same files, not against the take's frames, which
    # the encoder may have dropped after the device was shown them.
    modprobe -d "$VIVID_VM_MODDIR" videodev
    insmod "$LOOPBACK_KO" devices=1 video_nr=5 exclusive_caps=1 card_label=DualCam
    record --duration 60 --size 640x360 --video-encoder mpeg4 --encode live --max-encoder-lag 5 \
      --audio none --back "$out/back.mkv" --front "$out/front.mkv" --virtual-camera /dev/video5 -o "$out/out.mov" &
    recorder=$!
    recording_started
    read_camera reader1
    sleep 1
    read_camera reader2
    kill -INT "$(dualcam_pid)"
    wait "$recorder" ;;
  virtual-camera-only)
    # -o none: the composed picture goes to the virtual camera alone, and no file is written
    # (run in a folder of its own, which must stay empty).
    modprobe -d "$VIVID_VM_MODDIR" videodev
    insmod "$LOOPBACK_KO" devices=1 video_nr=5 exclusive_caps=1 card_label=DualCam
    mkdir "$out/cwd"
    (cd "$out/cwd" && record --duration 12 --size 640x360 --audio none --back "$out/back.mkv" --front "$out/front.mkv" \
      --virtual-camera /dev/video5 -o none) &
    recorder=$!
    poll 300 said "showing it"
    read_camera reader1
    wait "$recorder" ;;
  two-swapped)
    # An inset that both 640x360 YUYV cameras fill at 1/4 (96x72 from 160x90): the camera in
    # it converts only the columns the inset reads. Swapped six times, 0.6 s apart from 1 s
    # in: whether the camera leaving the full frame sends a picture before the other one
    # does is a race, lost about half the time (when a picture made for the inset was shown,
    # a run showed it in one swap of two). Each signal is sent once the swap before it is in
    # the log: the emulated VM took a signal up to 2.5 s after it was sent (a fixed 9 s take
    # once ended before its last swaps), and signals sent meanwhile were one (a pending signal
    # is not queued twice). The take ends on SIGINT once all six are made; --duration only
    # bounds it.
    record --duration 60 "${small_live[@]}" --inset 96x72 --margin 8 -o "$out/out.mov" &
    recorder=$!
    recording_started
    swap_each_after_the_last 6 0.6
    wait "$recorder" ;;
  two-side-by-side)
    # Side by side: each half is 320x360 of a 640x360 canvas, a picture the camera on the
    # right converts in its middle columns only. Swapped three times, each 0.8 s after the last.
    # Live (small_live): the emulated VM's intermediate (x264) fell behind and skipped 184 of
    # 324 slots, whole swaps' spans among them.
    record --duration 60 "${small_live[@]}" --layout side-by-side -o "$out/out.mov" &
    recorder=$!
    recording_started
    swap_each_after_the_last 3 0.8
    wait "$recorder" ;;
  mjpeg-two)
    # A 640x360 back camera and a 1280x720 front one, both MJPEG.
    loopback_cameras "$out/back.avi" "$out/front.avi"
    record --duration 3 --back /dev/video5 --front /dev/video6 -o "$out/out.mov" ;;
  mjpeg-corrupt)
    # The back camera's stream has a damaged JPEG in every four (cut short, or garbled).
    loopback_cameras "$out/back.avi" "$out/front.avi"
    record --duration 3 "${small_live[@]}" --back /dev/video5 --front /dev/video6 -o "$out/out.mov" ;;
  controls)
    # Camera controls: devices lists them; --control sets them for one recording (a bad one
    # is a line, not a failure); saved ones are applied at the next open and after a replug.
    small=(--canvas 320x180 --inset 64x48 --margin 8 --video-encoder mpeg4 --skip-speed-check --audio none --json)
    "$DUALCAM" devices > "$out/devices.txt" 2>&1
    "$DUALCAM" controls /dev/video0 --json > "$out/controls.json" 2> "$out/controls-stderr.txt"
    "$DUALCAM" record "${small[@]}" --duration 2 -o "$out/base.mov" > /dev/null 2> "$out/base-stderr.txt"
    echo $? > "$out/base-status"
    "$DUALCAM" record "${small[@]}" --duration 2 -o "$out/bright.mov" \
      --control back:brightness=230,contrast=9999,read_only_integer_32_bits=3 > /dev/null 2> "$out/bright-stderr.txt"
    echo $? > "$out/bright-status"
    export XDG_CONFIG_HOME=$out/config
    "$DUALCAM" controls /dev/video0 --set brightness=60 --save > "$out/save.txt" 2>&1
    echo $? >> "$out/save.txt"
    # Back to its default, as a camera has it after a power cycle.
    v4l2-ctl -d /dev/video0 --set-ctrl=brightness=128
    # The front camera drops 60 % of its buffers (a vivid control, set with --control):
    # it delivers under the asked rate, which record says as it happens.
    "$DUALCAM" record "${small[@]}" --duration 8 -o "$out/saved.mov" --control front:percentage_of_dropped_buffers=60 \
      > "$out/summary.json" 2> "$log" &
    pid=$!
    recording_started
    sleep 1
    v4l2-ctl -d /dev/video0 --get-ctrl=brightness > "$out/brightness-at-open.txt"
    # Unplugged with its defaults back, then plugged in again (vivid brings the node back
    # once dualcam has let go of it): the saved value must be written again.
    v4l2-ctl -d /dev/video0 --set-ctrl=brightness=128
    v4l2-ctl -d /dev/video0 --set-ctrl=disconnect=1
    poll 100 said "/dev/video0 is back"
    sleep 0.5
    v4l2-ctl -d /dev/video0 --get-ctrl=brightness > "$out/brightness-after-replug.txt"
    wait "$pid"
    echo $? > "$out/status"
    keep_log ;;
  front-replugged)
    # 3 s into the recording the front camera is unplugged; 2 s after dualcam says it is
    # lost, it is plugged back in.
    unplugged_during /dev/video1 3 2 --duration 60 ;;
  single) record --duration 2 "${small_live[@]}" -o "$out/out.mov" ;;
  busy-and-locked-out)
    # Another program streams from the front camera: record says it is busy and goes on
    # with the back alone.
    v4l2-ctl -d /dev/video1 --stream-mmap --stream-count=300 >/dev/null 2>&1 &
    feeder=$!
    sleep 1
    record --duration 2 "${small_live[@]}" -o "$out/out.mov"
    kill "$feeder" 2>/dev/null; wait "$feeder" 2>/dev/null
    # A user outside the group the nodes belong to: no camera can be opened.
    chmod 600 /dev/video0 /dev/video1
    setpriv --reuid=65534 --regid=65534 --clear-groups "$DUALCAM" record --duration 1 -o /tmp/never.mov \
      > /dev/null 2> "$out/locked-out.txt"
    echo $? > "$out/locked-out-status" ;;
  streamon-refused)
    # The back camera's next STREAMON fails (vivid answers EINVAL; a USB bus out of
    # bandwidth answers ENOSPC): record must go on with the next format and say so.
    v4l2-ctl -d /dev/video0 --set-ctrl=inject_vidioc_streamon_error=1
    record --duration 2 "${small_live[@]}" -o "$out/out.mov" ;;
  single-unplugged)
    # The only camera is unplugged 1 s in and never comes back: the recording must end
    # once its duration has passed, with what it has.
    unplugged_during /dev/video0 1 forever --duration 4 ;;
  back-fatal-error)
    # Real time matters here (the picture must change mid-file), live (small_live): when its
    # encoder once fell behind at the start, the intermediate skipped every slot from 1.6 s
    # to 4.2 s, the whole time the back was out.
    # The take ends on SIGINT 2 s after dualcam says the camera is back (--duration only
    # bounds it): with a fixed 6 s one, a slow host's late "sleep 2" put the break at 5.1 s.
    record --duration 60 "${small_live[@]}" -o "$out/out.mov" &
    pid=$!
    # 2 s into the recording, the back camera's stream breaks (every DQBUF fails with EIO).
    recording_started
    sleep 2
    v4l2-ctl -d /dev/video0 --set-ctrl=inject_fatal_streaming_error=1
    poll 300 said "/dev/video0 is back"
    sleep 2
    kill -INT "$(dualcam_pid)"
    wait "$pid" ;;
  av-sync | av-drift | av-pause)
    # One reference event for eye and ear: dualcam-av-marker beeps into the loopback and
    # flips the camera's test pattern at the instant each beep is heard. A small canvas and
    # a cheap encoder keep the emulated VM in real time (it manages 1.6 fps of 1080p x265).
    modprobe -d "$VIVID_VM_MODDIR" snd-aloop
    control=$(v4l2-ctl -d /dev/video0 -L | awk '$1 == "test_pattern" { print $2 }')
    # Debian 12's vivid (6.1) stamps "End of Frame" buffers with the frame's nominal start
    # plus 0.9 of a period, which is ~30 ms after it fills the buffer (later kernels stamp the
    # fill time). "Start of Exposure" stamps the nominal start: the moment the picture is made.
    v4l2-ctl -d /dev/video0 --set-ctrl=timestamp_source=1
    if [ "$name" = av-sync ] || [ "$name" = av-pause ]; then
      # 8 markers from 1.5 s after the first picture on, 0.50417 s apart: 4.17 ms of phase
      # against the camera's 30 fps frames each time, so together they sample the whole
      # frame interval. They end 5.1 s in; the take is 10 s, as the helper can start late in
      # the emulated VM (on a busy host its first marker came 4.9 s in, and a 7 s take held
      # only half of them).
      seconds=10 first=1.5 spacing=0.50417
    else
      # The loopback's clock runs 0.45 % slow (both ends of the cable, as one sound card's
      # crystal would; under emulation it also wanders by ~0.07 % by itself): uncorrected,
      # sound drifts 4.5 ms per second. The markers come after 20 s: 90 ms, nearly three frames.
      for id in $(amixer -c Loopback controls | awk -F, '/Rate Shift/ && !/subdevice=[1-9]/ { sub("numid=", "", $1); print $1 }'); do
        amixer -q -c Loopback cset numid="$id" "${RATE_SHIFT:-100450}"
      done
      seconds=28 first=20 spacing=0.50417
    fi
    # Writes to the shared folder stall for a second now and then under emulation: this
    # scenario measures sync, not what a stall costs, so slots wait up to 5 s to be encoded.
    "$DUALCAM" record --capture 320x180 --canvas 320x180 --inset 64x48 --margin 8 --video-encoder mpeg4 --skip-speed-check \
      --max-encoder-lag 5 --audio hw:Loopback,1 --duration "$seconds" --json -o "$out/out.mov" > "$out/summary.json" 2> "$log" &
    pid=$!
    recording_started
    if [ "$name" = av-pause ]; then
      # Paused from 0.3 s to 1 s (SIGUSR2 twice), before the first marker at 1.5 s: every
      # marker is recorded after the sound heard while paused was left out.
      dualcam_pid=$(pgrep -x "$(basename "$DUALCAM")")
      ( sleep 0.3; kill -USR2 "$dualcam_pid"; sleep 0.7; kill -USR2 "$dualcam_pid" ) &
    fi
    "$MARKER" hw:Loopback,0 /dev/video0 "$control" 7 9 8 "$first" "$spacing" > "$out/markers.txt" 2> "$out/marker-stderr.txt"
    echo $? > "$out/marker-status"
    wait "$pid"
    echo $? > "$out/status"
    keep_log ;;
  mic-unplugged)
    # A tone into the loopback; 2.5 s into the recording the sound card goes away (its
    # driver unbound: every call on the open device then fails with ENODEV, as on a USB
    # microphone pulled out). The recording must go on, with silence.
    modprobe -d "$VIVID_VM_MODDIR" snd-aloop
    tone_wav 440
    # The recording starts once the tone plays (the test listens for it 1 s into the file).
    play_tone 0
    cat /proc/asound/Loopback/pcm0p/sub0/status > "$out/tone-status.txt" 2>&1
    "$DUALCAM" record --capture 320x180 --canvas 320x180 --inset 64x48 --margin 8 --video-encoder mpeg4 --skip-speed-check \
      --audio hw:Loopback,1,0 --duration 6 --json -o "$out/out.mov" > "$out/summary.json" 2> "$log" &
    pid=$!
    recording_started
    sleep 2.5
    echo snd_aloop.0 > /sys/bus/platform/drivers/snd_aloop/unbind
    wait "$pid"
    echo $? > "$out/status"
    keep_log
    kill "$tone" 2>/dev/null || true ;;
  mic-mono-44k)
    # A microphone that captures only mono 44.1 kHz, as many webcam microphones do: snd-aloop
    # gives its capture side the format of what is playing into it.
    modprobe -d "$VIVID_VM_MODDIR" snd-aloop
    python3 -c 'import math, struct, wave
w = wave.open("/run/tone.wav", "wb"); w.setnchannels(1); w.setsampwidth(2); w.setframerate(44100)
second = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * 441 * i / 44100))) for i in range(44100))
w.writeframes(second * 60)'
    play_tone 0
    "$DUALCAM" devices --json > "$out/devices.json" 2> "$out/devices-stderr.txt"
    "$DUALCAM" record --capture 320x180 --canvas 320x180 --inset 64x48 --margin 8 --video-encoder mpeg4 --skip-speed-check \
      --audio hw:Loopback,1,0 --duration 4 --json -o "$out/out.mov" > "$out/summary.json" 2> "$log"
    echo $? > "$out/status"
    keep_log
    kill "$tone" 2>/dev/null || true ;;
  *) echo "unknown scenario $name" >&2; exit 2 ;;
esac
