#!/usr/bin/env python3
"""Where a command's CPU time goes, by thread name: runs COMMAND, reads every thread's
user+system time from /proc every 20 ms, and prints, per thread name, the threads, their CPU
seconds and the share of the wall time the busiest of them was on a CPU, then the six busiest
threads (the main thread marked): one near 100 % is a serial stage the pipeline waits on.
    python3 Benchmarks/thread-time.py COMMAND ARGS..."""
import os, subprocess, sys, time
from collections import defaultdict
tick = os.sysconf("SC_CLK_TCK")
start = time.monotonic()
process = subprocess.Popen(sys.argv[1:])
seen = {}  # tid -> (name, cpu seconds)
while process.poll() is None:
    try:
        for tid in os.listdir(f"/proc/{process.pid}/task"):
            try:
                stat = open(f"/proc/{process.pid}/task/{tid}/stat").read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")] + (" (main)" if tid == str(process.pid) else "")
            fields = stat[stat.rindex(")") + 2:].split()
            seen[tid] = (name, (int(fields[11]) + int(fields[12])) / tick)
    except OSError:
        pass
    time.sleep(0.02)
wall = time.monotonic() - start
by_name = defaultdict(list)
for name, cpu in seen.values():
    by_name[name].append(cpu)
print(f"{' '.join(sys.argv[1:])[:100]}\nwall {wall:.2f} s, CPU {sum(c for _, c in seen.values()):.2f} s (as last read), exit {process.returncode}")
for name, cpus in sorted(by_name.items(), key=lambda kv: -sum(kv[1])):
    print(f"  {name:18} {len(cpus):3} threads {sum(cpus):7.2f} s CPU, busiest {max(cpus) / wall * 100:5.1f} % of the wall time")
busiest = sorted(seen.values(), key=lambda t: -t[1])[:6]
print("  busiest threads: " + ", ".join(f"{name} {cpu / wall * 100:.0f} %" for name, cpu in busiest))
sys.exit(process.returncode)
