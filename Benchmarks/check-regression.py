#!/usr/bin/env python3
"""Judges a `dualcam bench --json` run.

    check-regression.py --budget RUN.json [--rerun 'COMMAND with {case}']
        fails when a case's p99 exceeds the run's budget;
    check-regression.py BASELINE.json RUN.json [--rerun ...] [--update]
        fails when a case's p50 is more than 25 % over the figure kept in the repository, or
        more than 25 % over libswscale doing the same work in the same run (kernels that
        stopped compiling to vector code are several times slower).

A case over the line is measured again (twice, with --rerun) and its best run counts: this
machine's speed wanders by a fifth within minutes (other tenants), and one slow run is not a
regression, three are. --update writes RUN's p50s as the new baseline (after a deliberate
change, measured on the CI machine type)."""
import argparse, json, subprocess, sys

LIMIT = 1.25

ap = argparse.ArgumentParser()
ap.add_argument("files", nargs="+")
ap.add_argument("--budget", action="store_true")
ap.add_argument("--rerun")
ap.add_argument("--update", action="store_true")
a = ap.parse_args()
report = json.load(open(a.files[-1]))
run = {c["name"]: c for c in report["cases"]}
if not run:
    sys.exit("bench: no cases in the run")


def best_of(name, c, slow, key):
    """Measures `name` again while `slow` holds, twice at most; the run with the lowest `key`."""
    tries = [c[key]]
    while slow(c) and a.rerun and len(tries) < 3:
        out = subprocess.run(a.rerun.format(case=name), shell=True, capture_output=True, text=True, check=False).stdout
        again = json.loads(out)["cases"][0]
        tries.append(again[key])
        if again[key] < c[key]:
            c = again
    return c, tries


def runs(tries):
    return "  (runs: " + ", ".join(f"{t:.3f}" for t in tries) + ")" if len(tries) > 1 else ""


bad = []
if a.budget:
    budget = report["budget_ms"]
    for name, c in run.items():
        c, tries = best_of(name, c, lambda c: c["p99_ms"] > budget, "p99_ms")
        target = f"  target {c['target_p99_ms']:.1f}" if "target_p99_ms" in c else ""
        print(f"{name:28} p50 {c['p50_ms']:8.3f}  p99 {c['p99_ms']:8.3f}  max {c['max_ms']:8.3f} ms{target}"
              f"  libswscale p50 {c['swscale_p50_ms']:8.3f}{runs(tries)}")
        if c["p99_ms"] > budget:
            bad.append(f"{name} p99 {c['p99_ms']:.2f} ms")
    if bad:
        sys.exit(f"bench: over the {budget:.1f} ms budget: " + "; ".join(bad))
    print(f"bench: every case's p99 within the {budget:.1f} ms budget ({report['sources']} sources)")
    sys.exit(0)

if a.update:
    json.dump({"limit": LIMIT, "p50_ms": {n: round(c["p50_ms"], 4) for n, c in sorted(run.items())}},
              open(a.files[0], "w"), indent=2)
    print(f"baseline: {len(run)} cases written to {a.files[0]}")
    sys.exit(0)

base = json.load(open(a.files[0]))["p50_ms"]
missing = sorted(set(base) - set(run))
if missing:
    sys.exit("bench: cases missing from the run: " + ", ".join(missing))
for name in sorted(base):
    slow = lambda c: c["p50_ms"] > LIMIT * base[name] or c["p50_ms"] > LIMIT * c["swscale_p50_ms"]
    c, tries = best_of(name, run[name], slow, "p50_ms")
    ratio = c["p50_ms"] / base[name]
    print(f"{name:28} p50 {c['p50_ms']:8.3f} ms  baseline {base[name]:8.3f} ms  {ratio:5.2f}x"
          f"  libswscale {c['swscale_p50_ms']:8.3f} ms{runs(tries)}")
    if ratio > LIMIT:
        bad.append(f"{name} {ratio:.2f}x its baseline")
    if c["p50_ms"] > LIMIT * c["swscale_p50_ms"]:
        bad.append(f"{name} {c['p50_ms'] / c['swscale_p50_ms']:.2f}x libswscale's time")
if bad:
    sys.exit("bench: regression: " + "; ".join(bad))
print(f"bench: every case within {LIMIT:.2f}x of its baseline p50 and of libswscale's")
