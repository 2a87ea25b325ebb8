#!/usr/bin/env bash
# The README's second command: the whole test suite (unit tests, end-to-end tests that check
# our files with ffprobe and ffmpeg, bad-input tests, cameras in the vivid VM).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/stage-times.sh
trap 'print_stage_times "the test suite"' EXIT
stage "setup" bash Scripts/setup.sh
# Readable in one sitting: no Swift file in Sources/ over 400 lines, no function over 80.
python3 Scripts/code-size.py Sources
# BENCHMARKS.md's tables are what its data files say (Benchmarks/results/tables.py rewrites them).
python3 Benchmarks/results/tables.py --check
stage "build (with the tests)" swift build --build-tests
# Swift Testing starts a test's time limit before the test has a thread, and its pool has one
# thread per core, which a test waiting on a dualcam or ffmpeg it started holds: pure
# arithmetic tests queued behind such tests for 92 s ran out of their minute without having
# run (CI of 2026-11-26). Admitting as many tests at a time as the pool has threads starts
# each clock when its test can run; the stage takes as long as before (119 s against 118 s).
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(nproc)
# Everything that does not run in real time, in parallel.
stage "tests without real time" swift test --skip 'RecordTests|VividTests|CrashSafetyTests|PreviewTests|TerminalTests|ReadmeRecipeTests'
# The real-time suites run the release build, as users do (Tests/DualCamTests/Support.swift,
# Env.dualcam): the emulated VM took a quarter longer on the debug build, the README's file
# recipes twice as long. With it the benchmark harness, which the README's `dualcam bench`
# recipes start from beside it. CI's benchmark stage builds the rest of the release products
# after this and reuses what this built.
stage "release build (the binaries the real-time tests run)" bash -c 'swift build -c release --product dualcam && swift build -c release --product dualcam-bench'
export DUALCAM_TEST_BINARY=$PWD/.build/release/dualcam
# Real-time recordings (files played as cameras, the emulated VM) one at a time: they must
# not share the two CPUs with each other or with x265 runs, or the encoder falls behind and
# the picture freezes (by design) where the tests look for a change.
stage "real-time and VM tests" swift test --skip-build --no-parallel --filter 'RecordTests|VividTests|CrashSafetyTests|PreviewTests|TerminalTests|ReadmeRecipeTests'
# Damaged input: a minute of the mutation fuzzer over the fixtures (fixed seed, so a
# failure here is reproducible with the same command; Tests/fuzz/fuzz.py --help).
stage "damaged-input fuzzer" python3 Tests/fuzz/fuzz.py --dualcam .build/debug/dualcam --seconds 60 --seed 2026
# Ordinary mistakes: a minute of random combinations of every compose and record option, at
# and beyond their limits, over the fixtures and odd-sized clips (fixed seed; each failure is
# printed with the command that repeats it; Tests/fuzz/options.py --help).
stage "options fuzzer" python3 Tests/fuzz/options.py --dualcam .build/debug/dualcam --seconds 60 --seed 2026
# Writers racing for one OUT: 50 rounds of record, compose --overwrite, relayout, finish and a
# second record at random offsets; no take may be lost and no hidden file left (fixed seed).
stage "concurrency campaign" python3 Tests/concurrency/campaign.py --dualcam .build/debug/dualcam --rounds 50 --seed 2026
# Beside other programs' files: finish against a fragmented MP4 ffmpeg is still writing,
# records started together with no -o, and --iso onto small disks (8 rounds each, fixed seed;
# Tests/concurrency/beside_others.py --help).
stage "beside other programs" python3 Tests/concurrency/beside_others.py --dualcam .build/debug/dualcam --rounds 8 --seed 2026
