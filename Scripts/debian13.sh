#!/usr/bin/env bash
# Builds and runs DualCam on Debian 13 (trixie, FFmpeg 7.1), from this Debian 12 machine:
# a minimal trixie made with debootstrap from Debian's packages, FFmpeg 7.1's -dev packages
# installed in it, and this machine's Swift toolchain (/opt/swift) and package copies
# (/opt/swift-packages, with /etc/gitconfig's insteadOf) bind-mounted. There: a build
# composes the bundled fixtures and ffprobe checks the result (hevc/hvc1, aac), then the
# test suites that need no camera, microphone or VM run. One debug build serves both (a
# release build as well cost CI three minutes and compiles the same code against FFmpeg 7.1;
# the terminal tests need a pseudo-terminal, and the chroot has no /dev/pts;
# the compositor is optimised in debug builds anyway).
#   bash Scripts/debian13.sh          (as root; DEBIAN13_ROOT to keep the tree elsewhere)
#   bash Scripts/debian13.sh --prepare  only makes the tree (mostly downloads and unpacking:
#                                       CI does it while the first build runs)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${DEBIAN13_ROOT:-/var/tmp/dualcam-trixie}
[ "$(id -u)" = 0 ] || { echo "debian13: needs root (debootstrap, chroot, bind mounts)" >&2; exit 1; }
[ -x /opt/swift/usr/bin/swift ] || { echo "debian13: no Swift toolchain at /opt/swift" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends debootstrap >/dev/null
fi

packages=(pkg-config libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev
          libv4l-dev libasound2-dev libsdl2-dev libjpeg62-turbo-dev ffmpeg
          # The HDR tests build their reference on an AVX-512 host as a Haswell (zimg#190).
          qemu-user
          # Callgrind's client-request header, which the benchmark harness is built with.
          valgrind
          # The check of every --json output against its schema (CommandLineTests).
          python3 python3-jsonschema
          # What the Swift toolchain itself links and imports with.
          binutils gcc g++ libc6-dev git libcurl4-openssl-dev libxml2-dev libedit-dev
          libsqlite3-dev libncurses-dev zlib1g-dev python3 ca-certificates)
# The tree is kept between runs; it is made anew when the package list changes.
if [ "$(cat "$root/.dualcam-ready" 2>/dev/null)" != "${packages[*]}" ]; then
  rm -rf "$root"
  echo "debian13: debootstrap trixie into $root"
  debootstrap --variant=minbase trixie "$root" >/dev/null
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" apt-get -qq update
  chroot "$root" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  echo "${packages[*]}" > "$root/.dualcam-ready"
fi
if [ "${1:-}" = --prepare ]; then echo "debian13: the trixie tree is ready in $root"; exit 0; fi

mounted=()
cleanup() { for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}" 2>/dev/null || true; done; }
trap cleanup EXIT
bind() { mkdir -p "$root$2"; mount --bind "$1" "$root$2"; mounted+=("$root$2"); }
mount -t proc proc "$root/proc"; mounted+=("$root/proc")
bind /dev /dev
bind /opt/swift /opt/swift
bind /opt/swift-packages /opt/swift-packages
cp /etc/gitconfig "$root/etc/gitconfig"

# The tracked files as they are now (committed or not), nothing built.
rm -rf "$root/src/dualcam"
mkdir -p "$root/src/dualcam"
git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$root/src/dualcam"

chroot "$root" /usr/bin/env -i HOME=/root PATH=/opt/swift/usr/bin:/usr/bin:/bin LANG=C.UTF-8 DUALCAM_REQUIRE_ALL=1 SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="$(nproc)" bash -euo pipefail -c '
cd /src/dualcam
echo "debian13: $(. /etc/os-release; echo "$PRETTY_NAME"), $(ffmpeg -version | head -1 | cut -d" " -f1-3)"
swift build --build-tests 2>&1 | grep -E "error|warning: .*deprecated|Compiling|Build complete" | grep -v Compiling || true
test -x .build/debug/dualcam
.build/debug/dualcam --version
.build/debug/dualcam compose Fixtures/back-16x9-30fps.mp4 Fixtures/front-4x3-25fps.mkv -o /tmp/pip.mov --overwrite
streams=$(ffprobe -v error -show_entries stream=codec_name,codec_tag_string,width,height -of csv=p=0 /tmp/pip.mov)
echo "debian13: /tmp/pip.mov: $(echo $streams)"
echo "$streams" | grep -q "^hevc,hvc1,1920,1080" || { echo "debian13: not HEVC hvc1 1080p" >&2; exit 1; }
echo "$streams" | grep -q "^aac," || { echo "debian13: no AAC track" >&2; exit 1; }
# Not the job array on a real Slurm either: test.sh runs it with the daemons of Debian 12; here
# the question is FFmpeg 7.1. Nor BatchTests (each row a compose process, the paths
# ComposeTests run here; 40-odd compositions) or BenchGateTests (the gate on valgrind counts,
# which read no FFmpeg of their own).
swift test --skip-build --skip "RecordTests|VividTests|CrashSafetyTests|PreviewTests|TerminalTests|ReadmeRecipeTests|BatchTests|BenchGateTests"
'
echo "debian13: build, compose and tests passed on Debian 13 with FFmpeg 7.1"
