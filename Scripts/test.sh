#!/usr/bin/env bash
# The README's second command: the whole test suite (unit tests, end-to-end tests that check
# our files with ffprobe and ffmpeg, bad-input tests, cameras in the vivid VM).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
swift build
# Everything that does not run in real time, in parallel.
swift test --skip 'RecordTests|VividTests|CrashSafetyTests|PreviewTests|TerminalTests'
# Real-time recordings (files played as cameras, the emulated VM) one at a time: they must
# not share the two CPUs with each other or with x265 runs, or the encoder falls behind and
# the picture freezes (by design) where the tests look for a change.
swift test --skip-build --no-parallel --filter 'RecordTests|VividTests|CrashSafetyTests|PreviewTests|TerminalTests'
# Damaged input: a minute of the mutation fuzzer over the fixtures (fixed seed, so a
# failure here is reproducible with the same command; Tests/fuzz/fuzz.py --help).
python3 Tests/fuzz/fuzz.py --dualcam .build/debug/dualcam --seconds 60 --seed 2026
