#!/usr/bin/env python3
"""Runs the README's recipes as a reader would paste them, so that a stale one fails CI.

    recipes.py --dualcam PATH --kind files|cameras [--work DIR]

A recipe is a fenced block right after a line `<!-- recipe: KIND [stop=SECONDS] -->`:
  files    ```sh run by bash -e in a folder holding talk.mp4 and face.mp4 (made here with
           ffmpeg: 8 s, a test picture and a tone each); `ci` recipes run there too, after.
  cameras  ```sh run the same way in the vivid VM (Tests/vivid/scenario.sh readme), beside
           two virtual webcams, /dev/video0 and /dev/video1.
  ci       ```yaml CI jobs: each `run:` or `script:` command that starts with `dualcam` is run;
           the set-up lines (Scripts/setup.sh, Scripts/install.sh) are what CI itself runs
           before this and are named, not run; anything else fails.
In the VM (--vm) each `dualcam record` gets the VM's test knobs first, as every VM scenario
does: a 320x180 canvas and MPEG-4 (--canvas 320x180 --inset 64x48 --margin 8 --video-encoder
mpeg4 --skip-speed-check). The emulated VM runs about 20 times slower than hardware, x265 at
1080p at 0.8 fps there, so a 4 s take at full size took minutes to finish. The recipe's own
options are all still given and checked; the host's recipes record at full size.
stop=SECONDS sends Ctrl-C (SIGINT) to the recipe that long after dualcam says "recording
to" (its first picture has come), as a user stopping a recording would. Every ```sh or ```yaml block in the README must be a recipe:
one that is not marked fails here, so none is left out unseen. After each recipe, every file
it wrote with -o (and each `finish FILE`) must be a movie ffprobe reads, with pictures.
Exit 0 when every recipe of the kind ran and exited 0, else 1, with a line per failure.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "..", "README.md")
MARKER = re.compile(r"^<!-- recipe: (\w+)((?: \w+=\S+)*) -->$")
SETUP_LINES = re.compile(r"^(sudo )?bash Scripts/(setup|install)\.sh( \S+)?$")
TIME_LIMIT = 600
VM_KNOBS = "--canvas 320x180 --inset 64x48 --margin 8 --video-encoder mpeg4 --skip-speed-check"


def recipes(text):
    """[(kind, options, language, body, line)] in the README's order; fails on unmarked blocks."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)$", lines[i])
        if not fence:
            i += 1
            continue
        language, start = fence.group(1), i
        end = next(j for j in range(i + 1, len(lines)) if lines[j] == "```")
        if language in ("sh", "yaml"):
            marker = MARKER.match(lines[start - 1]) if start > 0 else None
            if not marker:
                sys.exit(f"recipes: README.md:{start + 1}: a ```{language} block without <!-- recipe: KIND --> above it")
            options = dict(o.split("=") for o in marker.group(2).split())
            found.append((marker.group(1), options, language, "\n".join(lines[start + 1:end]), start + 1))
        i = end + 1
    return found


def make_clips(work):
    for name, picture, size, tone in (("talk.mp4", "testsrc2", "1280x720", 440), ("face.mp4", "smptebars", "640x480", 660)):
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", f"{picture}=s={size}:r=30:d=8",
                        "-f", "lavfi", "-i", f"sine=f={tone}:d=8", "-c:v", "libx264", "-preset", "ultrafast",
                        "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", os.path.join(work, name)], check=True)


def written_files(body):
    names = re.findall(r"(?:^|\s)-o (\S+)", body) + re.findall(r"\bdualcam finish (\S+)", body)
    return [n for n in dict.fromkeys(names) if n != "none"]


def has_pictures(path):
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                        "stream=codec_name,nb_read_packets", "-of", "csv=p=0", path], capture_output=True, text=True)
    fields = r.stdout.strip().split(",")
    return r.returncode == 0 and len(fields) == 2 and fields[1].isdigit() and int(fields[1]) >= 10, r.stdout.strip() or r.stderr.strip()


def run_shell(body, work, env, stop):
    # Into a file, not a pipe (nobody reads a pipe while the recipe runs), read back through
    # a descriptor of its own: one sharing the recipe's offset would move where it writes.
    log = tempfile.NamedTemporaryFile(mode="w", prefix="recipe-", suffix=".log")
    process = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", body], cwd=work, env=env, start_new_session=True,
                               stdout=log, stderr=subprocess.STDOUT, text=True)
    started = time.monotonic()
    recording = None  # when dualcam said it records
    stopped = False
    while process.poll() is None:
        elapsed = time.monotonic() - started
        if recording is None:
            with open(log.name) as said:
                if "recording to" in said.read():
                    recording = time.monotonic()
        if stop is not None and not stopped and recording is not None and time.monotonic() - recording >= stop:
            os.killpg(process.pid, signal.SIGINT)  # Ctrl-C at a terminal reaches the whole group
            stopped = True
        if elapsed > TIME_LIMIT:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return 124, f"still running after {TIME_LIMIT} s"
        # Between looks at the log: returns at once when the recipe ends.
        try:
            process.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            pass
    with open(log.name) as said:
        return process.returncode, said.read()


def commands_of_ci(body):
    """The shell commands of a GitHub Actions or GitLab CI job, in order."""
    commands = []
    for line in body.split("\n"):
        m = re.match(r"^\s*- run: (.+)$", line) or re.match(r"^\s{4,}- (?!uses:)(.+)$", line)
        if m and not m.group(1).startswith("uses:"):
            commands.append(m.group(1).strip())
    return commands


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dualcam", required=True)
    ap.add_argument("--kind", choices=("files", "cameras"), required=True)
    ap.add_argument("--work", help="folder to run in (default: a new temporary one)")
    ap.add_argument("--vm", action="store_true", help="add the emulated VM's test knobs to each record (see above)")
    args = ap.parse_args()
    with open(README) as f:
        found = recipes(f.read())
    kinds = ("files", "ci") if args.kind == "files" else ("cameras",)
    chosen = [r for r in found if r[0] in kinds]
    unknown = [r for r in found if r[0] not in ("files", "ci", "cameras")]
    if unknown or not chosen:
        sys.exit(f"recipes: unknown kinds {[r[0] for r in unknown]} or no {args.kind} recipe")
    work = args.work or tempfile.mkdtemp(prefix="dualcam-readme-")
    os.makedirs(work, exist_ok=True)
    if args.kind == "files":
        make_clips(work)
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(args.dualcam)) + ":" + os.environ["PATH"],
               XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_CACHE_HOME=os.path.join(work, "cache"))
    failures = 0
    for kind, options, language, body, line in chosen:
        if language == "yaml":
            commands = commands_of_ci(body)
            if not any(c.startswith("dualcam ") for c in commands):
                print(f"README.md:{line}: FAIL: no dualcam command in this CI job")
                failures += 1
            for c in commands:
                if SETUP_LINES.match(c):
                    print(f"README.md:{line}: not run here: {c} (CI runs Scripts/setup.sh, and Tests/install-check.sh Scripts/install.sh)")
                elif not c.startswith("dualcam "):
                    print(f"README.md:{line}: FAIL: a command this runner does not know: {c}")
                    failures += 1
            script = "\n".join(c for c in commands if c.startswith("dualcam "))
        else:
            script = body
        if args.vm:
            script = script.replace("dualcam record ", "dualcam record " + VM_KNOBS + " ")
        stop = float(options["stop"]) if "stop" in options else None
        status, output = run_shell(script, work, env, stop)
        bad = [] if status == 0 else [f"exit {status}"]
        for name in written_files(script):
            ok, what = has_pictures(os.path.join(work, name))
            if not ok:
                bad.append(f"{name}: {what or 'no pictures'}")
        first = script.strip().split("\n")[0]
        if bad:
            failures += 1
            print(f"README.md:{line}: FAIL ({'; '.join(bad)}): {first}\n" + "".join(f"    {l}\n" for l in output.splitlines()[-15:]))
        else:
            print(f"README.md:{line}: ok: {first}")
    print(f"recipes: {len(chosen) - failures} of {len(chosen)} {args.kind} recipes ran as written (in {work})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
