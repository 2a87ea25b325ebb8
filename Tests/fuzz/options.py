#!/usr/bin/env python3
"""Option-space fuzzer for `dualcam compose` and `dualcam record`: random combinations of
every option, at and beyond its limits (sizes odd, tiny, huge, 0x0, malformed or negative;
insets from 0x0 to bigger than the canvas; rates, codecs, presets, CRF, bitrates, rotations,
swap times, audio choices, locations, capture sizes, frame rates, durations, output names
of every kind), with the bundled fixtures and a few odd-sized clips made once at start with
the system ffmpeg (2x2, 17x9, 4000x16, 16x3000, 1920x1080; 0.5 s of testsrc each) as BACK
and FRONT, or as the cameras of `record` (files play as cameras; --skip-speed-check, a
hidden test flag, keeps the encoder speed measurement out of the runs).

Each run gets a fresh output folder (its working directory), a HOME of its own, stdin
from /dev/null, no display. Every run must end in one of:
  - exit 0, and the output file that ffprobe reads, with a video stream of the codec and
    size asked, an AAC track, the rotation asked, as long as BACK (compose), a QuickTime
    file for .mov, an MP4 for .mp4 and not one under another container's name (.mkv,
    .avi ...); nothing else left in the folder (no hidden temporary file either); stderr
    only `dualcam:` lines (FFmpeg's own warnings only show with --verbose, not fuzzed);
    with --json a JSON object on stdout, with --quiet nothing on stdout or stderr;
  - exit 2 or 64 (a usage error): stderr's first line starts with "Error:" or "dualcam:";
  - exit 1: compose prints exactly one `dualcam:` line on stderr (a preview's "goes on
    without it" and --encoder auto's "encoder:" notes aside); record's stderr is all
    `dualcam:` lines (its log), the last being the error;
  - after any non-zero exit the folder is as it was before the run (empty, or the existing
    file or folder the case made, untouched).
With `--iso`, a take's camera files (TAKE.back.mov, TAKE.front.mov) and its TAKE.dualcam.json may
be added beside it on exit 0, and each camera file plays. Some record cases write onto a
tmpfs of 48 kB to 40 MB (mounting it needs root; without it they run on the ordinary disk and the
summary says how many, a failure when DUALCAM_REQUIRE_ALL is set): there an exit 1 may leave
what was recorded if its last line says where the take is kept, and every movie left plays.
No signal, no hang (TIMEOUT), no other exit code. A `-o -` output must either go to stdout
as a file ffprobe reads, with nothing in the folder, or be refused as above.

Runs are bounded by --runs and --seconds (no new run starts after it); a case depends only
on --seed and its index, so a run is reproducible. Output sizes are small most of the time,
and a cost estimate (pixels x frames x preset) shrinks the cases that would take long, so
each run takes a few seconds; record durations are at most 2 s.

  options.py [--dualcam PATH] [--runs N] [--seconds S] [--seed K] [--jobs J] [--keep DIR]

Ends with `options fuzz: N runs, E distinct errors, F failed`, after the distinct error
messages (numbers and paths normalized) with their counts and, for each failure, a command
line that reproduces it. Exit 1 if any run failed. With --keep, each failing case's
stdout, stderr, folder and a repro.sh are kept in DIR/runN, the generated clips in
DIR/sources; without it the generated clips are kept (and named) only when a run failed.
"""
import argparse, errno, hashlib, json, os, random, re, resource, shlex, shutil, signal, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "Fixtures")
TIMEOUT = 60          # seconds one run may take: the costliest case allowed takes ~10 s
MEMORY = 8 << 30      # address space: a run that wants more is growing without bound
BUDGET = 3.0e8        # pixels x frames x preset cost of one case: ~4 s of HEVC ultrafast here
REBUILD_WAIT = 300    # seconds to wait for a binary being rebuilt (text file busy, missing)
SOUNDS = set()        # the inputs with a sound track, found at start
OUT = "\0OUT\0"       # stands for the run's output folder in a case's arguments

# Clips made at start, 0.5 s of testsrc each: (name, size, ffmpeg's encoding arguments, with a 440 Hz tone).
GENERATED = [
    ("tiny-2x2.mp4", "2x2", ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"], False),
    ("odd-17x9.mkv", "17x9", ["-c:v", "ffv1"], False),
    ("wide-4000x16.mp4", "4000x16", ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv444p"], True),
    ("tall-16x3000.avi", "16x3000", ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p", "-q:v", "5"], False),
    ("full-1920x1080.mp4", "1920x1080", ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"], True),
]
# The video inputs to draw from: the 1080p clip twice, a tiny inset of a large picture
# being the hardest downscale.
VIDEOS = ["back-16x9-30fps.mp4", "front-4x3-25fps.mkv", "portrait-rotated-60fps.mp4", "webcam-mjpeg-30fps.avi"] \
    + [n for n, *_ in GENERATED] + ["full-1920x1080.mp4"]
FIXTURE_NAMES = ["back-16x9-30fps.mp4", "front-4x3-25fps.mkv", "portrait-rotated-60fps.mp4",
                 "webcam-mjpeg-30fps.avi", "audio-only.m4a"]
PRESETS = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
# Encoding time relative to ultrafast (x265; x264 is cheaper still): for the cost estimate only.
PRESET_COST = dict(zip(PRESETS, [1, 1.3, 2, 2.5, 3, 5, 12, 30, 60, 150]))
SMALL_SIZES = ["64x64", "128x72", "160x90", "320x180", "320x240", "96x64", "64x96", "360x640", "640x360"]

# Option values: (sane, edge, bad). None in a pool means the option is left out. Edge values
# are at a limit and may be valid or not; bad ones are outside every limit or malformed.
POOLS = {
    "size": (SMALL_SIZES + SMALL_SIZES[:5],
             [None, "1280x720", "1920x1080", "66x64", "64x4320", "7680x64", "7680x4320", "3840x2160", "4096x2160",
              "1080x1920", "320X180", "0640x0360"],
             ["65x64", "321x181", "64x65", "1919x1080", "2x2", "62x62", "8x8", "1x1", "0x0", "7682x4320", "7680x4322",
              "100000x100000", "99999999999999999999x2", "abc", "320x", "x180", "320*180", "320x180x2", "", " 320x180",
              "320 x 180", "0x180", "-320x180", "320x-180", "-64x-64"]),
    "rate": ([None, 24, 25, 30], [1, 2, 3, 50, 60, 120], [0, 7, 1000, -30, -1, "abc", "29.97", 240, "", "99999999999999999999"]),
    "codec": ([None, "hevc", "h264"], [], ["bogus", "HEVC", "h265", ""]),
    "encoder": ([None, "software"], ["auto"], ["bogus", ""]),
    "preset": ([None, "ultrafast", "superfast", "veryfast"], PRESETS, ["bogus", "ULTRAFAST", "", "fastest", "medium "]),
    "crf": ([None, 23, 28], [0, 1, 51], [-1, 52, "x", "28.5", "", "99999999999999999999"]),
    "bitrate": ([None, "800k", "2M"], ["100k", "200M", "100000", "0.1M", "6m", "200000000"],
                ["99k", "201M", "0", "-1", "abc", "inf", "nan", "1e12", "6G", "", "k", "-800k"]),
    "audio-bitrate": ([None, "128k", "160k"], ["32k", "512k", "32000", "512000", "96K"],
                      ["31k", "513k", "0", "abc", "-160k", "nan", "inf", "", "160kb"]),
    "rotate": ([None, 0, 90, 180, 270], [], [45, -90, 360, "x", "90.0", ""]),
    "layout": ([None, "pip", "side-by-side"], [], ["bogus", "PIP", "", "side_by_side"]),
    "corner": ([None, "top-right", "top-left", "bottom-right", "bottom-left"], [], ["bogus", "TOP-RIGHT", "center", ""]),
    "inset": ([None, "FIT", "FIT", "FIT", "48x64"],
              ["0x0", "1x1", "2x2", "16x16", "16x16", "32x32", "32x32", "17x16", "16x33", "3x5", "33x17", "CANVAS",
               "CANVAS+2", "4000x4000", "1x4000", "4000x1", "0x16", "16x0", "1x1080"],
              ["abc", "16x", "x16", "-16x16", "16x-16", "16*16", "16x16x16", "", "99999999999999999999x16", "16 x 16"]),
    "margin": ([None, 0, "SMALL"], [1, 100, 1000, "CANVASW", 2147483647], [-1, -16, "abc", "1.5", "99999999999999999999", ""]),
    "corner-radius": ([None, 0, "SMALL"], [1, 50, 1000, 100000, 2147483647], [-1, "x", "", "1e3"]),
    "border": ([None, 0, "SMALL"], [1, 50, 1000, 100000, 2147483647], [-1, "x", "", "-2147483648"]),
    "shadow": ([None, "--shadow", "--no-shadow"], ["both"], []),
    "location": ([None], ["+48.8584+002.2945/", "+48.8584+002.2945", "-33.8688+151.2093+58.0/", "+00+000/",
                          "+90.0000-180.0000/", "+91+181+99999999999999999999/"],
                 ["abc", "", "48.8584,2.2945", "+48.8584", "+48.8584+002.2945//", "+48.8584+002.2945/extra", "+-1+2/"]),
    # compose
    "audio": ([None, "back", "none"], ["front"], ["bogus", "", "BACK"]),
    # record
    "record-audio": (["none", "back", "none", "back", "none"], ["front", None], ["", "hw:99", "bogus", "plughw:CARD=Nope"]),
    "duration": ([0.5, 1, 1.5, 2, "1"], [0.05, 0.001, 2.0, "2e0", 0.3], [0, -1, "-0.0", "nan", "inf", "abc", "1e300", 31622401, ""]),
    "fps": ([None, 24, 25, 30], [1, 7.5, 60, 120, 240, 0.5, "30.000"], [0, -1, 241, "nan", "inf", "x", ""]),
    "capture": ([None, "320x240", "640x480", "640x360"],
                ["2x2", "17x9", "1x1", "0x0", "8192x8192", "8192x2", "4000x16", "1920x1080", "3x3"],
                ["8194x8192", "8192x8194", "abc", "-640x480", "640x", "", "99999999999999999999x2"]),
    "pixel-format": ([None], ["YUYV", "MJPG", "NV12", "YU12", "UYVY", "yuyv"], ["XXXX", "", "H264"]),
    "control": ([None], ["back:brightness=150", "front:focus_auto=0", "back:brightness=150,contrast=10"],
                ["bogus", "back:", "side:x=1", "back:=1", ""]),
}


def pick(rng, key, mode):
    """A value for the option (None: left out). A sane case takes sane values only; an edge
    case an edge value for about a third of its options; a wild case a bad value too for
    about a fifth."""
    sane, edge, bad = POOLS[key]
    weights = {"sane": (1, 0, 0), "edge": (0.65, 0.35, 0), "wild": (0.5, 0.3, 0.2)}[mode]
    pools = [(p, w) for p, w in zip((sane, edge, bad), weights) if p and w]
    pool = rng.choices([p for p, _ in pools], weights=[w for _, w in pools])[0]
    return rng.choice(pool)


def size_of(text):
    m = re.fullmatch(r"(\d+)x(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


class Case:
    """One command: its arguments, what the run's folder holds before it, what it writes."""

    def __init__(self, index, command):
        self.index, self.command = index, command
        self.args = []         # after `dualcam COMMAND`; OUT marks the output folder
        self.setup = []        # ("dir", name) or ("file", name, bytes) made in the folder first
        self.output = None     # the -o value as given (None: record's default name)
        self.flags = set()     # quiet, json, preview, encoder-auto
        self.codec = "hevc"
        self.size = (1920, 1080)
        self.rotate = 0
        self.back_duration = None
        self.rate = 30
        self.iso = False
        self.disk_kb = None    # a tmpfs of this many kB as the run's folder

    def add(self, rng, option, value):
        """--option VALUE, as --option=VALUE now and then (always for a value that looks like an option)."""
        if value is None:
            return
        value = str(value)
        if value.startswith("-") or value == "" or rng.random() < 0.15:
            self.args.append(f"--{option}={value}")
        else:
            self.args += [f"--{option}", value]


def output_choice(rng, case):
    """The -o value and what the folder holds beforehand."""
    kind = rng.choices(
        ["mov", "mp4", "MOV", "m4v", "mkv", "txt", "noext", "hidden", "spaces", "absolute", "dash", "folder",
         "folder/", "in-folder", "missing-folder", "empty", "existing", "existing-overwrite", "none", "dot-none"],
        weights=[40, 10, 2, 2, 2, 2, 2, 2, 2, 4, 4, 2, 1, 2, 3, 1, 2, 3, 1, 1])[0]
    name = {"mov": "out.mov", "mp4": "out.mp4", "MOV": "OUT.MOV", "m4v": "out.m4v", "mkv": "out.mkv", "txt": "out.txt",
            "noext": "out", "hidden": ".out.mov", "spaces": "a name, é.mov", "absolute": OUT + "/abs.mov", "dash": "-",
            "folder": "sub", "folder/": "sub/", "in-folder": "sub/out.mov", "missing-folder": "missing/out.mov",
            "empty": "", "existing": "out.mov", "existing-overwrite": "out.mov", "none": "none",
            "dot-none": "./none"}[kind]
    if kind in ("folder", "folder/", "in-folder"):
        case.setup.append(("dir", "sub"))
    if kind.startswith("existing"):
        case.setup.append(("file", "out.mov", b"not a movie, and it must survive a failed run"))
    if kind == "existing-overwrite":
        case.args.append("--overwrite")
    case.output = name
    case.args += [f"--output={name}"] if name.startswith("-") or name == "" else [rng.choice(["-o", "--output"]), name]


def common_options(rng, case, mode):
    """The options compose and record share, the canvas and inset ones first."""
    size = pick(rng, "size", mode)
    rate = pick(rng, "rate", mode)
    preset = pick(rng, "preset", mode)
    codec = pick(rng, "codec", mode)
    case.size = size_of(size) if size is not None else (1920, 1080)
    case.codec = codec if codec in ("hevc", "h264") else "hevc"
    case.rate = rate if isinstance(rate, int) and rate > 0 else 30
    return size, rate, preset, codec


def layout_options(rng, case, mode, size):
    canvas = size_of(size) if size is not None else (1920, 1080)
    cw, ch = canvas or (1920, 1080)
    inset = pick(rng, "inset", mode)
    if inset == "FIT":   # a quarter of the canvas or so, in one proportion or another, 16x16 at least
        inset = rng.choice([f"{max(16, cw // 4)}x{max(16, ch // 4)}", f"{max(16, cw // 3)}x{max(16, ch // 2)}",
                            f"{max(16, min(cw, ch) // 3)}x{max(16, min(cw, ch) // 3)}",
                            f"{max(16, cw // 5)}x{max(16, ch // 3)}"])
    elif inset == "CANVAS":
        inset = f"{cw}x{ch}"
    elif inset == "CANVAS+2":
        inset = f"{cw + 2}x{ch + 2}"
    case.add(rng, "inset", inset)
    # Sane margins, radii and borders are in proportion to the canvas and the inset.
    iw, ih = size_of(inset) or (max(1, 160 * min(cw, ch) // 1080), max(1, 213 * min(cw, ch) // 1080))
    small = {"margin": min(cw, ch) // 20, "corner-radius": min(iw, ih) // 6, "border": min(iw, ih) // 10}
    for key in ("margin", "layout", "corner", "corner-radius", "border"):
        value = pick(rng, key, mode)
        case.add(rng, key, cw if value == "CANVASW" else rng.randint(0, small[key]) if value == "SMALL" else value)
    shadow = pick(rng, "shadow", mode)
    if shadow == "both":
        case.args += rng.sample(["--shadow", "--no-shadow"], 2)
    elif shadow:
        case.args.append(shadow)


def encoding_options(rng, case, mode, size, rate, preset, codec):
    case.add(rng, "size", size)
    case.add(rng, "rate", rate)
    case.add(rng, "codec", codec)
    case.add(rng, "preset", preset)
    encoder = pick(rng, "encoder", mode)
    if encoder == "auto":
        case.flags.add("encoder-auto")
    case.add(rng, "encoder", encoder)
    crf, bitrate = pick(rng, "crf", mode), pick(rng, "bitrate", mode)
    if crf is not None and bitrate is not None and (mode != "wild" or rng.random() < 0.7):   # both: refused, now and then
        crf = None if rng.random() < 0.5 else crf
        bitrate = None if crf is not None else bitrate
    case.add(rng, "crf", crf)
    case.add(rng, "bitrate", bitrate)
    case.add(rng, "audio-bitrate", pick(rng, "audio-bitrate", mode))
    rotate = pick(rng, "rotate", mode)
    case.rotate = rotate if rotate in (0, 90, 180, 270) else 0
    case.add(rng, "rotate", rotate)
    case.add(rng, "location", pick(rng, "location", mode))
    for flag, p in (("quiet", 0.1), ("json", 0.1), ("preview", 0.03)):
        if rng.random() < p:
            case.args.append(f"--{flag}")
            case.flags.add(flag)


def fit_budget(rng, size, rate, preset, codec, seconds):
    """A size and rate with which the case takes a few seconds: those asked when they do, else
    the size at 1 or 2 fps now and then (8K has a few frames), else a small size."""
    def cost(fps):
        return PRESET_COST.get(preset, 1) * (0.5 if codec == "h264" else 1) * fps * max(seconds, 1 / fps)
    fps = rate if isinstance(rate, int) and 1 <= rate <= 120 else 30
    wh = size_of(size) if size is not None else (1920, 1080)
    if wh is None or wh[0] * wh[1] * cost(fps) <= BUDGET:
        return size, rate
    if rng.random() < 0.5:
        for slow in (2, 1):
            if wh[0] * wh[1] * cost(slow) <= BUDGET:
                return size, slow
    fitting = [s for s in SMALL_SIZES if size_of(s)[0] * size_of(s)[1] * cost(fps) <= BUDGET]
    return rng.choice(fitting or ["64x64"]), rate


def compose_case(index, rng, inputs, durations):
    case = Case(index, "compose")
    mode = rng.choices(["sane", "edge", "wild"], weights=[35, 45, 20])[0]
    videos = VIDEOS

    def source():
        if mode == "wild" and rng.random() < 0.2:
            return rng.choice(["missing.mp4", "audio-only.m4a", "notes.txt"])
        return rng.choice(videos)

    back, front = source(), source()
    size, rate, preset, codec = common_options(rng, case, mode)
    if back in durations:
        fitted = fit_budget(rng, size, rate, preset, codec, durations[back])
        if fitted != (size, rate) and durations[back] > 0.6 and rng.random() < 0.5:
            back = rng.choice([n for n, *_ in GENERATED])   # the size asked, on a short back
            fitted = fit_budget(rng, size, rate, preset, codec, durations[back])
        size, rate = fitted
        case.size = size_of(size) if size is not None else (1920, 1080)
        case.rate = rate if isinstance(rate, int) and rate > 0 else 30
    case.back_duration = durations.get(back)
    case.args += [inputs.get(back, os.path.join(FIXTURES, back)), inputs.get(front, os.path.join(FIXTURES, front))]
    output_choice(rng, case)
    encoding_options(rng, case, mode, size, rate, preset, codec)
    layout_options(rng, case, mode, size)
    audio = pick(rng, "audio", mode)
    if mode != "wild" and (audio in (None, "back") and back not in SOUNDS or audio == "front" and front not in SOUNDS):
        audio = "none"   # a file without sound: refused, which wild cases try
    case.add(rng, "audio", audio)
    if rng.random() < (0.3 if mode == "sane" else 0.5):
        end = case.back_duration or 3.0
        sane = [0, round(end / 3, 3), round(end / 2, 3), 0.1]
        edge = [round(end, 3), round(end + 0.5, 3), 99, 1e9, 0.0001, "0.5e0"]
        bad = [-1, -0.001, "nan", "inf", "-inf", "abc", "1e400", ""]
        pool = sane + (edge if mode != "sane" else []) + (bad if mode == "wild" else [])
        for _ in range(rng.choice([1, 1, 2, 3, 5])):
            case.add(rng, "swap-at", rng.choice(pool))
    return case


def record_case(index, rng, inputs, durations):
    case = Case(index, "record")
    mode = rng.choices(["sane", "edge", "wild"], weights=[35, 45, 20])[0]
    videos = VIDEOS
    odd = ["audio-only.m4a", "notes.txt", "missing.mp4"] if mode == "wild" else []
    back = rng.choice(videos + odd)
    front = None if rng.random() < 0.1 else rng.choice(videos + odd)
    duration = pick(rng, "duration", mode)
    size, rate, preset, codec = common_options(rng, case, mode)
    try:
        seconds = min(2.0, float(duration)) if float(duration) > 0 else 0.0
    except ValueError:
        seconds = 0.0
    size, rate = fit_budget(rng, size, rate, preset, codec, seconds + 1)
    case.size = size_of(size) if size is not None else (1920, 1080)
    case.rate = rate if isinstance(rate, int) and rate > 0 else 30
    case.add(rng, "back", inputs[back])
    case.add(rng, "front", inputs[front] if front else None)
    case.add(rng, "duration", duration)
    if rng.random() < 0.95:
        output_choice(rng, case)
    encoding_options(rng, case, mode, size, rate, preset, codec)
    layout_options(rng, case, mode, size)
    audio = pick(rng, "record-audio", mode)
    if mode != "wild" and audio in ("back", "front") and (back if audio == "back" else front) not in SOUNDS:
        audio = "none"   # a camera file without sound: refused, which wild cases try
    case.add(rng, "audio", audio)
    case.add(rng, "capture", pick(rng, "capture", mode))
    case.add(rng, "fps", pick(rng, "fps", mode))
    case.add(rng, "pixel-format", pick(rng, "pixel-format", mode) if rng.random() < 0.15 else None)
    case.add(rng, "control", pick(rng, "control", mode) if rng.random() < 0.1 else None)
    if rng.random() < 0.15:
        case.args.append("--swap")
    if rng.random() < 0.25:
        case.args.append("--iso")
        case.iso = True
    if rng.random() < 0.12:
        # From too small for the take's first second (its files are small: at most 2 s) to roomy.
        case.disk_kb = rng.choice([48, 96, 192, 384, 768, 1536, 3072, 40960])
    case.args.append("--skip-speed-check")
    return case


def make_case(index, seed, inputs, durations):
    rng = random.Random(seed * 1_000_003 + index)
    if rng.random() < 0.65:
        return compose_case(index, rng, inputs, durations)
    return record_case(index, rng, inputs, durations)


def make_sources(folder):
    """The odd-sized clips, each made once; {name: path} with the fixtures and a text file."""
    os.makedirs(folder, exist_ok=True)
    paths = {n: os.path.join(FIXTURES, n) for n in FIXTURE_NAMES}
    for name, size, codec, sound in GENERATED:
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=size={size}:rate=30:duration=0.5"]
            if sound:
                cmd += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=0.5", "-c:a", "aac"]
            subprocess.run(cmd + codec + ["-t", "0.5", path + ".part." + os.path.splitext(name)[1]], check=True)
            os.replace(path + ".part." + os.path.splitext(name)[1], path)
        paths[name] = path
    notes = os.path.join(folder, "notes.txt")
    with open(notes, "w") as f:
        f.write("not a video\n")
    paths["notes.txt"] = notes
    paths["missing.mp4"] = os.path.join(folder, "missing.mp4")
    return paths


def has_sound(path):
    p = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=index", "-of", "csv=p=0",
                        path], capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() != ""


def probe_duration(path):
    p = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                       capture_output=True, text=True)
    try:
        return float(p.stdout.strip())
    except ValueError:
        return None


def listing(folder):
    """{relative path: content hash or 'dir'} of everything in folder, hidden names too."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for d in dirnames:
            found[os.path.relpath(os.path.join(dirpath, d), folder) + "/"] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            try:
                with open(p, "rb") as fh:
                    found[os.path.relpath(p, folder)] = hashlib.sha1(fh.read()).hexdigest()
            except OSError:
                found[os.path.relpath(p, folder)] = "unreadable"
    return found


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def repro_line(dualcam, case):
    steps = []
    for item in case.setup:
        if item[0] == "dir":
            steps.append(f"mkdir {shlex.quote(item[1])}")
        else:
            steps.append(f"printf %s {shlex.quote(item[2].decode())} > {shlex.quote(item[1])}")
    words = []
    for a in [dualcam, case.command] + case.args:
        if OUT in a:
            head, tail = a.split(OUT, 1)
            words.append(shlex.quote(head) + '"$PWD"' + shlex.quote(tail) if head else '"$PWD"' + shlex.quote(tail))
        else:
            words.append(shlex.quote(a))
    steps.append('HOME="$(mktemp -d)" ' + " ".join(words) + " </dev/null")
    if case.disk_kb:
        return (f'(d="$(mktemp -d)" && mount -t tmpfs -o size={case.disk_kb}k tmpfs "$d" && cd "$d" && '
                + " && ".join(steps) + ")")
    return '(cd "$(mktemp -d)" && ' + " && ".join(steps) + ")"


def probe_output(path):
    p = subprocess.run(["ffprobe", "-v", "error", "-show_entries",
                        "stream=codec_type,codec_name,width,height:stream_side_data=rotation:format=format_name,duration"
                        ":format_tags=major_brand", "-of", "json", path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[:200]
    try:
        return json.loads(p.stdout), None
    except ValueError:
        return None, "ffprobe printed no JSON"


def check_movie(case, path, shown_name):
    """None when the file at path is the movie the case asked for, else what is wrong."""
    info, why = probe_output(path)
    if info is None:
        return "bad-output", f"ffprobe refuses {shown_name}: {why}"
    streams = info.get("streams", [])
    video = [s for s in streams if s.get("codec_type") == "video"]
    if not video:
        return "bad-output", f"{shown_name} has no video stream: {streams}"
    v = video[0]
    if v.get("codec_name") != case.codec:
        return "bad-output", f"video is {v.get('codec_name')}, not the {case.codec} asked"
    if case.size and (v.get("width"), v.get("height")) != case.size:
        return "bad-output", f"video is {v.get('width')}x{v.get('height')}, not the {case.size[0]}x{case.size[1]} asked"
    if not any(s.get("codec_type") == "audio" and s.get("codec_name") == "aac" for s in streams):
        return "bad-output", f"no AAC track in {shown_name}: {[s.get('codec_name') for s in streams]}"
    rotation = 0
    for side in v.get("side_data_list", []):
        if "rotation" in side:
            rotation = int(side["rotation"])
    if (-rotation) % 360 != case.rotate:
        return "bad-output", f"display rotation {rotation} for --rotate {case.rotate}"
    if case.command == "compose" and case.back_duration:
        try:
            lasts = float(info.get("format", {}).get("duration"))
        except (TypeError, ValueError):
            lasts = -1
        if abs(lasts - case.back_duration) > max(0.25, 2.0 / case.rate):
            return "bad-output", f"lasts {lasts:.3f} s, BACK {case.back_duration:.3f} s"
    brand = info.get("format", {}).get("tags", {}).get("major_brand", "").strip()
    ext = os.path.splitext(shown_name)[1].lower()
    if ext == ".mov" and brand != "qt":
        return "container", f"{shown_name} is not a QuickTime file (major brand '{brand}')"
    if ext == ".mp4" and brand in ("qt", ""):
        return "container", f"{shown_name} is a QuickTime file (major brand '{brand}'), not an MP4"
    if ext in (".mkv", ".webm", ".avi", ".ts", ".m4a", ".mp3", ".wav"):
        return "container", f"a {info.get('format', {}).get('format_name')} file (brand '{brand}') named {shown_name}"
    return None


def start(argv, **kw):
    """Popen, waiting out a rebuild of the binary (being written, or not there for a moment)."""
    waited = 0.0
    while True:
        try:
            return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit_memory,
                                    start_new_session=True, **kw)
        except OSError as e:
            if e.errno not in (errno.ETXTBSY, errno.ENOENT, errno.EACCES, errno.ENOEXEC) or waited > REBUILD_WAIT:
                raise
            time.sleep(0.5)
            waited += 0.5


def one_run(args, case):
    parent = tempfile.mkdtemp(prefix="dualcam-options-")
    work, home = os.path.join(parent, "out"), os.path.join(parent, "home")
    os.makedirs(work)
    os.makedirs(home)
    mounted = False
    if case.disk_kb:
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={case.disk_kb}k", "tmpfs", work], capture_output=True)
        mounted = mount.returncode == 0
        if not mounted:
            NOT_MOUNTED.append(case.index)
    try:
        for item in case.setup:
            if item[0] == "dir":
                os.makedirs(os.path.join(work, item[1]), exist_ok=True)
            else:
                with open(os.path.join(work, item[1]), "wb") as f:
                    f.write(item[2])
        before = listing(work)
        argv = [args.dualcam, case.command] + [a.replace(OUT, work) for a in case.args]
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")}
        env["HOME"] = home
        with open(os.devnull, "rb") as devnull:
            proc = start(argv, cwd=work, env=env, stdin=devnull)
            started = time.monotonic()
            try:
                out, err = proc.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                return result(case, "hang", f"no exit after {TIMEOUT} s", None, work, out, err, args)
        took = time.monotonic() - started
        rc = proc.returncode
        lines = err.decode(errors="replace").rstrip("\n").split("\n") if err else []
        after = listing(work)
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = "?"
            return result(case, "signal", f"killed by signal {-rc} ({name}): {lines[-3:]}",
                          None, work, out, err, args)
        if rc != 0:
            return check_failure(case, rc, lines, before, after, work, out, err, args)
        return check_success(case, lines, before, after, work, out, err, args, took)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", work], capture_output=True)
        shutil.rmtree(parent, ignore_errors=True)


NOT_MOUNTED = []    # the small-disk cases that ran on the ordinary disk
SMALL_DISK_ISO_WRITTEN = []  # --iso on a small disk, exit 0


def companions(target):
    """The files --iso writes beside a take named target."""
    base = target[:-4] if target.lower().endswith(".mov") else target
    return [base + ".back.mov", base + ".front.mov", base + ".dualcam.json"]


def unplayable(work, names):
    """Those of the movies among names (relative to work) that ffprobe cannot read a picture of."""
    bad = []
    for name in names:
        if not name.lower().endswith(".mov"):
            continue
        p = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                            "stream=nb_read_packets", "-of", "csv=p=0", os.path.join(work, name)], capture_output=True, text=True)
        # "36," with a rotation: the side data is a column of its own.
        count = re.match(r"\s*(\d+)", p.stdout)
        if p.returncode != 0 or not count or int(count.group(1)) == 0:
            bad.append(name)
    return bad


def check_failure(case, rc, lines, before, after, work, out, err, args):
    if rc not in (1, 2, 64):
        return result(case, "exit-code", f"exit {rc}: {lines[-3:]}", None, work, out, err, args)
    message = lines[0] if rc in (2, 64) and lines else (lines[-1] if lines else "")
    if after != before and case.disk_kb and rc == 1 and lines and "kept" in lines[-1]:
        # A full disk: what was recorded stays, and says where.
        added = sorted(set(after) - set(before))
        hidden = [k for k in added if os.path.basename(k.rstrip("/")).startswith(".")]
        bad = unplayable(work, added)
        if hidden or bad:
            return result(case, "leftover", f"disk full: hidden {hidden}, not playing {bad}; stderr {lines[-2:]}",
                          message, work, out, err, args)
        return result(case, "kept-when-full", None, message, work, out, err, args)
    if after != before:
        changed = sorted(k for k in set(after) | set(before) if after.get(k) != before.get(k))
        hidden = [k for k in changed if os.path.basename(k.rstrip("/")).startswith(".")]
        return result(case, "leftover", f"exit {rc} but the folder changed: {changed}"
                      + (f" (hidden: {hidden})" if hidden else "") + f"; stderr {lines[-2:]}", message, work, out, err, args)
    if rc in (2, 64):
        if not lines or not (lines[0].startswith("Error:") or lines[0].startswith("dualcam:")):
            return result(case, "message", f"exit {rc}, stderr {lines[:3]}", message, work, out, err, args)
        return result(case, "rejected", None, message, work, out, err, args)
    if case.command == "compose":
        kept = [l for l in lines if not re.match(r"^dualcam: encoder: ", l) and not l.endswith("goes on without it")]
        if len(kept) != 1 or not re.match(r"^dualcam: \S", kept[0]):
            return result(case, "message", f"exit 1, stderr {lines[:4]}", message, work, out, err, args)
        message = kept[0]
    else:
        if not lines or any(not l.startswith("dualcam: ") for l in lines) or not re.match(r"^dualcam: \S", lines[-1]):
            odd = [l for l in lines if not l.startswith("dualcam: ")]
            return result(case, "message", f"exit 1, stderr {(odd or lines)[:3]} (last {lines[-1:]})", message,
                          work, out, err, args)
    return result(case, "rejected", None, message, work, out, err, args)


def check_success(case, lines, before, after, work, out, err, args, took):
    stray = [l for l in lines if not l.startswith("dualcam: ")]
    if stray:
        return result(case, "stray-stderr", f"exit 0 with stderr lines not from dualcam: {stray[:3]}", None,
                      work, out, err, args)
    added = sorted(set(after) - set(before))
    changed = sorted(k for k in before if after.get(k) != before[k])
    if case.output == "-":
        if added or changed:
            return result(case, "leftover", f"-o - left {added + changed} in the folder", None, work, out, err, args)
        fd, path = tempfile.mkstemp(suffix=".mov")
        with os.fdopen(fd, "wb") as f:
            f.write(out)
        try:
            bad = check_movie(case, path, "stdout")
        finally:
            os.unlink(path)
        return result(case, *(bad or ("written", f"{took:.1f}s")), None, work, out, err, args)
    if case.output is None:
        expected = [k for k in added if re.fullmatch(r"dualcam-\d{8}-\d{6}\.mov", k)]
        target = expected[0] if expected else None
    else:
        target = os.path.normpath(case.output.replace(OUT, work))
        target = os.path.relpath(target, work) if os.path.isabs(target) else target
    allowed = {target} | ({target.split("/")[0] + "/"} if target and "/" in target else set())
    if case.iso and target:
        allowed |= set(companions(target))
    unexpected = [k for k in added if k not in allowed] + [k for k in changed if k not in allowed]
    if target is not None and os.path.isdir(os.path.join(work, target)):
        return result(case, "bad-output", f"exit 0 but {case.output!r} is a folder", None, work, out, err, args)
    if target is None or target not in after or unexpected:
        hidden = [k for k in unexpected if os.path.basename(k.rstrip("/")).startswith(".")]
        return result(case, "leftover", f"exit 0, output {case.output!r}: added {added}, changed {changed}"
                      + (f" (hidden: {hidden})" if hidden else ""), None, work, out, err, args)
    bad = check_movie(case, os.path.join(work, target), target)
    if bad:
        return result(case, *bad, None, work, out, err, args)
    cameras = [k for k in added if case.iso and k in companions(target)]
    if case.disk_kb and case.iso:
        SMALL_DISK_ISO_WRITTEN.append(case.index)
    if unplayable(work, cameras):
        return result(case, "bad-output", f"--iso: {unplayable(work, cameras)} do not play", None, work, out, err, args)
    text = out.decode(errors="replace")
    if "json" in case.flags:
        try:
            json.loads(text)
        except ValueError:
            return result(case, "stdout", f"--json but stdout is not one JSON object: {text[:120]!r}", None,
                          work, out, err, args)
    elif "quiet" in case.flags:
        noisy = [l for l in lines if not l.endswith("goes on without it")]
        if text.strip() or noisy:
            return result(case, "stdout", f"--quiet but printed {(text.strip()[:100], noisy[:2])}", None,
                          work, out, err, args)
    return result(case, "written", f"{took:.1f}s", None, work, out, err, args)


FAILURES = {"hang", "signal", "exit-code", "leftover", "message", "bad-output", "container", "stray-stderr", "stdout"}


def result(case, verdict, detail, message, work, out, err, args):
    kept = None
    if verdict in FAILURES and args.keep:
        kept = os.path.join(args.keep, f"run{case.index}")
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(work, os.path.join(kept, "folder"), symlinks=True)
        with open(os.path.join(kept, "stdout"), "wb") as f:
            f.write(out or b"")
        with open(os.path.join(kept, "stderr"), "wb") as f:
            f.write(err or b"")
        with open(os.path.join(kept, "repro.sh"), "w") as f:
            f.write("#!/bin/sh\n" + repro_line(args.dualcam, case) + "\n")
    return case, verdict, detail, message


def normalize(message):
    """The message with paths as <path>, sizes as NxN and numbers as N (h264, mp4 kept)."""
    m = re.sub(r"(?:[^\s'(]*/)+[^\s:;,)']*", "<path>", message)
    m = re.sub(r"\d+x\d+", "NxN", m)
    return re.sub(r"(?<![A-Za-z0-9.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", "N", m)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dualcam", default=os.path.join(ROOT, ".build", "debug", "dualcam"))
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=60, help="start no run after this long")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", help="folder to keep failing cases in")
    args = ap.parse_args()
    args.dualcam = os.path.abspath(args.dualcam)
    for _ in range(REBUILD_WAIT):
        if os.access(args.dualcam, os.X_OK):
            break
        time.sleep(1)
    else:
        sys.exit(f"options fuzz: no dualcam at {args.dualcam}")
    if args.keep:
        args.keep = os.path.abspath(args.keep)
    sources = os.path.join(args.keep, "sources") if args.keep else tempfile.mkdtemp(prefix="dualcam-options-sources-")
    inputs = make_sources(sources)
    durations = {n: d for n, p in inputs.items() if os.path.exists(p) and (d := probe_duration(p)) is not None}
    SOUNDS.update(n for n, p in inputs.items() if n in durations and has_sound(p))
    deadline = time.monotonic() + args.seconds
    started = time.monotonic()
    counts, errors, failures = {}, {}, []

    def job(i):
        if time.monotonic() > deadline:
            return None
        return one_run(args, make_case(i, args.seed, inputs, durations))

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(job, range(args.runs)):
            if r is None:
                continue
            case, verdict, detail, message = r
            counts[verdict] = counts.get(verdict, 0) + 1
            if message:
                key = normalize(message)
                errors[key] = errors.get(key, 0) + 1
            if verdict in FAILURES:
                failures.append((case, verdict, detail))
                print(f"options fuzz: FAIL run {case.index} ({case.command}): {verdict}: {detail}", flush=True)
    total = sum(counts.values())
    print(f"\noptions fuzz: {total} runs in {time.monotonic() - started:.0f} s (seed {args.seed}): "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print(f"distinct errors ({len(errors)}):")
    for key, n in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:5d}  {key}")
    if failures:
        print(f"failures ({len(failures)}):")
        for case, verdict, detail in sorted(failures, key=lambda f: (f[1], f[0].index)):
            print(f"  run {case.index} {verdict}: {detail}\n    {repro_line(args.dualcam, case)}")
        if not args.keep:
            print(f"(the generated clips these lines use are kept in {sources})")
    elif not args.keep:
        shutil.rmtree(sources, ignore_errors=True)
    print(f"options fuzz: --iso on a small disk written {len(SMALL_DISK_ISO_WRITTEN)} times; "
          + f"{counts.get('kept-when-full', 0)} small-disk runs filled it and kept the take")
    if NOT_MOUNTED:
        print(f"options fuzz: {len(NOT_MOUNTED)} small-disk cases ran on the ordinary disk (mounting a tmpfs needs root)")
    print(f"options fuzz: {total} runs, {len(errors)} distinct errors, {len(failures)} failed")
    if total == 0:
        sys.exit("options fuzz: no run was made")
    if NOT_MOUNTED and os.environ.get("DUALCAM_REQUIRE_ALL"):
        sys.exit("options fuzz: DUALCAM_REQUIRE_ALL is set and the small disks could not be mounted")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
