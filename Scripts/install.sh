#!/usr/bin/env bash
# Builds dualcam in release mode and installs it with its man page and shell completions:
#   bash Scripts/install.sh [PREFIX]        (default /usr/local; as root for system folders)
# PREFIX/bin/dualcam (and dualcam-bench, the benchmark harness `dualcam bench` runs), PREFIX/share/man/man1/dualcam.1 (swift-argument-parser's
# generate-manual plugin), and completions for bash, zsh and fish under PREFIX/share.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/usr/local}
swift build -c release --product dualcam
swift build -c release --product dualcam-bench
swift package --allow-writing-to-package-directory generate-manual >/dev/null
bin=.build/release/dualcam
install -D -m 755 "$bin" "$prefix/bin/dualcam"
install -D -m 755 .build/release/dualcam-bench "$prefix/bin/dualcam-bench"
install -D -m 644 .build/plugins/GenerateManual/outputs/dualcam/dualcam.1 "$prefix/share/man/man1/dualcam.1"
mkdir -p "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
         "$prefix/share/fish/vendor_completions.d"
"$bin" --generate-completion-script bash > "$prefix/share/bash-completion/completions/dualcam"
"$bin" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_dualcam"
"$bin" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/dualcam.fish"
echo "install: dualcam, its man page (man dualcam) and bash/zsh/fish completions are in $prefix"
