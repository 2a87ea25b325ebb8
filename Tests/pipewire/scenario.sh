#!/usr/bin/env bash
# A desktop's sound server, for real: PipeWire (Debian's pipewire, wireplumber and
# pipewire-pulse, with pipewire-alsa making it ALSA's default device) started headless on a
# private runtime folder, a virtual sink "spk" whose monitor is the default source, and a
# 440 Hz tone playing into the sink. Then `dualcam devices` and a `record` with no --audio,
# into OUT, for the host test to check. Everything it starts (a D-Bus session bus too) it
# stops, and none of it keeps the caller's stdout or stderr open.
#   scenario.sh OUT BACK FRONT      (DUALCAM: the dualcam binary)
set -u
out=$1 back=$2 front=$3
XDG_RUNTIME_DIR=$(mktemp -d /tmp/dualcam-pipewire.XXXXXX)
export XDG_RUNTIME_DIR
# SIGKILL: a caller that blocks SIGTERM (a test runner's threads) passes the mask on, and
# dbus-daemon then outlives the script.
cleanup() {
  local pids
  pids=$(jobs -p)
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  wait 2>/dev/null
  [ -s "$XDG_RUNTIME_DIR/dbus.pid" ] && kill -KILL "$(cat "$XDG_RUNTIME_DIR/dbus.pid")" 2>/dev/null
  rm -rf "$XDG_RUNTIME_DIR"
}
trap cleanup EXIT
exec < /dev/null
dbus-daemon --session --fork --address="unix:path=$XDG_RUNTIME_DIR/bus" --print-pid=3 3> "$XDG_RUNTIME_DIR/dbus.pid" \
  > /dev/null 2> "$out/dbus.log"
export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
fail() {
  { echo "$1"; for log in pipewire wireplumber pipewire-pulse; do echo "--- $log.log"; tail -n 5 "$out/$log.log"; done; } \
    > "$out/setup-error.txt"
  exit 3
}
# Each daemon once the one it connects to listens: a client started before the PipeWire
# socket exists gives up at once, and on a loaded machine (CI) pipewire-pulse did so,
# leaving pactl nothing to connect to. pipewire-pulse is started again if it gave up all
# the same, for up to 30 s in all.
# poll TRIES COMMAND...: runs COMMAND every 0.1 s until it succeeds, TRIES times at most
# (false then): the one place this script waits for something.
poll() {
  local tries=$1
  shift
  for _ in $(seq "$tries"); do "$@" && return 0; sleep 0.1; done
  return 1
}
pipewire > "$out/pipewire.log" 2>&1 &
poll 300 test -S "$XDG_RUNTIME_DIR/pipewire-0" || fail "pipewire did not start"
wireplumber > "$out/wireplumber.log" 2>&1 &
pulse_pid=
pulse_answers() {
  pactl info > /dev/null 2>&1 && return 0
  if [ -z "$pulse_pid" ] || ! kill -0 "$pulse_pid" 2>/dev/null; then
    pipewire-pulse >> "$out/pipewire-pulse.log" 2>&1 &
    pulse_pid=$!
  fi
  return 1
}
poll 300 pulse_answers || fail "pipewire-pulse did not answer in 30 s"
pactl load-module module-null-sink sink_name=spk > /dev/null || fail "no null sink"
monitor_listed() { pactl list short sources 2>/dev/null | grep -q spk.monitor; }
poll 100 monitor_listed
pactl set-default-source spk.monitor
python3 -c 'import math, struct, sys, wave
w = wave.open(sys.argv[1], "wb"); w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
second = b"".join(struct.pack("<hh", v, v) for v in (int(12000 * math.sin(2 * math.pi * 440 * i / 48000)) for i in range(48000)))
w.writeframes(second * 30)' "$out/tone.wav"
pw-cat --playback --target spk "$out/tone.wav" > "$out/pw-cat.log" 2>&1 &
# Until the tone is linked to the sink and reaches the default source (arecord, ALSA's
# default as dualcam opens it, hears it): a source read sooner was silent now and then.
tone_linked() { [ -n "$(pactl list short sink-inputs 2>/dev/null)" ]; }
poll 100 tone_linked
for _ in $(seq 10); do
  arecord -q -D default -d 1 -f S16_LE -c 2 -r 48000 "$out/check.wav" 2>/dev/null
  python3 -c 'import array, sys, wave
w = wave.open(sys.argv[1]); a = array.array("h", w.readframes(w.getnframes()))
sys.exit(0 if a and (sum(x * x for x in a) / len(a)) ** 0.5 > 3000 else 1)' "$out/check.wav" && break
done
"$DUALCAM" devices > "$out/devices.txt" 2>&1
# A 640x360 H.264 file: the subject is the sound, and PipeWire, without real-time priority
# here, drops quanta when 1080p x265 takes both cores.
"$DUALCAM" record --back "$back" --front "$front" --duration 3 --size 640x360 --codec h264 --skip-speed-check --json \
  -o "$out/out.mov" > "$out/summary.json" 2> "$out/stderr.txt"
echo $? > "$out/status"
