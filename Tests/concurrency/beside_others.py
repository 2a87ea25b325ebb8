#!/usr/bin/env python3
"""dualcam beside other writers: seeded rounds of two kinds, each in a fresh folder.

  beside_others.py [--dualcam PATH] [--rounds N] [--seed K]

growing: ffmpeg writes a fragmented MP4 in real time (3 s, as OBS's fragmented mode or a
download would), and at random offsets `dualcam finish FILE` and `dualcam finish FILE -o
COPY.mp4` run against it. While ffmpeg writes, both must refuse in one line, exit 1, and
leave no COPY; ffmpeg's file must end whole (its 90 frames decode, its bytes as ffmpeg left
them); after ffmpeg is done, `finish FILE -o COPY.mp4` must succeed (in place it is refused:
dualcam did not record it).

names: 2-4 `dualcam record` without -o started within 40 ms of each other in one folder.
Every one must exit 0 and the folder must hold one take per record, each whole.

smalldisk: `record --iso` onto a tmpfs of 3-40 MB (needs root to mount; without it the kind
is NOT RUN, and a failure when DUALCAM_REQUIRE_ALL is set), cameras plain or noisy, 2-6 s.
It must exit 0 with the take whole (every frame of --duration), or exit 1 with its last line
saying where the take is kept, which then plays; every camera file it lists plays; no hidden
file is left.

Prints a line per round and last `beside others: N rounds, F failed`; exits 1 on a failure.
"""
import argparse, os, random, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 60.0
BACK = os.path.join(ROOT, "Fixtures", "back-16x9-30fps.mp4")


def frames(path):
    p = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                        "stream=nb_read_frames", "-of", "csv=p=0", path], capture_output=True, text=True, timeout=TIMEOUT)
    try:
        return int(p.stdout.strip())
    except ValueError:
        return -1


def run(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode, p.stderr.strip()


def growing_round(dualcam, rng, folder):
    problems = []
    grow = os.path.join(folder, "grow.mp4")
    writer = subprocess.Popen(["ffmpeg", "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=3",
                               "-c:v", "libx264", "-preset", "ultrafast", "-g", "15", "-movflags", "+frag_keyframe+empty_moov",
                               grow], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    offsets = sorted(rng.uniform(0.4, 2.6) for _ in range(2))
    began = time.monotonic()
    for offset, copy in zip(offsets, (False, True)):
        time.sleep(max(0.0, offset - (time.monotonic() - began)))
        if not os.path.exists(grow):
            continue
        argv = [dualcam, "finish", "grow.mp4"] + (["-o", "copy.mp4"] if copy else [])
        code, err = run(argv, folder)
        still = writer.poll() is None
        lines = err.splitlines()
        if code != 1 or len(lines) != 1 or not lines[0].startswith("dualcam: "):
            problems.append(f"{' '.join(argv[1:])} at {offset:.2f} s: exit {code}, said {err!r}")
        elif still and "open for writing by ffmpeg" not in err and "not recorded by dualcam" not in err:
            problems.append(f"{' '.join(argv[1:])} at {offset:.2f} s while ffmpeg wrote: {err!r}")
        if os.path.exists(os.path.join(folder, "copy.mp4")):
            problems.append(f"{' '.join(argv[1:])} at {offset:.2f} s left copy.mp4 while ffmpeg wrote")
    _, ffmpeg_err = writer.communicate(timeout=TIMEOUT)
    if writer.returncode != 0:
        problems.append(f"ffmpeg exited {writer.returncode}: {ffmpeg_err.decode(errors='replace')}")
    if frames(grow) != 90:
        problems.append(f"grow.mp4 holds {frames(grow)} frames, ffmpeg wrote 90")
    code, err = run([dualcam, "finish", "grow.mp4", "-o", "copy.mp4"], folder)
    if code != 0 or frames(os.path.join(folder, "copy.mp4")) != 90:
        problems.append(f"finish -o after ffmpeg was done: exit {code} {err!r}")
    return f"finishes at {', '.join(f'{o:.2f}' for o in offsets)} s", problems


def names_round(dualcam, rng, folder):
    problems = []
    count = rng.randint(2, 4)
    offsets = sorted(rng.uniform(0, 0.04) for _ in range(count))
    procs, began = [], time.monotonic()
    for offset in offsets:
        time.sleep(max(0.0, offset - (time.monotonic() - began)))
        procs.append(subprocess.Popen([dualcam, "record", "--back", BACK, "--duration", "1", "--audio", "none", "--size",
                                       "320x180", "--skip-speed-check", "--quiet"], cwd=folder, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=TIMEOUT)
        if p.returncode != 0:
            problems.append(f"a record exited {p.returncode}: {err.decode(errors='replace').strip()!r}")
    takes = sorted(n for n in os.listdir(folder) if n.startswith("dualcam-") and n.endswith(".mov"))
    if len(takes) != count or len(os.listdir(folder)) != count:
        problems.append(f"{count} records left {sorted(os.listdir(folder))}")
    for take in takes:
        if not 25 <= frames(os.path.join(folder, take)) <= 31:
            problems.append(f"{take} holds {frames(os.path.join(folder, take))} frames for 1 s")
    return f"{count} records at {', '.join(f'{o * 1000:.0f}' for o in offsets)} ms", problems


NOISY = None


def smalldisk_round(dualcam, rng, folder):
    global NOISY
    if NOISY is None:
        NOISY = os.path.join(tempfile.gettempdir(), f"dualcam-beside-noisy-{os.getpid()}.mp4")
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=s=1280x720:r=30:d=8,noise=alls=40:allf=t", "-c:v", "libx264", "-preset", "ultrafast",
                        "-pix_fmt", "yuv420p", NOISY], check=True, timeout=TIMEOUT)
    size, seconds, noisy = rng.randint(3, 40), rng.randint(2, 6), rng.random() < 0.5
    disk = os.path.join(folder, "disk")
    os.makedirs(disk)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}m", "tmpfs", disk], capture_output=True, text=True)
    if mounted.returncode != 0:
        return "NOT RUN (mounting a tmpfs needs root)", (["cannot mount: " + mounted.stderr.strip()]
                                                            if os.environ.get("DUALCAM_REQUIRE_ALL") else [])
    problems = []
    try:
        camera = NOISY if noisy else BACK
        argv = [dualcam, "record", "--back", camera, "--front", os.path.join(ROOT, "Fixtures", "front-4x3-25fps.mkv"), "--iso",
                "--audio", "none", "--duration", str(min(seconds, 7 if noisy else 2.9)), "--size", "640x360", "--skip-speed-check",
                "--max-encoder-lag", "5", "-o", "t.mov"]
        code, err = run(argv, disk)
        lines = err.splitlines()
        take = os.path.join(disk, "t.mov")
        expected = round(float(argv[argv.index("--duration") + 1]) * 30)
        if code == 0:
            if frames(take) != expected:
                problems.append(f"exit 0 but t.mov holds {frames(take)} frames of {expected}")
        elif code == 1:
            if not lines or "kept" not in lines[-1] and "No space" not in lines[-1]:
                problems.append(f"exit 1: {lines[-1] if lines else 'nothing said'}")
            if os.path.exists(take) and frames(take) < 0:
                problems.append("the take kept does not play")
        else:
            problems.append(f"exit {code}: {err!r}")
        for name in os.listdir(disk):
            if name.startswith("."):
                problems.append(f"hidden file left: {name}")
            elif name.endswith(".mov") and name != "t.mov" and frames(os.path.join(disk, name)) < 0:
                problems.append(f"{name} does not play")
        what = f"{size} MB, {'noisy' if noisy else 'plain'} camera, {argv[argv.index('--duration') + 1]} s: exit {code}"
    finally:
        subprocess.run(["umount", disk], capture_output=True)
    return what, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dualcam", default=os.path.join(ROOT, ".build", "debug", "dualcam"))
    ap.add_argument("--rounds", type=int, default=10, help="rounds of each kind")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    rng = random.Random(seed)
    print(f"beside others: --seed {seed}, {args.rounds} rounds of each kind", flush=True)
    done = failed = 0
    for i in range(args.rounds):
        for kind, body in (("growing", growing_round), ("names", names_round), ("smalldisk", smalldisk_round)):
            folder = tempfile.mkdtemp(prefix=f"dualcam-beside-{kind}-")
            try:
                what, problems = body(os.path.abspath(args.dualcam), rng, folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            done += 1
            print(f"{kind} {i + 1}/{args.rounds}: {what}: {'ok' if not problems else 'FAIL'}", flush=True)
            for problem in problems:
                print(f"  {problem}", flush=True)
            failed += bool(problems)
    if NOISY:
        os.unlink(NOISY)
    print(f"beside others: {done} rounds, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
