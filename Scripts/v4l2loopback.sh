#!/usr/bin/env bash
# Vendored from the team's shared/vivid-vm recipe (build-v4l2loopback.sh), so that a fresh
# clone can run the MJPEG camera tests. Builds the v4l2loopback kernel module for the kernel
# Scripts/vivid-vm.sh boots, from Debian's own packages (v4l2loopback-dkms source and the
# matching linux-headers), and prints the .ko path. In the VM:
#   insmod THAT.ko video_nr=5 exclusive_caps=1 card_label=LoopCam
#   ffmpeg -re -stream_loop -1 -i cam.avi -c:v copy -f v4l2 /dev/video5
# makes /dev/video5 a real V4L2 capture device with the file's format, size and rate, MJPEG
# included (vivid has none).
set -euo pipefail
# The kernel the VM boots: the one linux-image-amd64 depends on (as Scripts/vivid-vm.sh picks it).
if [ -z "${KVER:-}" ]; then
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
  if [ -z "$pkg" ]; then
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || true
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
  fi
  [ -n "$pkg" ] || { echo "v4l2loopback.sh: cannot resolve the kernel behind linux-image-amd64" >&2; exit 1; }
  KVER=${pkg#linux-image-}
fi
OUT=${V4L2LOOPBACK_DIR:-/tmp/v4l2loopback-$KVER}
ko="$OUT/v4l2loopback.ko"
[ -f "$ko" ] && { echo "$ko"; exit 0; }
export DEBIAN_FRONTEND=noninteractive
if ! dpkg-query -W -f='${Status}' "linux-headers-$KVER" 2>/dev/null | grep -q 'ok installed'; then
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "linux-headers-$KVER" make >/dev/null 2>&1 ||
    { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null 2>&1
      apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "linux-headers-$KVER" make >/dev/null; }
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download v4l2loopback-dkms >/dev/null 2>&1 ||
  { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null 2>&1; apt-get download v4l2loopback-dkms >/dev/null; }) 
(cd "$tmp" && dpkg-deb -x v4l2loopback-dkms_*.deb x)
src=$(ls -d "$tmp"/x/usr/src/v4l2loopback-*)
make -s -C "/usr/src/linux-headers-$KVER" M="$src" modules >/dev/null 2>&1 || make -C "/usr/src/linux-headers-$KVER" M="$src" modules >&2
mkdir -p "$OUT" && cp "$src/v4l2loopback.ko" "$ko"
echo "$ko"
