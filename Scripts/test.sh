#!/usr/bin/env bash
# The README's second command: the whole test suite (unit tests, end-to-end tests that check
# our files with ffprobe and ffmpeg, bad-input tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
swift build
swift test
