#!/usr/bin/env bash
# CI: Scripts/install.sh into a scratch prefix, then what a user gets from it: the binary
# runs, `man` renders the page with the options, and bash completes the subcommands and
# options from the installed completion script.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
bash Scripts/install.sh "$prefix" >/dev/null
"$prefix/bin/dualcam" --version | grep -q '^dualcam '
# The harness is a program of its own: `dualcam bench` runs the installed one, and the
# recorder's binary links no valgrind, perf-event or benchmark code.
"$prefix/bin/dualcam" bench --cases inset-only-480p --frames 3 | grep -q '^inset-only-480p ' \
  || { echo "install-check: dualcam bench does not run the installed harness" >&2; exit 1; }
harness=$( (nm -C "$prefix/bin/dualcam"; ldd "$prefix/bin/dualcam") | grep -Ei 'valgrind|callgrind|perf_event|Benchmarking|PerfInstructions|LatencyBench|PathBench|BaselineGate' | head -3 || true)
[ -z "$harness" ] || { echo "install-check: the dualcam binary carries the benchmark harness: $harness" >&2; exit 1; }
page=$(MANWIDTH=200 man -l "$prefix/share/man/man1/dualcam.1" 2>/dev/null | sed "s/.\x08//g")
for want in "compose" "record" "--corner-radius" "--codec" "--rotate" "--quiet"; do
  grep -q -- "$want" <<<"$page" || { echo "install-check: the man page lacks $want" >&2; exit 1; }
done
complete_words() {  # complete_words WORD... : what bash offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
           _dualcam "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
           printf "%s\n" "${COMPREPLY[@]}"' _ "$prefix/share/bash-completion/completions/dualcam" "$@"
}
PATH="$prefix/bin:$PATH"
complete_words dualcam co | grep -qx compose || { echo "install-check: bash does not complete 'dualcam co'" >&2; exit 1; }
complete_words dualcam compose --cod | grep -qx -- --codec || { echo "install-check: bash does not complete --cod" >&2; exit 1; }
for shell in zsh fish; do
  f=$(ls "$prefix"/share/*/*/*dualcam* | grep -F "$shell" || true)
  [ -s "$f" ] || { echo "install-check: no $shell completions" >&2; exit 1; }
done
echo "install-check: binary, man page and completions installed and working"
