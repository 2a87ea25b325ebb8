#!/usr/bin/env python3
"""Concurrency campaign: several dualcam writers aimed at ONE output file, at random offsets;
no recording may ever be lost. Seeded and reproducible (the choices of a round, not the
scheduler's timing), bounded by --rounds and --seconds.

  campaign.py [--dualcam PATH] [--rounds N] [--seed K] [--keep DIR] [--seconds S]
              [--round-seed R ...]

Once at start: a small compose result (inset in another corner than the rounds' compose, so
its bytes are its own; copied in as an existing OUT in some rounds) and a take
recorded with --iso (take.mov and its companions, copied into every round for relayout); the
durations of BACK (= compose's output) and of the take (= relayout's output) are measured.

Each round, in a fresh folder (stdin /dev/null, HOME a folder of its own), record A
(--duration DA, 2.0-3.5 s but short of the end of the files played as cameras, where a record
stops: the fixtures last 3 s) writes OUT, and at random offsets from A's start (-0.5 s to
DA-0.3 s; a quarter of them within 0.05 s of it) some of: compose BACK FRONT -o OUT --overwrite,
relayout TAKE -o OUT --overwrite, finish OUT, record B (--duration DB, 1.0-1.8 s) --overwrite
-o OUT; A has --overwrite when OUT is there first or another writer starts before it. Record durations keep > 0.3 s away from
compose's and relayout's, so the file left at OUT tells by its duration whose it is (the
existing OUT by its bytes). Invariants, any violation fails the round:
 1. no process dies by a signal or hangs (60 s each);
 2. a process that exits non-zero exits 1, its last stderr line "dualcam: ..." explaining;
 3. no take is lost: a record that exited 0 has its whole take at OUT (duration within 0.25 s
    of --duration, every frame decodes), unless a writer that exited 0 and took OUT after that
    record ended is at OUT (when it said it held OUT: "recording to", "composing ... into"); a record that exited non-zero must have refused before recording
    (one that recorded, said so or ran its whole --duration, and then failed lost its take);
 4. OUT, if there, is whole; it is the output of a writer that exited 0 (or the existing OUT
    still, when none did), not superseded by a writer that exited 0 and took OUT after it
    ended; no writer that exited 0 and started after a record said "recording to OUT" claims OUT
    while that record's take sits there; the take's files are untouched;
 5. nothing but OUT and the take's files is left in the folder (no hidden file).
Prints a line per round, every failing round in full (seeds, commands, offsets, exit codes,
stdout, stderr), and last `concurrency campaign: N rounds, F failed`; exits 1 on a failure.
A failing round is replayed (same choices) with --round-seed R, R as printed.
"""
import argparse, hashlib, json, os, random, shlex, shutil, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 60.0        # seconds any one process may take
TOLERANCE = 0.25      # a take's duration vs its --duration, and for telling whose file OUT is
SEPARATION = 0.32     # record durations keep farther than 0.3 s from compose's and relayout's
SIZE = "320x180"
OUT = "out.mov"
TAKE_FILES = ["take.mov", "take.back.mov", "take.front.mov", "take.dualcam.json"]
CONTENT_WRITERS = ("A", "B", "compose", "relayout")   # finish copies what is there: makes nothing new


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def probe_duration(path):
    """ffprobe's duration of a file, or None when ffprobe cannot read one."""
    p = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    try:
        return float(p.stdout.strip()) if p.returncode == 0 else None
    except ValueError:
        return None


def decode_errors(path):
    """What `ffmpeg -v error -i FILE -f null -` prints (nothing for a file whose frames all decode)."""
    p = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    text = (p.stdout + p.stderr).strip()
    if p.returncode != 0 and not text:
        text = f"ffmpeg exited {p.returncode}"
    return text


def child_env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = home
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


def draw_duration(rng, low, high, avoid):
    """A duration in [low, high] (0.01 s steps) farther than SEPARATION from each of avoid."""
    steps = [round(low + i * 0.01, 2) for i in range(int(round((high - low) / 0.01)) + 1)]
    allowed = [d for d in steps if all(abs(d - a) > SEPARATION for a in avoid)]
    if not allowed:
        sys.exit(f"campaign: no duration in {low}-{high} s is more than {SEPARATION} s from {avoid}")
    return rng.choice(allowed)


class Run:
    """One dualcam process of a round: its argv, when it is to start (from A's start), and what it did."""

    def __init__(self, name, argv, offset, duration=None):
        self.name, self.argv, self.offset, self.duration = name, argv, offset, duration
        self.start = self.end = None
        self.returncode = None
        self.stdout = self.stderr = ""
        self.hung = False
        self.error = None
        self.recording_at = None          # when a record's stderr said "dualcam: recording to"
        self.claimed_at = None            # when it said it had OUT: that line, or compose's "composing ..."

    @property
    def took_out_at(self):
        """When the writer had OUT: what it said once it held it, else its start (the earliest it could)."""
        return self.claimed_at if self.claimed_at is not None else self.start

    @property
    def ok(self):
        return self.returncode == 0 and not self.hung

    def go(self, cwd, env, t0, live, lock):
        try:
            delay = t0 + self.offset - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.start = time.monotonic()
            proc = subprocess.Popen(self.argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            with lock:
                live.append(proc)
            out, lines = [], []

            def read_stdout():   # each line with when it came: when compose said it was composing
                for line in iter(proc.stdout.readline, b""):
                    out.append((time.monotonic(), line.decode("utf-8", "replace")))

            def read_stderr():   # each line with when it came: when a record said it was recording
                for line in iter(proc.stderr.readline, b""):
                    lines.append((time.monotonic(), line.decode("utf-8", "replace")))

            readers = [threading.Thread(target=read_stdout, daemon=True),
                       threading.Thread(target=read_stderr, daemon=True)]
            for t in readers:
                t.start()
            try:
                proc.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.hung = True
                proc.kill()
                proc.wait()
            self.end = time.monotonic()
            for t in readers:
                t.join(10)
            self.returncode = proc.returncode
            self.stdout = "".join(line for _, line in out)
            self.stderr = "".join(line for _, line in lines)
            self.recording_at = next((t for t, line in lines if line.startswith("dualcam: recording to")), None)
            # A writer says it is at work only once it holds OUT (record: "recording to", after
            # its claim; compose and relayout: "composing ... into", after their output's claim).
            composing_at = next((t for t, line in out if line.startswith("composing ")), None)
            self.claimed_at = self.recording_at if self.recording_at is not None else composing_at
        except Exception as e:            # noqa: BLE001 - reported as the round's failure
            self.error = f"{type(e).__name__}: {e}"
            if self.end is None:
                self.end = time.monotonic()


class Campaign:
    def __init__(self, args):
        self.args = args
        self.dualcam = os.path.abspath(args.dualcam)
        self.back = os.path.abspath(args.back)
        self.front = os.path.abspath(args.front)
        self.base = tempfile.mkdtemp(prefix="dualcam-campaign-")
        self.live, self.lock = [], threading.Lock()

    # ---- once at start -------------------------------------------------------------
    def setup(self):
        for tool in ("ffprobe", "ffmpeg"):
            if not shutil.which(tool):
                sys.exit(f"campaign: {tool} is needed")
        for path in (self.dualcam, self.back, self.front):
            if not os.path.exists(path):
                sys.exit(f"campaign: {path}: no such file")
        home = os.path.join(self.base, "setup-home")
        os.makedirs(home)
        env = child_env(home)
        self.compose_duration = probe_duration(self.back)
        front_duration = probe_duration(self.front)
        if self.compose_duration is None or front_duration is None:
            sys.exit(f"campaign: ffprobe cannot read {self.back} or {self.front}")
        # A record stops when a file played as a camera ends: no --duration past the shorter file.
        self.longest_take = min(3.5, self.compose_duration, front_duration) - 0.1

        pre_dir = os.path.join(self.base, "existing")
        os.makedirs(pre_dir)
        self.existing = os.path.join(pre_dir, "existing.mov")
        # Another corner than the rounds' compose: bytes of its own, told apart from compose's output.
        self.setup_run([self.dualcam, "compose", self.back, self.front, "-o", self.existing, "--size", SIZE,
                        "--corner", "bottom-left", "--quiet"], pre_dir, env)
        self.existing_sha = sha256(self.existing)
        self.existing_duration = probe_duration(self.existing)

        self.take_dir = os.path.join(self.base, "take")
        os.makedirs(self.take_dir)
        self.setup_run([self.dualcam, "record", "--back", self.back, "--front", self.front, "--audio", "none",
                        "--skip-speed-check", "--size", SIZE, "--iso", "--duration", "1.5", "-o", "take.mov", "--quiet"],
                       self.take_dir, env)
        missing = [f for f in TAKE_FILES if not os.path.exists(os.path.join(self.take_dir, f))]
        if missing:
            sys.exit(f"campaign: record --iso left no {', '.join(missing)}")
        self.take_sha = {f: sha256(os.path.join(self.take_dir, f)) for f in TAKE_FILES}
        self.relayout_duration = probe_duration(os.path.join(self.take_dir, "take.mov"))
        if self.relayout_duration is None:
            sys.exit("campaign: ffprobe cannot read the take recorded at start")
        print(f"campaign: compose's output lasts {self.compose_duration:.3f} s (BACK), relayout's "
              f"{self.relayout_duration:.3f} s (the take), so DA is drawn from 2.0-{self.longest_take:.2f} s "
              f"(the cameras' files end at {min(self.compose_duration, front_duration):.2f} s) and DB from 1.0-1.8 s, "
              f"each more than {SEPARATION - 0.02:.1f} s from those; {self.dualcam}", flush=True)

    def setup_run(self, argv, cwd, env):
        p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=TIMEOUT)
        if p.returncode != 0:
            sys.exit(f"campaign: setup failed ({p.returncode}): {shlex.join(argv)}\n{p.stdout}{p.stderr}")

    # ---- a round -------------------------------------------------------------------
    def plan(self, round_seed):
        rng = random.Random(round_seed)
        avoid = [self.compose_duration, self.relayout_duration]
        existing = rng.random() < 0.5
        da = draw_duration(rng, 2.0, self.longest_take, avoid)
        db = draw_duration(rng, 1.0, 1.8, avoid + [da])

        def offset():
            # Mostly anywhere in the window; now and then about together with A (the races at the start).
            if rng.random() < 0.25:
                return round(rng.uniform(-0.05, 0.05), 2)
            return round(rng.uniform(-0.5, da - 0.3), 2)

        record = [self.dualcam, "record", "--back", self.back, "--front", self.front, "--audio", "none",
                  "--skip-speed-check", "--size", SIZE]
        others = []
        while not others:
            if rng.random() < 0.5:
                others.append(Run("compose", [self.dualcam, "compose", self.back, self.front, "-o", OUT, "--overwrite",
                                              "--size", SIZE], offset()))
            if rng.random() < 0.5:
                others.append(Run("relayout", [self.dualcam, "relayout", "take.mov", "-o", OUT, "--overwrite",
                                               "--size", SIZE], offset()))
            if rng.random() < 0.4:
                others.append(Run("finish", [self.dualcam, "finish", OUT], offset()))
            if rng.random() < 0.5:
                others.append(Run("B", record + ["--duration", f"{db:.2f}", "--overwrite", "-o", OUT, "--json"],
                                  offset(), db))
        # A is told --overwrite when OUT is there before it: the existing file, or a writer started first.
        overwrite = existing or any(r.offset < 0 for r in others)
        a = Run("A", record + ["--duration", f"{da:.2f}", "-o", OUT, "--json"] + (["--overwrite"] if overwrite else []),
                0.0, da)
        return existing, [a] + others

    def run_round(self, index, round_seed):
        existing, runs = self.plan(round_seed)
        folder = os.path.join(self.base, f"round-{index:03d}")
        work, home = os.path.join(folder, "work"), os.path.join(folder, "home")
        os.makedirs(work)
        os.makedirs(home)
        for f in TAKE_FILES:
            shutil.copy2(os.path.join(self.take_dir, f), os.path.join(work, f))
        if existing:
            shutil.copy2(self.existing, os.path.join(work, OUT))
        env = child_env(home)

        t0 = time.monotonic() - min(0.0, min(r.offset for r in runs)) + 0.05
        threads = [threading.Thread(target=r.go, args=(work, env, t0, self.live, self.lock), daemon=True) for r in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with self.lock:
            self.live.clear()

        result = self.check(work, existing, runs)
        report = self.report(index, round_seed, existing, runs, result, work)
        if result["violations"] and self.args.keep:
            dest = os.path.join(self.args.keep, f"round-{index:03d}-seed-{round_seed}")
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(folder, dest, symlinks=True, ignore_dangling_symlinks=True)
            with open(os.path.join(dest, "report.txt"), "w") as f:
                f.write(report)
        shutil.rmtree(folder, ignore_errors=True)
        return result, report, runs

    # ---- the invariants ------------------------------------------------------------
    def identify(self, path, existing, runs, duration):
        """Whose file OUT is: 'existing' (its bytes), a writer's name (by duration), or 'unknown'."""
        if existing and sha256(path) == self.existing_sha:
            return "existing"
        if duration is None:
            return "unknown"
        candidates = []
        for r in runs:
            if r.name in ("A", "B"):
                candidates.append((abs(duration - r.duration), r.name))
            elif r.name == "compose":
                candidates.append((abs(duration - self.compose_duration), r.name))
            elif r.name == "relayout":
                candidates.append((abs(duration - self.relayout_duration), r.name))
        if existing and not any(r.name == "compose" for r in runs):   # rewritten in place (finish), same recording
            candidates.append((abs(duration - self.existing_duration), "existing"))
        if not candidates:
            return "unknown"
        distance, name = min(candidates)
        return name if distance <= TOLERANCE else "unknown"

    def check(self, work, existing, runs):
        v = []
        by_name = {r.name: r for r in runs}
        # 1 and 2: how each process ended.
        for r in runs:
            if r.error:
                v.append(f"1: {r.name}: could not be run: {r.error}")
            elif r.hung:
                v.append(f"1: {r.name}: still running after {TIMEOUT:.0f} s (killed)")
            elif r.returncode < 0:
                v.append(f"1: {r.name}: died by signal {-r.returncode}")
            elif r.returncode != 0:
                lines = [l for l in r.stderr.splitlines() if l.strip()]
                last = lines[-1] if lines else ""
                if r.returncode != 1:
                    v.append(f"2: {r.name}: exited {r.returncode}, not 1")
                if not last.startswith("dualcam:") or len(last[len("dualcam:"):].strip()) < 8:
                    v.append(f"2: {r.name}: exited {r.returncode} and its last stderr line is not a "
                             f"'dualcam: ...' explanation: {last!r}")

        # What is at OUT at the end.
        out = os.path.join(work, OUT)
        duration, errors, ident = None, "", "missing"
        if os.path.lexists(out):
            duration = probe_duration(out)
            if duration is None:
                v.append("4: OUT is there but ffprobe cannot read it")
            errors = decode_errors(out)
            if errors:
                v.append(f"4: OUT does not decode cleanly: {errors[:600]}")
            ident = self.identify(out, existing, runs, duration)
        succeeded = [r for r in runs if r.ok and r.name in CONTENT_WRITERS]
        names = {r.name for r in succeeded}

        # 3: every record that exited 0 is at OUT, whole, unless a later writer that exited 0 is.
        for r in runs:
            if r.name not in ("A", "B"):
                continue
            if r.ok:
                try:
                    summary = json.loads(r.stdout)
                    if not isinstance(summary, dict) or os.path.realpath(os.path.join(work, str(summary.get("output")))) \
                            != os.path.realpath(out):
                        v.append(f"3: {r.name}: --json summary does not name {OUT}: {r.stdout.strip()[:300]}")
                except ValueError:
                    v.append(f"3: {r.name}: exited 0 but stdout is not one JSON object: {r.stdout.strip()[:300]}")
                if ident == r.name:
                    if duration is None or abs(duration - r.duration) > TOLERANCE or errors:
                        v.append(f"3: {r.name}: its take at OUT is not whole (duration {duration}, "
                                 f"--duration {r.duration}, decode: {errors[:200] or 'ok'})")
                    continue
                # A writer that took OUT only once the record had ended may replace its finished
                # take (--overwrite asked for it); one that started earlier but was still opening
                # its inputs when the record ended counts from when it said it held OUT.
                later = [w for w in succeeded if w is not r and w.took_out_at > r.end and w.name == ident]
                if not later:
                    v.append(f"3: {r.name} exited 0 but its take is lost: OUT is {self.describe(ident, duration)}, "
                             f"and no writer that exited 0 took OUT after {r.name} ended is there")
            elif r.returncode is not None and not r.hung:
                said = r.recording_at is not None
                ran = r.end - r.start >= r.duration
                if said or ran:
                    v.append(f"3: {r.name} recorded (" + ("said 'recording to'" if said else "") +
                             (", " if said and ran else "") + (f"ran {r.end - r.start:.2f} s" if ran else "") +
                             f") and then exited {r.returncode}: its take is lost")

        # 4: OUT is what some writer that exited 0 made (or the existing file, untouched, when none did).
        if succeeded:
            if ident not in names:
                v.append(f"4: {', '.join(sorted(names))} exited 0 but OUT is {self.describe(ident, duration)}")
            else:
                at = by_name[ident]
                for w in succeeded:
                    if w is not at and w.took_out_at > at.end:
                        v.append(f"4: OUT is {ident}'s, but {w.name} exited 0 and took OUT after {ident} ended")
                if ident in ("A", "B") and at.recording_at is not None:
                    for w in succeeded:
                        if w is not at and w.start > at.recording_at:
                            v.append(f"4: {w.name} started after {ident} said it was recording to OUT and exited 0 "
                                     f"(claims OUT), yet {ident}'s take sits at OUT")
        elif existing and ident != "existing":
            v.append(f"4: no writer exited 0, yet the existing OUT is gone: OUT is {self.describe(ident, duration)}")
        elif not existing and ident != "missing":
            v.append(f"4: no writer exited 0, yet OUT is there: {self.describe(ident, duration)}")

        # The take's files (relayout's input) are untouched; 5: nothing else is left.
        for f in TAKE_FILES:
            p = os.path.join(work, f)
            if not os.path.exists(p):
                v.append(f"4: {f} (the take) is gone")
            elif sha256(p) != self.take_sha[f]:
                v.append(f"4: {f} (the take) was changed")
        left = sorted(set(os.listdir(work)) - set(TAKE_FILES) - {OUT})
        if left:
            v.append(f"5: left in the folder: {', '.join(left)}")
        return {"violations": v, "ident": ident, "duration": duration, "listing": sorted(os.listdir(work))}

    def describe(self, ident, duration):
        d = "no file" if duration is None else f"{duration:.3f} s"
        return {"missing": "missing", "unknown": f"no writer's file ({d})",
                "existing": f"the existing file ({d})"}.get(ident, f"{ident}'s ({d})")

    def report(self, index, round_seed, existing, runs, result, work):
        a = runs[0]
        lines = [f"=== round {index} FAILED: --round-seed {round_seed} (campaign --seed {self.args.seed})",
                 f"folder {work}; existing OUT first: {'yes' if existing else 'no'}; "
                 f"OUT at the end: {self.describe(result['ident'], result['duration'])}",
                 "violations:"] + [f"  {x}" for x in result["violations"]] + ["processes (times from A's start):"]
        for r in sorted(runs, key=lambda r: r.start if r.start is not None else 1e18):
            if r.start is None:
                lines.append(f"--- {r.name}: never started ({r.error})")
                continue
            start = r.start - (a.start if a.start is not None else r.start)
            end = r.end - (a.start if a.start is not None else r.start)
            rc = "hung" if r.hung else r.returncode
            lines.append(f"--- {r.name}: planned {r.offset:+.2f} s, ran {start:+.3f} .. {end:+.3f} s, exit {rc}")
            lines.append(f"    $ {shlex.join(r.argv)}")
            for label, text in (("stdout", r.stdout), ("stderr", r.stderr)):
                if text.strip():
                    lines.append(f"    {label}:")
                    lines += [f"      {l}" for l in text.rstrip().splitlines()]
        lines.append(f"folder at the end: {', '.join(result['listing'])}")
        return "\n".join(lines) + "\n"

    def summary_line(self, index, total, round_seed, runs, result, took):
        a = runs[0]
        parts = [f"A {a.duration:.2f}s"]
        for r in runs[1:]:
            label = f"B {r.duration:.2f}s" if r.name == "B" else r.name
            parts.append(f"{label}@{r.offset:+.2f}")
        codes = " ".join(f"{r.name}={'hung' if r.hung else r.returncode}" for r in runs)
        status = "ok" if not result["violations"] else f"FAIL ({len(result['violations'])})"
        return (f"round {index}/{total} seed {round_seed}: {', '.join(parts)} | {codes} | "
                f"OUT {self.describe(result['ident'], result['duration'])} | {took:.1f} s {status}")

    def kill_live(self):
        with self.lock:
            for p in self.live:
                if p.poll() is None:
                    p.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dualcam", default=os.path.join(ROOT, ".build", "debug", "dualcam"))
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--seed", type=int, default=None, help="campaign seed (default: a random one, printed)")
    ap.add_argument("--keep", metavar="DIR", help="copy each failing round's folder and report here")
    ap.add_argument("--seconds", type=float, default=900.0, help="no round starts after this many seconds")
    ap.add_argument("--round-seed", type=int, action="append", default=[],
                    help="run just this round (as printed); repeatable")
    ap.add_argument("--back", default=os.path.join(ROOT, "Fixtures", "back-16x9-30fps.mp4"))
    ap.add_argument("--front", default=os.path.join(ROOT, "Fixtures", "front-4x3-25fps.mkv"))
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    master = random.Random(args.seed)
    seeds = args.round_seed or [master.randrange(1 << 31) for _ in range(args.rounds)]
    print(f"concurrency campaign: --seed {args.seed}, {len(seeds)} rounds, at most {args.seconds:.0f} s", flush=True)

    c = Campaign(args)
    began = time.monotonic()
    done = failed = 0
    try:
        c.setup()
        for i, round_seed in enumerate(seeds, 1):
            if time.monotonic() - began >= args.seconds:
                print(f"concurrency campaign: time bound of {args.seconds:.0f} s reached after {done} rounds", flush=True)
                break
            t = time.monotonic()
            result, report, runs = c.run_round(i, round_seed)
            done += 1
            print(c.summary_line(i, len(seeds), round_seed, runs, result, time.monotonic() - t), flush=True)
            if result["violations"]:
                failed += 1
                print(report, flush=True)
    except KeyboardInterrupt:
        print("concurrency campaign: interrupted", flush=True)
        failed += 1
    finally:
        c.kill_live()
        shutil.rmtree(c.base, ignore_errors=True)
    print(f"concurrency campaign: {done} rounds, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
