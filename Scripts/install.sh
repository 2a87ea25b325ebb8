#!/usr/bin/env bash
# Builds dualcam in release mode and installs it with its man pages and shell completions:
#   bash Scripts/install.sh [PREFIX]        (default /usr/local; as root for system folders)
# PREFIX/bin/dualcam and dualcam-bench (the benchmark harness `dualcam bench` runs);
# PREFIX/share/man/man1/dualcam.1, dualcam-COMMAND.1 and dualcam-bench.1; completions for
# bash, zsh and fish under PREFIX/share. The pages and completions come from the programs
# themselves (Scripts/manpages.py), as the quick start makes them.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/usr/local}
swift build -c release --product dualcam
swift build -c release --product dualcam-bench
python3 Scripts/manpages.py .build/release .build/share >/dev/null
install -D -m 755 .build/release/dualcam "$prefix/bin/dualcam"
install -D -m 755 .build/release/dualcam-bench "$prefix/bin/dualcam-bench"
install -d "$prefix/share/man/man1"
install -m 644 .build/share/man/man1/*.1 "$prefix/share/man/man1/"
install -D -m 644 .build/share/completions/dualcam.bash "$prefix/share/bash-completion/completions/dualcam"
install -D -m 644 .build/share/completions/_dualcam "$prefix/share/zsh/site-functions/_dualcam"
install -D -m 644 .build/share/completions/dualcam.fish "$prefix/share/fish/vendor_completions.d/dualcam.fish"
# man finds PREFIX/share/man when PREFIX/bin is on PATH; a new man index makes `man -k` find it.
command -v mandb >/dev/null && [ -w "$prefix/share/man" ] && mandb -q "$prefix/share/man" 2>/dev/null || true
echo "install: dualcam and dualcam-bench in $prefix/bin; man dualcam, man dualcam-record, ...; bash/zsh/fish completions"
