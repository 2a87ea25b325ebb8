#!/usr/bin/env bash
# On a machine where nothing of ours is installed (a lent 16-core one), from the repository's
# root, after Benchmarks/carry/pack.sh here: the machine, dualcam doctor, and many-cores.sh
# with the packed binaries. Everything lands in $OUT (or .build-carry/results): log (all
# that was printed), doctor.json, results.tar.gz (many-cores.sh's raw figures). A pack made
# with BEFORE=... times that build beside this one.
#   bash Benchmarks/carry/measure.sh [ROUNDS]      (ROUNDS: 3)
set -uo pipefail
mkdir -p "${OUT:-.build-carry/results}"
out=$(realpath "${OUT:-.build-carry/results}")
root=$(mktemp -d)
tar xJf .build-carry/carry.tar.xz -C "$root" || { echo "measure: no pack: run Benchmarks/carry/pack.sh first" >&2; exit 1; }
export PATH="$root/carry/bin:$PATH"
exec > >(tee "$out/log") 2>&1
echo "== machine, $(date -u +%FT%TZ)"
echo "CPUs online $(getconf _NPROCESSORS_ONLN), allowed $(nproc): $(grep Cpus_allowed_list /proc/self/status | cut -f2)"
echo "cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo none)"
grep -m1 "model name" /proc/cpuinfo; grep -m1 -o "avx512[a-z]*" /proc/cpuinfo | head -1; uname -sr; free -g | head -2
echo "== dualcam doctor"
( cd "$root" && time dualcam doctor --folder "$root" && dualcam doctor --json --folder "$root" > "$out/doctor.json" )
echo "== many-cores.sh"
[ -x "$root/carry/bin/dualcam-before" ] && export BEFORE="$root/carry/bin/dualcam-before"
RESULTS=$root/results SECONDS_4K=${SECONDS_4K:-5} RECORD_SECONDS=${RECORD_SECONDS:-20} \
  bash Benchmarks/many-cores.sh "$root/carry/bin/dualcam" "${1:-3}"
tar czf "$out/results.tar.gz" -C "$root" results
echo "== done $(date -u +%FT%TZ)"
