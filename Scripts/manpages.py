#!/usr/bin/env python3
"""Man pages and shell completions from the built programs themselves.

    python3 Scripts/manpages.py BIN_DIR OUT_DIR

BIN_DIR holds dualcam and dualcam-bench (a release build's folder). Writes
OUT_DIR/man/man1/dualcam.1, dualcam-COMMAND.1 for each command and dualcam-bench.1, and
OUT_DIR/completions/{dualcam.bash,_dualcam,dualcam.fish}. Everything comes from the argument
parser's description of each program (--experimental-dump-help): options in their help
groups with their defaults, the EXAMPLES block that ends each command's discussion. What
the parser does not know (exit codes, JSON output, files) is written here, once, for every
page. Scripts/quickstart.sh and Scripts/install.sh run it; Tests/install-check.sh checks what
it makes.
"""
import json
import os
import re
import subprocess
import sys
import datetime

# What `dualcam` and `dualcam-bench` exit with (DualCam.main, BenchTool.main, CommandWord).
EXIT_CODES = [
    ("0", "Success. A recording stopped with q, Ctrl-C or SIGTERM is finished first, and exits 0."),
    ("1", "The job failed or was cut short: one line on stderr says why, and where a recording in progress "
          "was kept. bench: a case over --budget-ms, a regression against --baseline, or SIMD and scalar "
          "output that differ."),
    ("2", "No command was given (a short usage is printed); bench: a --baseline or counter that cannot be used."),
    ("64", "Usage error: an unknown command or option, a missing argument or a value out of range (EX_USAGE)."),
    ("130", "Interrupted by Ctrl-C (SIGINT) before the job could finish cleanly, e.g. compose (its unfinished "
            "file is removed); 128+N for signal N, 143 for SIGTERM."),
]

# What the programs read from the environment (grep the sources for environment[ when one
# is added): every page lists them.
ENVIRONMENT = [
    ("HOME", "Where ~/.config and ~/.cache are, when XDG_CONFIG_HOME and XDG_CACHE_HOME are unset; a take "
             "whose name and folder are both removed while recording, and which cannot be written in the working folder, is "
             "rescued there."),
    ("XDG_CONFIG_HOME", "Holds dualcam/controls.json, the camera controls saved with dualcam controls --save."),
    ("XDG_CACHE_HOME", "Holds dualcam/live-encoder.json, the live encoder's speed as measured on this machine "
                       "(an absolute path; a relative one is ignored)."),
    ("DISPLAY, WAYLAND_DISPLAY", "The display --preview and --review open their window on; with neither, one line says "
                                 "so and the recording goes on."),
    ("PULSE_SERVER, XDG_RUNTIME_DIR", "Where a sound server (PipeWire or PulseAudio) answers: the microphone is taken "
                                      "through it when one does, else from ALSA directly."),
    ("PATH", "Where the sound server's programs are looked for."),
    ("TERM", "dumb: no progress line redrawn in place on stderr."),
    ("NAME (record --stream env:NAME)", "The streaming URL, read from the environment so that its key is not in the "
                                        "command line other users can see."),
    ("DUALCAM_COMMIT, GITHUB_SHA, CI_COMMIT_SHA", "dualcam-bench: the commit a report names."),
]

# Each --json output: its schema name, the file describing it, and an example line.
JSON_OUTPUTS = {
    "compose": "compose", "relayout": "compose", "record": "record", "devices": "devices",
    "controls": "controls", "bench": "bench", "doctor": "doctor",
}

SCHEMA_NAMES = {"bench": "dualcam.bench.times/1, dualcam.bench.instructions/1 or dualcam.bench.mjpeg/1"}

SEE_ALSO = ["ffmpeg(1)", "ffprobe(1)", "v4l2-ctl(1)"]


def dump_help(program):
    out = subprocess.run([program, "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["command"]


def roff(text):
    """Plain text made safe for roff: backslashes, leading dots and quotes, hyphens of options."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"(?<![\w])-", r"\\-", text)
    lines = []
    for line in text.split("\n"):
        if line.startswith(".") or line.startswith("'"):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def split_discussion(discussion):
    """(prose paragraphs, example blocks): the EXAMPLES block ends each command's discussion."""
    if not discussion:
        return [], []
    prose, _, examples = discussion.partition("EXAMPLES:")
    paragraphs = [p.strip() for p in prose.strip().split("\n\n") if p.strip()]
    blocks = []  # (title, [command lines])
    for line in examples.split("\n"):
        if not line.strip():
            continue
        if line.startswith("    "):
            if blocks:
                blocks[-1][1].append(line[4:])
        else:
            blocks.append((line.strip(), []))
    return paragraphs, blocks


def option_label(arg):
    names = arg.get("names") or []
    shown = []
    for n in sorted(names, key=lambda n: n["kind"] != "short"):
        shown.append(("-" if n["kind"] == "short" else "--") + n["name"])
    label = ", ".join(f"\\fB{roff(s)}\\fR" for s in shown)
    if arg["kind"] == "option":
        label += f" \\fI{roff(arg.get('valueName', 'value'))}\\fR"
    return label


def describe(arg):
    text = arg.get("abstract", "")
    values = arg.get("allValues")
    default = arg.get("defaultValue")
    extras = []
    if values and "values:" not in text and not re.search(r"\b" + re.escape(values[0]) + r"\b", text):
        extras.append("values: " + ", ".join(values))
    if default is not None and "(default:" not in text and arg["kind"] == "option":
        extras.append("default: " + default)
    if extras:
        text += " (" + "; ".join(extras) + ")"
    return roff(text)


def merged_inversions(arguments):
    """--shadow and --no-shadow (a flag with its inversion) as one entry, as help shows them."""
    longs = {a["names"][0]["name"]: a for a in arguments if a["kind"] == "flag" and a.get("names")}
    kept = []
    for a in arguments:
        n = a["names"][0]["name"] if a.get("names") else ""
        if a["kind"] == "flag" and n.startswith("no-") and n[3:] in longs:
            base = longs[n[3:]]
            base["names"] = base["names"] + a["names"]
            continue
        kept.append(a)
    return kept


def synopsis(command, name):
    parts = [f"\\fB{name}\\fR"]
    args = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)]
    if any(a["kind"] != "positional" for a in args):
        parts.append("[\\fIoptions\\fR]")
    for a in args:
        if a["kind"] == "positional":
            v = roff(a.get("valueName", "arg").upper())
            parts.append(f"\\fI{v}\\fR" + ("..." if a.get("isRepeating") else "") if not a.get("isOptional") else f"[\\fI{v}\\fR]")
        elif a["kind"] == "option" and not a.get("isOptional"):
            preferred = a.get("preferredName") or a["names"][0]
            flag = ("-" if preferred["kind"] == "short" else "--") + preferred["name"]
            parts.append(f"\\fB{roff(flag)}\\fR \\fI{roff(a.get('valueName', 'value'))}\\fR")
    return " ".join(parts)


def environment():
    out = [".SH ENVIRONMENT"]
    for name, meaning in ENVIRONMENT:
        out += [".TP", f"\\fB{roff(name)}\\fR", roff(meaning)]
    return out


def exit_status():
    out = [".SH EXIT STATUS"]
    for code, meaning in EXIT_CODES:
        out += [".TP", f"\\fB{code}\\fR", roff(meaning)]
    return out


def json_section(kind, examples_dir):
    schema = JSON_OUTPUTS[kind]
    examples = sorted(f for f in os.listdir(examples_dir) if f.startswith(schema) and f.endswith(".example.json"))
    shown = []
    for name in examples:
        with open(os.path.join(examples_dir, name)) as f:
            shown += [".PP", ".nf", ".RS 4", roff(json.dumps(json.loads(f.read()), indent=2)), ".RE", ".fi"]
    return [".SH JSON OUTPUT",
            roff(f"With --json the {'report' if schema == 'bench' else 'summary'} is one line of JSON on stdout: an "
                 f"object with snake_case keys, \"schema\" ({SCHEMA_NAMES.get(schema, f'dualcam.{schema}/1')} here; the number goes up when a key changes meaning or "
                 f"goes away, never when one is added) and \"version\" (the program's) first. Docs/json/"
                 f"{schema}.schema.json in the source describes every key. "
                 f"{'An example' if len(examples) == 1 else 'An example of each kind'}, indented here:"),
            ] + shown


def page(command, name, title, date, version, examples_dir, json_kind=None, commands=None):
    paragraphs, examples = split_discussion(command.get("discussion"))
    out = [f'.TH "{title.upper()}" "1" "{date}" "dualcam {version}" "User Commands"',
           ".SH NAME", f"{roff(name)} \\- {roff(command.get('abstract', ''))}",
           ".SH SYNOPSIS", synopsis(command, name) if not commands else f"\\fBdualcam\\fR \\fIcommand\\fR [\\fIoptions\\fR]",
           ".SH DESCRIPTION"]
    for p in paragraphs or [command.get("abstract", "")]:
        out += [roff(" ".join(p.split())), ".PP"]
    out.pop()
    if commands:
        out.append(".SH COMMANDS")
        for sub in commands:
            out += [".TP", f"\\fBdualcam {sub['commandName']}\\fR",
                    roff(sub.get("abstract", "")) + f" See \\fBdualcam\\-{sub['commandName']}\\fR(1)."]
    sections = {}
    order = []
    for arg in merged_inversions(command.get("arguments", [])):
        if not arg.get("shouldDisplay", True) or (arg.get("names") and arg["names"][0]["name"] in ("help", "experimental-dump-help")):
            continue
        section = "ARGUMENTS" if arg["kind"] == "positional" else (arg.get("sectionTitle") or "OPTIONS").upper()
        if section not in sections:
            sections[section] = []
            order.append(section)
        sections[section].append(arg)
    if order:
        out.append(".SH OPTIONS")
        for section in sorted(order, key=lambda s: s != "ARGUMENTS"):
            out.append(f".SS {section.title()}")
            for arg in sections[section]:
                label = f"\\fI{roff(arg.get('valueName', '').upper())}\\fR" if arg["kind"] == "positional" else option_label(arg)
                out += [".TP", label, describe(arg)]
    if examples:
        out.append(".SH EXAMPLES")
        for title_line, lines in examples:
            out += [".PP", roff(title_line), ".PP", ".nf", ".RS 4", roff("\n".join(lines)), ".RE", ".fi"]
    out += environment()
    out += exit_status()
    if json_kind:
        out += json_section(json_kind, examples_dir)
    if commands:
        out += [".SH FILES", ".TP", "\\fI$XDG_CONFIG_HOME/dualcam/controls.json\\fR (~/.config when unset)",
                roff("Camera controls saved with dualcam controls --save, applied whenever that camera opens."),
                ".TP", "\\fI$XDG_CACHE_HOME/dualcam/live-encoder.json\\fR (~/.cache when unset)",
                roff("The live encoder's configurations as measured on this machine (per processor, CPUs allowed and "
                     "FFmpeg and x265 libraries): record keeps the fastest, doctor shows them."),
                ".TP", "\\fITAKE.intermediate.mov\\fR (take.mov.intermediate.mov for take.mov)",
                roff("Beside a take while the encoder is behind (record --encode auto or after): the frames it "
                     "had no time for, encoded into TAKE after the stop. dualcam finish TAKE completes a take "
                     "that was killed.")]
    see = ["dualcam(1)"] if not commands else []
    see += [f"dualcam-{s['commandName']}(1)" for s in (commands or [])]
    out += [".SH SEE ALSO", ", ".join(f"\\fB{s.split('(')[0].replace('-', chr(92) + '-')}\\fR({s.split('(')[1]}" for s in see + SEE_ALSO)]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bin_dir, out_dir = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    examples_dir = os.path.join(here, "..", "Docs", "json")
    dualcam = os.path.join(bin_dir, "dualcam")
    root = dump_help(dualcam)
    version = subprocess.run([dualcam, "--version"], check=True, capture_output=True, text=True).stdout.split()[1]
    date = datetime.date.today().isoformat()
    man = os.path.join(out_dir, "man", "man1")
    os.makedirs(man, exist_ok=True)
    subcommands = [s for s in root.get("subcommands", []) if s.get("shouldDisplay", True) and s["commandName"] != "help"]
    root["discussion"] = root.get("discussion") or (
        "dualcam records picture-in-picture video from two V4L2 cameras (USB webcams), or from two video files "
        "played as cameras, and composes two existing video files: the back picture fills the frame, the front "
        "one is an inset with rounded corners and a soft shadow. The output is a QuickTime .mov (or .mp4): HEVC "
        "or H.264 with AAC sound, written so that a crash, a kill or a full disk never loses the recording.\n\n"
        "EXAMPLES:\n"
        + "".join(f"  {split_discussion(s.get('discussion'))[1][0][0]}\n"
                  + "".join(f"    {l}\n" for l in split_discussion(s.get('discussion'))[1][0][1])
                  for s in subcommands if split_discussion(s.get("discussion"))[1]))
    pages = {"dualcam.1": page(root, "dualcam", "dualcam", date, version, examples_dir, commands=subcommands)}
    for sub in subcommands:
        name = sub["commandName"]
        if name == "bench":
            continue  # the harness describes itself below
        pages[f"dualcam-{name}.1"] = page(sub, f"dualcam {name}", f"dualcam-{name}", date, version, examples_dir,
                                          json_kind=JSON_OUTPUTS.get(name) if any(
                                              (a.get("names") or [{}])[0].get("name") == "json" for a in sub.get("arguments", [])) else None)
    bench = dump_help(os.path.join(bin_dir, "dualcam-bench"))
    pages["dualcam-bench.1"] = page(bench, "dualcam bench", "dualcam-bench", date, version, examples_dir, json_kind="bench")
    for file, text in pages.items():
        with open(os.path.join(man, file), "w") as f:
            f.write(text)
    completions = os.path.join(out_dir, "completions")
    os.makedirs(completions, exist_ok=True)
    for shell, file in (("bash", "dualcam.bash"), ("zsh", "_dualcam"), ("fish", "dualcam.fish")):
        script = subprocess.run([dualcam, "--generate-completion-script", shell], check=True, capture_output=True,
                                text=True).stdout
        with open(os.path.join(completions, file), "w") as f:
            f.write(script)
    print(f"manpages: {len(pages)} man pages in {man}, bash/zsh/fish completions in {completions}")


if __name__ == "__main__":
    main()
