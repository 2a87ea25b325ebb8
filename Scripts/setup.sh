#!/usr/bin/env bash
# Installs what DualCam needs on Debian 12 (as root): FFmpeg's development libraries for
# building, libv4l2 and ALSA for cameras, and the ffmpeg/ffprobe tools and GStreamer
# (qtdemux) the tests check our output with, and qemu-user (the benchmarks run the build as
# a CPU without AVX2), valgrind (its callgrind counts the benchmarks' instructions; its
# header is built in), man (CI reads the installed man page), SDL2 (the preview window) and
# Xvfb with xdotool (its tests), and PipeWire as a desktop has it (the daemon, wireplumber,
# pipewire-pulse with pactl, and pipewire-alsa, which makes it ALSA's default device: record's
# default microphone is tested against it), and Slurm with munge (batch's job array is tested
# on a Slurm of one node the test starts and stops). Does nothing that is already there.
set -euo pipefail
packages=(pkg-config libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev
          libv4l-dev libasound2-dev libjpeg62-turbo-dev ffmpeg alsa-utils
          gstreamer1.0-tools gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav
          qemu-user man-db libsdl2-dev xvfb xdotool valgrind python3-jsonschema jq
          pipewire pipewire-bin pipewire-alsa wireplumber pipewire-pulse pulseaudio-utils dbus-daemon
          munge slurmctld slurmd slurm-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "setup: run as root to install: ${missing[*]}" >&2; exit 1; }
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
