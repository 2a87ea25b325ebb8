#!/usr/bin/env bash
# Packs what a measurement on another machine needs, where nothing of ours is installed and
# nothing can be fetched (a lent 16-core machine): the release dualcam, the ffmpeg and
# ffprobe CLIs of this machine (the reference and the checks), /usr/bin/time, and every
# library they load, this machine's C library and loader included, so the other machine's
# own libraries never mix in. Libraries that only FFmpeg features no measurement touches
# load (AV1, VP9, JPEG XL, speech, cameras on FireWire, hardware APIs, network protocols ...)
# are replaced by stand-ins with the same names and symbols (stub-library.py): with them
# the pack is about 55 MB instead of 96.
#
#   bash Benchmarks/carry/pack.sh            -> .build-carry/carry.tar.xz
#   BEFORE=OTHER_DUALCAM bash ...             packs another build too, as dualcam-before
# On the other machine, from the repository's root:
#   tar xJf .build-carry/carry.tar.xz -C /tmp && export PATH=/tmp/carry/bin:$PATH
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product dualcam >/dev/null
out=.build-carry
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/carry/bin" "$work/carry/real" "$work/carry/lib" "$out"
# Never called on the measured paths (compose and record of H.264/HEVC/AAC files, lavfi's
# test sources, crop/scale/overlay, x264/x265, MOV/MP4, raw video, PCM). libgme and libopenmpt
# stay real: every probe of an input calls them (a stand-in's null header crashes the probe).
stand_ins="libvpx.so.7 libwebpmux.so.3 libwebp.so.7 libdav1d.so.6 librsvg-2.so.2 libcairo.so.2 libzvbi.so.0
  libsnappy.so.1 libaom.so.3 libcodec2.so.1.0 libgsm.so.1 libjxl.so.0.7 libjxl_threads.so.0.7 libmp3lame.so.0
  libopenjp2.so.7 libopus.so.0 librav1e.so.0 libshine.so.3 libspeex.so.1 libSvtAv1Enc.so.1 libtheoraenc.so.1
  libtheoradec.so.1 libtwolame.so.0 libvorbis.so.0 libvorbisenc.so.2 libxvidcore.so.4 libmfx.so.1
  libchromaprint.so.1 libbluray.so.2 librabbitmq.so.4 librist.so.4 libsrt-gnutls.so.1.5
  libssh-gcrypt.so.4 libzmq.so.5 libpocketsphinx.so.3 libsphinxbase.so.3 libbs2b.so.0 liblilv-0.so.0
  librubberband.so.2 libmysofa.so.1 libflite_cmu_us_awb.so.1 libflite_cmu_us_kal.so.1 libflite_cmu_us_kal16.so.1
  libflite_cmu_us_rms.so.1 libflite_cmu_us_slt.so.1 libflite.so.1 libplacebo.so.208 libass.so.9
  libvidstab.so.1.1 libzimg.so.2 libOpenCL.so.1 libraw1394.so.11 libavc1394.so.0 librom1394.so.0
  libiec61883.so.0 libjack.so.0 libopenal.so.1 libcdio_paranoia.so.2 libcdio_cdda.so.2 libdc1394.so.25
  libcaca.so.0 libGL.so.1 libXv.so.1 libva.so.2 libva-drm.so.2 libva-x11.so.2 libvdpau.so.1"
for name in $stand_ins; do
  path=$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ && !found {print $NF; found = 1}')
  [ -n "$path" ] || { echo "pack: $name is not on this machine" >&2; exit 1; }
  TMPDIR=$work python3 Benchmarks/carry/stub-library.py "$path" "$work/carry/lib" >/dev/null
done
binaries=(".build/release/dualcam" "$(command -v ffmpeg)" "$(command -v ffprobe)" /usr/bin/time)
for binary in "${binaries[@]}"; do cp -L "$binary" "$work/carry/real/"; done
if [ -n "${BEFORE:-}" ]; then cp -L "$BEFORE" "$work/carry/real/dualcam-before"; binaries+=("$work/carry/real/dualcam-before"); fi
# The libraries the binaries load with the stand-ins in place, until nothing new appears.
while :; do
  missing=$(for binary in "${binaries[@]}"; do LD_LIBRARY_PATH="$work/carry/lib" ldd "$binary"; done |
            awk -v lib="$work/carry/lib/" '$3 ~ /^\// && index($3, lib) != 1 {print $3}' | sort -u)
  [ -n "$missing" ] || break
  for library in $missing; do cp -L "$library" "$work/carry/lib/"; done
done
cp -L /lib64/ld-linux-x86-64.so.2 "$work/carry/lib/"
for binary in "${binaries[@]}"; do
  name=$(basename "$binary")
  # Run through the packed loader, so the other machine's C library never mixes in.
  printf '#!/bin/sh\nhere=$(dirname "$(readlink -f "$0")")/..\nexec "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib" "$here/real/%s" "$@"\n' \
    "$name" > "$work/carry/bin/$name"
  chmod +x "$work/carry/bin/$name"
done
# The measured paths run from the pack alone: lavfi's sources into x264 and AAC, a probe, the
# ffmpeg one-liner's filters into x265, dualcam compose, ffprobe reading both.
(
  cd "$work" && export PATH="$work/carry/bin:$PATH"
  ffmpeg -nostdin -v error -f lavfi -i "testsrc2=s=640x360:r=30:d=1,noise=alls=10:allf=t" -f lavfi -i "sine=f=440:r=48000:d=1" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -ac 2 back.mp4
  ffmpeg -nostdin -v error -f lavfi -i "mandelbrot=s=320x240:r=30,trim=duration=1" -c:v libx264 -pix_fmt yuv420p front.mp4
  ffmpeg -nostdin -v error -i back.mp4 -i front.mp4 -filter_complex "[1:v]crop=180:240:70:0,scale=90:120:flags=area[i];[0:v][i]overlay=540:8[o]" \
    -map "[o]" -map 0:a -c:v libx265 -preset ultrafast -x265-params log-level=none -tag:v hvc1 -c:a aac reference.mov
  dualcam compose back.mp4 front.mp4 -o composed.mov --codec hevc --quiet
  for file in reference.mov composed.mov; do
    [ "$(ffprobe -v error -select_streams v -show_entries stream=codec_tag_string -of csv=p=0 "$file")" = hvc1 ] ||
      { echo "pack: $file is not HEVC from the packed binaries" >&2; exit 1; }
  done
  "$work/carry/bin/time" -f ok true 2>/dev/null
) || { echo "pack: the packed binaries do not run the measured paths" >&2; exit 1; }
tar -C "$work" -cf - carry | xz -T0 -6 > "$out/carry.tar.xz"
echo "$out/carry.tar.xz: $(du -m "$out/carry.tar.xz" | cut -f1) MB, $(ls "$work/carry/lib" | wc -l) libraries ($(echo $stand_ins | wc -w) stand-ins)"
