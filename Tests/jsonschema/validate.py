#!/usr/bin/env python3
"""Checks dualcam's --json outputs against the schemas in Docs/json (python3-jsonschema,
an implementation independent of the program).

    validate.py SCHEMA FILE...     each FILE holds one output: one line, one object

Exit 0 when every file is one line of JSON that the schema accepts, else 1 with a line per
file that is not.
"""
import json
import sys

import jsonschema


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            text = f.read()
        lines = text.rstrip("\n").split("\n")
        if len(lines) != 1:
            print(f"{path}: {len(lines)} lines, not one", file=sys.stderr)
            bad += 1
            continue
        try:
            value = json.loads(lines[0])
        except ValueError as e:
            print(f"{path}: not JSON: {e}", file=sys.stderr)
            bad += 1
            continue
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        for e in errors[:5]:
            print(f"{path}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message}", file=sys.stderr)
        bad += bool(errors)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
