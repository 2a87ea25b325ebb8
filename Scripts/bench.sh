#!/usr/bin/env bash
# Latency benchmarks, release build: `dualcam bench` (fails when any case's p99 exceeds the
# 16 ms budget), the regression gate on instruction counts (fails when any case's
# instructions per frame are more than 1 % over Benchmarks/baseline-instructions.json),
# then the allocation gate: no allocation in the compositor's kernels, no frame-sized one on
# the product's paths.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/stage-times.sh
trap 'print_stage_times benchmarks' EXIT
swift build -c release
lap "release build"
# The product's paths and the inset kernels, cold sources (as cameras deliver): fails when any
# case's p99 exceeds the 16 ms budget. A case over it is measured twice more and its best
# run counts (the MJPEG paths decode a 1080p JPEG, ~5 ms, on one thread; a host that
# preempts this VM puts single runs' p99 over 16 ms). Each case's ratio to its floor, measured
# beside it, is printed.
bench=".build/release/dualcam bench --frames 400"
$bench --sources cold --json > /tmp/dualcam-cold.json || true  # judged below, with reruns
python3 Benchmarks/check-budget.py /tmp/dualcam-cold.json --rerun "$bench --sources cold --json --cases {case}"
lap "latency budget, cold sources"
# Regressions: instructions per frame, counted by callgrind (the same count whatever else the
# machine runs), against the counts kept in the repository. After a deliberate change:
#   .build/release/dualcam bench --instructions --json > Benchmarks/baseline-instructions.json
# A counted run that failed left valgrind's whole output in a log the error names: shown here.
.build/release/dualcam bench --instructions --baseline Benchmarks/baseline-instructions.json \
  || { cat "${TMPDIR:-/tmp}"/dualcam-callgrind-*.log 2>/dev/null; exit 1; }
lap "instruction counts (callgrind)"

# The default build must run on a CPU without AVX2: qemu-user emulates a Nehalem (SSE4.2).
# Its kernels must give the scalar reference's output exactly.
.build/release/dualcam bench --verify
qemu-x86_64 -cpu Nehalem .build/release/dualcam bench --verify
qemu-x86_64 -cpu Nehalem .build/release/dualcam bench --frames 5 --cases inset-only-720p,kernels-swapped-720p,record-yuyv-1080p --budget-ms 1000000 >/dev/null
echo "bench: the default build runs on a CPU without AVX2 (qemu-x86_64 -cpu Nehalem), its kernels exact"
lap "kernels exact, and on a CPU without AVX2"
# The AVX2 build's kernels (DUALCAM_X86_64_LEVEL=v3) are checked in sanitizers.sh, whose
# AddressSanitizer build is that build: every kernel against its scalar reference there.

# The MJPEG camera path: two 1080p cameras' JPEGs decoded and composed; fails if decoding
# the inset camera at its role's size saves less than a quarter of its decoding.
.build/release/dualcam bench --mjpeg --frames 100
lap "MJPEG cameras"

# Not here: the two end-to-end comparisons in wall time, Benchmarks/record-latency.sh (two
# 1080p30 files as cameras, idle and beside two busy loops) and Benchmarks/compare-ffmpeg.sh
# (compose against the ffmpeg one-liner). On this 2-core machine their wall ratios wander
# 1.1-2x with the host, and they took 430 s of the 5400 CI has (2026-11-29, a host half as
# fast as the week before: CI ran out of time). They are run by hand for BENCHMARKS.md, side
# by side with their references; in CI, what they check that is not a wall-time ratio is the
# test suite's: every slot kept, idle and beside busy processes, sound in sync
# (aTakeOnABusyMachineKeepsEveryFrame, anIdleTakeKeepsUpLive), and the counts above.

# Allocations, every case (the named kernel ones too), once its pools are full: the
# compositor's kernels allocate nothing, and no product path makes a frame-sized allocation
# per frame (the MJPEG paths included: libjpeg-turbo reads the camera's buffer in place and
# decodes into planes it keeps). Counted by Sources/CAllocationCount preloaded, which first
# proves it sees an allocation. One thread and two (ForkJoin's jobs are kept and refilled),
# and the scalar reference kernels. The package-benchmark suites in Benchmarks/ count the same
# with more figures (by hand: BENCHMARKS.md, "Allocations"); here they took 272 s, most
# of it building the package a second time in release (a clean-clone run, 2026-11-29).
.build/release/dualcam bench --allocations --threads 1 --with-scalar
.build/release/dualcam bench --allocations --threads 2
lap "allocations (every case, one thread and two)"
