#!/usr/bin/env python3
"""Regenerate the results tables in BENCHMARKS.md and Benchmarks/HISTORY.md from the data files
beside this script.

    python3 Benchmarks/results/tables.py           rewrite every table in place
    python3 Benchmarks/results/tables.py --check   exit 1 if any table is stale (one line each on stderr)

A table sits between `<!-- table: STEM -->` and `<!-- /table -->`, STEM being the name of a
file `Benchmarks/results/STEM.json` without its extension. Whatever is between the markers
is replaced, so edit the JSON file, never the table. A data file that no table shows is
reported by --check too: a result nobody can read is as stale as a table nobody updates.

Data file (schema 1), one per dated measurement:
    {"schema": 1, "date": "YYYY-MM-DD", "machine": "...", "commit": "<sha or 'unknown'>",
     "command": "...", "columns": [...], "rows": [[...], ...], "notes": "..."}
Cells are strings (kept as measured: "0.30" stays "0.30"), numbers, or null for an empty cell.
The file's name starts with its date.
"""
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
# What to expect now, and every result so far: a table may sit in either.
DOCS = (REPO / "BENCHMARKS.md", REPO / "Benchmarks" / "HISTORY.md")
KEYS = ("schema", "date", "machine", "commit", "command", "columns", "rows", "notes")
# The body may hold no marker: an end marker left out must not swallow the next table.
# Markers count only at the start of a line, so prose can quote them.
BLOCK = re.compile(r"^(<!-- table: (?P<stem>[^ ]+) -->\n)(?P<body>(?:(?!<!-- /?table).)*?)^(<!-- /table -->)", re.S | re.M)


class DataError(Exception):
    pass


def load(stem):
    path = HERE / f"{stem}.json"
    if not path.is_file():
        raise DataError(f"{path.relative_to(REPO)}: no such data file")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DataError(f"{path.relative_to(REPO)}: not JSON: {e}")
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise DataError(f"{path.relative_to(REPO)}: missing {', '.join(missing)}")
    if data["schema"] != 1:
        raise DataError(f"{path.relative_to(REPO)}: schema {data['schema']}, this script reads 1")
    if not stem.startswith(data["date"] + "-"):
        raise DataError(f"{path.relative_to(REPO)}: the name does not start with its date {data['date']}")
    for i, row in enumerate(data["rows"]):
        if len(row) != len(data["columns"]):
            raise DataError(f"{path.relative_to(REPO)}: row {i + 1} has {len(row)} cells for {len(data['columns'])} columns")
    return data


def cell(value):
    if value is None:
        return ""
    # A pipe would end the cell and a line break the row.
    return str(value).replace("|", "\\|").replace("\n", " ")


def render(stem, data, doc):
    """The text between the markers: blank lines around it keep it a block of its own. The
    data link is relative to the document the table is in."""
    link = (HERE / f"{stem}.json").relative_to(doc.parent) if HERE.is_relative_to(doc.parent) else f"Benchmarks/results/{stem}.json"
    lines = ["", "| " + " | ".join(cell(c) for c in data["columns"]) + " |",
             "| " + " | ".join("---" for _ in data["columns"]) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in data["rows"]]
    commit = data["commit"] if data["commit"] == "unknown" else data["commit"][:7]
    lines += ["", f"*{data['date']} · {cell(data['machine'])} · `{data['command']}` · commit {commit} · "
                  f"[data]({link})*", ""]
    return "\n".join(lines) + "\n"


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        sys.exit("usage: tables.py [--check]")
    problems, shown, changed = [], set(), 0
    rewritten = {}
    for doc in DOCS:
        text = doc.read_text()
        pairs = set()

        def replace(m):
            nonlocal changed
            stem = m.group("stem")
            pairs.add(stem)
            try:
                body = render(stem, load(stem), doc)
            except DataError as e:
                problems.append(f"{doc.name}: table {stem}: {e}")
                return m.group(0)
            if body != m.group("body"):
                changed += 1
                problems.append(f"{doc.name}: table {stem}: stale (python3 Benchmarks/results/tables.py rewrites it)")
            return m.group(1) + body + m.group(4)

        new = BLOCK.sub(replace, text)
        # A marker the pattern did not pair is a table that can never be regenerated.
        opened = len(re.findall(r"^<!-- table: ", text, re.M))
        closed = len(re.findall(r"^<!-- /table -->", text, re.M))
        if opened != len(pairs) or closed != len(pairs):
            problems.append(f"{doc.relative_to(REPO)}: {opened} table markers and {closed} end markers, {len(pairs)} pairs")
        shown |= pairs
        if new != text:
            rewritten[doc] = new
    for path in sorted(HERE.glob("*.json")):
        if path.stem not in shown:
            problems.append(f"{path.relative_to(REPO)}: no table in BENCHMARKS.md or Benchmarks/HISTORY.md shows it")

    if check:
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    for doc, new in rewritten.items():
        doc.write_text(new)
    others = [p for p in problems if not p.endswith("rewrites it)")]
    for p in others:
        print(p, file=sys.stderr)
    print(f"tables.py: {len(shown)} tables, {changed} rewritten")
    return 1 if others else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
