#!/usr/bin/env bash
# The README's first command: set up, build in release mode (the programs, their man pages and
# shell completions), compose the bundled fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
swift build -c release
python3 Scripts/manpages.py .build/release .build/share
.build/release/dualcam compose Fixtures/back-16x9-30fps.mp4 Fixtures/front-4x3-25fps.mkv \
    -o dualcam-demo.mov --swap-at 1.5 --overwrite
ffprobe -v error -show_entries stream=codec_name,codec_tag_string,width,height,r_frame_rate,sample_rate,channels \
    -of compact=p=0 dualcam-demo.mov
echo "quickstart: dualcam-demo.mov written; man -l .build/share/man/man1/dualcam.1 reads the manual," \
     "bash Scripts/install.sh installs dualcam, its man pages and completions"
