#!/usr/bin/env python3
"""Judges a `dualcam bench --json` run against its 16 ms budget.

    check-budget.py RUN.json [--rerun 'COMMAND with {case}']

fails when a case's p99 exceeds the run's budget. A case over it is measured again (twice,
with --rerun) and its best run counts: this machine's speed wanders by a fifth within
minutes (other tenants), and one slow run is not a breach, three are. Regressions are
judged on instruction counts instead (`dualcam bench --instructions --baseline`): wall
time on a shared machine cannot tell a 20 % regression from a slow spell."""
import argparse, json, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("run")
ap.add_argument("--rerun")
a = ap.parse_args()
report = json.load(open(a.run))
run = {c["name"]: c for c in report["cases"]}
if not run:
    sys.exit("bench: no cases in the run")
budget = report["budget_ms"]
bad = []
for name, c in run.items():
    tries = [c["p99_ms"]]
    while c["p99_ms"] > budget and a.rerun and len(tries) < 3:
        out = subprocess.run(a.rerun.format(case=name), shell=True, capture_output=True, text=True, check=False).stdout
        again = json.loads(out)["cases"][0]
        tries.append(again["p99_ms"])
        if again["p99_ms"] < c["p99_ms"]:
            c = again
    floor = f"  {c['ratio_to_floor']:5.2f}x its floor" if "ratio_to_floor" in c else ""
    reruns = "  (runs: " + ", ".join(f"{t:.3f}" for t in tries) + ")" if len(tries) > 1 else ""
    print(f"{name:28} p50 {c['p50_ms']:8.3f}  p99 {c['p99_ms']:8.3f}  max {c['max_ms']:8.3f} ms{floor}"
          f"  libswscale p50 {c['swscale_p50_ms']:8.3f}{reruns}")
    if c["p99_ms"] > budget:
        bad.append(f"{name} p99 {c['p99_ms']:.2f} ms")
if bad:
    sys.exit(f"bench: over the {budget:.1f} ms budget: " + "; ".join(bad))
print(f"bench: every case's p99 within the {budget:.1f} ms budget ({report['sources']} sources)")
