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
# Every page renders through man, by name, from the installed folder, with its EXAMPLES, the
# environment it reads and an EXIT STATUS naming every code the programs exit with.
export MANPATH="$prefix/share/man"
for name in dualcam dualcam-compose dualcam-record dualcam-relayout dualcam-finish dualcam-batch dualcam-devices dualcam-controls dualcam-bench; do
  page=$(MANWIDTH=200 man "$name" 2>/dev/null | sed "s/.\x08//g")
  [ -n "$page" ] || { echo "install-check: man $name shows nothing" >&2; exit 1; }
  for want in EXAMPLES ENVIRONMENT "EXIT STATUS" "SEE ALSO"; do
    grep -q "^$want" <<<"$page" || { echo "install-check: man $name has no $want section" >&2; exit 1; }
  done
  environment=$(sed -n '/^ENVIRONMENT/,/^EXIT STATUS/p' <<<"$page")
  for variable in HOME XDG_CONFIG_HOME XDG_CACHE_HOME WAYLAND_DISPLAY; do
    grep -q "$variable" <<<"$environment" || { echo "install-check: man $name: ENVIRONMENT lacks $variable" >&2; exit 1; }
  done
  status=$(sed -n '/^EXIT STATUS/,/^[A-Z]/p' <<<"$page")
  for code in 0 1 2 64 130; do
    grep -Eq "^ +$code +[A-Z]" <<<"$status" || { echo "install-check: man $name: EXIT STATUS lacks $code" >&2; exit 1; }
  done
done
page=$(MANWIDTH=200 man dualcam-record 2>/dev/null | sed "s/.\x08//g")
for want in "--corner-radius" "--codec" "--rotate" "--quiet" "(default: 1920x1080)" "Cameras" "JSON OUTPUT" '"schema": "dualcam.record/1"'; do
  grep -qF -- "$want" <<<"$page" || { echo "install-check: man dualcam-record lacks $want" >&2; exit 1; }
done
PATH="$prefix/bin:$PATH"
bashc="$prefix/share/bash-completion/completions/dualcam"
repo=$(pwd)
complete_words() { bash "$repo/Tests/complete.sh" "$bashc" "$@"; }
expect_offered() {  # expect_offered CANDIDATE WORD... : bash offers CANDIDATE for the last word
  local want=$1; shift
  complete_words "$@" | grep -qxF -- "$want" || { echo "install-check: bash does not offer $want for '$*': $(complete_words "$@" | head -5 | tr '\n' ' ')" >&2; exit 1; }
}
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cp Fixtures/back-16x9-30fps.mp4 "$work/talk.mp4"
(
  cd "$work"
  expect_offered compose dualcam co
  expect_offered --codec dualcam compose --cod
  expect_offered talk.mp4 dualcam compose ta                 # files after compose
  expect_offered talk.mp4 dualcam compose talk.mp4 ""        # FRONT too
  expect_offered ultrafast dualcam compose --preset ul       # presets
  expect_offered veryslow dualcam record --preset ""
  expect_offered talk.mp4 dualcam record --back ""           # --back takes files and cameras
  expect_offered MJPG dualcam record --pixel-format ""
  expect_offered compose-1080p dualcam bench --cases ""      # asked of dualcam-bench
  expect_offered --list-cases dualcam bench --list
  expect_offered cold dualcam bench --sources ""             # an option's values, not options
  # A file name that is a command: bash's compgen -W would run it at Tab, and put it on the
  # line unquoted. It is neither run nor offered; an ordinary name beside it still is.
  touch 'x$(touch PWNED).mp4' 'y`touch PWNED2`.mp4' $'new\nline.mp4' -- '--overwrite.mp4'
  offered=$(complete_words dualcam record --back "")
  [ ! -e PWNED ] && [ ! -e PWNED2 ] || { echo "install-check: Tab ran a command hidden in a file name" >&2; exit 1; }
  ! grep -qE 'PWNED|^line.mp4|^new$|overwrite' <<<"$offered" || { echo "install-check: Tab offered a hostile name: $offered" >&2; exit 1; }
  grep -qx talk.mp4 <<<"$offered" || { echo "install-check: talk.mp4 no longer offered after --back" >&2; exit 1; }
)
for shell in zsh fish; do
  f=$(ls "$prefix"/share/*/*/*dualcam* | grep -F "$shell" || true)
  [ -s "$f" ] || { echo "install-check: no $shell completions" >&2; exit 1; }
done
echo "install-check: binaries, 9 man pages (EXAMPLES, ENVIRONMENT, EXIT STATUS) and completions installed and working"
