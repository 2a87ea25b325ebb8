#!/usr/bin/env python3
"""Mutation fuzzer for dualcam's demux/decode entry point: `dualcam compose` on damaged
copies of the bundled fixtures (bit flips, zeroed or duplicated ranges, absurd 32-bit
values such as box sizes, truncation, inserted junk), one damaged file per run as BACK or
FRONT. Every run must end in a plain exit (no signal, no hang) with either a file at OUT
that ffprobe reads, or a non-zero exit, exactly one `dualcam:` line on stderr and nothing
left at OUT or beside it. Bounded by --runs and --seconds; deterministic for a --seed.

  fuzz.py --dualcam PATH [--runs N] [--seconds S] [--seed K] [--jobs J] [--keep DIR]
"""
import argparse, os, random, resource, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = ["back-16x9-30fps.mp4", "front-4x3-25fps.mkv", "portrait-rotated-60fps.mp4",
            "webcam-mjpeg-30fps.avi", "audio-only.m4a"]
TIMEOUT = 60          # seconds one run may take: the longest fixture composes in ~3 s
MEMORY = 8 << 30      # address space: a run that wants more is growing without bound


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3, 5])):
        kind = rng.randrange(7)
        n = len(b)
        if n < 16:
            break
        at = rng.randrange(n)
        if kind == 0:                      # flip a few bits
            for _ in range(rng.randint(1, 16)):
                i = rng.randrange(n)
                b[i] ^= 1 << rng.randrange(8)
        elif kind == 1:                    # zero a range
            length = rng.randint(1, 4096)
            b[at:at + length] = bytes(min(length, n - at))
        elif kind == 2:                    # an absurd 32-bit value (box sizes, counts, timestamps)
            at -= at % 4
            value = rng.choice([0, 1, 7, 8, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFF8, rng.getrandbits(32)])
            b[at:at + 4] = value.to_bytes(4, rng.choice(["big", "little"]))
        elif kind == 3:                    # truncate
            del b[rng.randint(n // 8, n - 1):]
        elif kind == 4:                    # duplicate a range
            length = rng.randint(1, 8192)
            b[at:at] = b[at:at + length]
        elif kind == 5:                    # insert junk
            b[at:at] = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64)))
        else:                              # random bytes over a range
            length = rng.randint(1, 256)
            b[at:at + length] = bytes(rng.getrandbits(8) for _ in range(min(length, n - at)))
    return bytes(b)


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def one_run(args, index: int, seed_data):
    rng = random.Random(args.seed * 1_000_003 + index)
    name = rng.choice(FIXTURES)
    damaged = mutate(seed_data[name], rng)
    work = tempfile.mkdtemp(prefix="dualcam-fuzz-")
    try:
        src = os.path.join(work, "damaged" + os.path.splitext(name)[1])
        with open(src, "wb") as f:
            f.write(damaged)
        out = os.path.join(work, "out.mov")
        other = os.path.join(ROOT, "Fixtures", "front-4x3-25fps.mkv")
        pair = [src, other] if rng.random() < 0.6 else [other, src]
        audio = rng.choice(["back", "front", "none"])
        # MPEG-4 Part 2 instead of x265: the run is about the input side, and 4x as many fit.
        cmd = [args.dualcam, "compose", *pair, "-o", out, "--audio", audio, "--video-encoder", "mpeg4"]
        started = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, preexec_fn=limit_memory)
        except subprocess.TimeoutExpired:
            return index, name, "hang", f"no exit after {TIMEOUT} s", damaged
        took = time.monotonic() - started
        err = p.stderr.decode(errors="replace").strip().splitlines()
        left = sorted(set(os.listdir(work)) - {os.path.basename(src)})
        if p.returncode < 0:
            return index, name, "signal", f"killed by signal {-p.returncode}: {err[-3:]}", damaged
        if p.returncode != 0:
            if left:
                return index, name, "leftover", f"exit {p.returncode} but left {left}", damaged
            if len(err) != 1 or not err[0].startswith("dualcam: "):
                return index, name, "message", f"exit {p.returncode}, stderr {err[:4]}", damaged
            return index, name, "rejected", f"{took:.1f}s", None
        if left != ["out.mov"]:
            return index, name, "leftover", f"exit 0 but {left}", damaged
        probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv", out],
                               capture_output=True)
        if probe.returncode != 0 or b"hevc" not in probe.stdout and b"mpeg4" not in probe.stdout:
            return index, name, "bad-output", probe.stderr.decode(errors="replace")[:200], damaged
        return index, name, "composed", f"{took:.1f}s", None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dualcam", required=True)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=1e9, help="stop starting runs after this long")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", help="folder to keep failing inputs in")
    args = ap.parse_args()
    seed_data = {n: open(os.path.join(ROOT, "Fixtures", n), "rb").read() for n in FIXTURES}
    deadline = time.monotonic() + args.seconds
    counts, failures = {}, []
    started = time.monotonic()

    def job(i):
        if time.monotonic() > deadline:
            return None
        return one_run(args, i, seed_data)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for result in pool.map(job, range(args.runs)):
            if result is None:
                continue
            index, name, verdict, detail, damaged = result
            counts[verdict] = counts.get(verdict, 0) + 1
            if damaged is not None:
                failures.append((index, name, verdict, detail))
                print(f"fuzz: FAIL run {index} ({name}): {verdict}: {detail}", flush=True)
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    with open(os.path.join(args.keep, f"run{index}-{name}"), "wb") as f:
                        f.write(damaged)
    total = sum(counts.values())
    print(f"fuzz: {total} damaged inputs in {time.monotonic() - started:.0f} s (seed {args.seed}): "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if total == 0:
        sys.exit("fuzz: no input was run")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
