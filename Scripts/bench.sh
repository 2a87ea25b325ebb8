#!/usr/bin/env bash
# Latency benchmarks, release build: `dualcam bench` (fails when any case's p99 exceeds the
# 16 ms budget), then the package-benchmark suite, which must count zero mallocs in every
# percentile of every benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release
.build/release/dualcam bench --frames 600 --sources cold
.build/release/dualcam bench --frames 600 --sources warm

out=$(mktemp)
trap 'rm -f "$out"' EXIT
swift package --package-path Benchmarks benchmark --no-progress | tee "$out"
# Table rows look like: │ Malloc (total) * │ 0 │ 0 │ ... │ 0 │ Samples │
rows=$(grep -c 'Malloc (total)' "$out" || true)
bad=$(awk -F'│' '/Malloc \(total\)/ { for (i = 3; i < NF - 1; i++) if ($i + 0 != 0) { print; break } }' "$out")
if [ "$rows" -eq 0 ]; then echo "bench: no malloc counts found in the benchmark output" >&2; exit 1; fi
if [ -n "$bad" ]; then echo "bench: allocations in a measured loop:" >&2; echo "$bad" >&2; exit 1; fi
echo "bench: $rows benchmarks, zero mallocs per iteration in every percentile"
