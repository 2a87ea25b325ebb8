#!/usr/bin/env python3
"""Limits a newcomer can read within: no Swift file in Sources/ over 400 lines, no function
(func, init, deinit, closure-free accessor bodies count with their function) over 80.
Prints each breach and exits 1 if there is one; --report lists the longest anyway."""
import re, sys, pathlib

MAX_FILE, MAX_FUNC = 400, 80
DECL = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|open|static|class|final|override|mutating|nonmutating|convenience|required|nonisolated|@inline\(__always\)|@inlinable|@usableFromInline|@discardableResult)\s+)*(func\s+[^\s(<]+|init[?!]?|deinit)\b')

def strip(line, state):
    """The line with string literals and comments blanked; state carries block comments and
    multi-line strings across lines."""
    out, i = [], 0
    while i < len(line):
        if state['block']:
            j = line.find('*/', i)
            if j < 0: return ''.join(out)
            state['block'] = False; i = j + 2; continue
        if state['multi']:
            j = line.find('"""', i)
            if j < 0: return ''.join(out)
            state['multi'] = False; i = j + 3; continue
        if line.startswith('//', i): break
        if line.startswith('/*', i): state['block'] = True; i += 2; continue
        if line.startswith('"""', i): state['multi'] = True; i += 3; continue
        if line[i] == '"':
            i += 1; depth = 0
            while i < len(line):
                if line[i] == '\\' and i + 1 < len(line) and line[i + 1] == '(':
                    depth += 1; i += 2; continue
                if depth and line[i] == ')': depth -= 1
                elif depth and line[i] == '(': depth += 1
                elif line[i] == '\\': i += 1
                elif line[i] == '"' and not depth: i += 1; break
                i += 1
            continue
        out.append(line[i]); i += 1
    return ''.join(out)

def functions(path):
    lines = path.read_text().splitlines()
    state = {'block': False, 'multi': False}
    code = [strip(l, state) for l in lines]
    found = []
    for n, text in enumerate(code):
        m = DECL.match(text)
        if not m: continue
        depth, opened = 0, False
        for k in range(n, len(code)):
            for ch in code[k]:
                if ch == '{': depth += 1; opened = True
                elif ch == '}': depth -= 1
            if opened and depth <= 0:
                found.append((k - n + 1, n + 1, m.group(1)))
                break
            # A requirement in a protocol: no body.
            if not opened and k > n and DECL.match(code[k]): break
    return len(lines), found

def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('-') else 'Sources')
    breaches, longest = [], []
    for path in sorted(root.rglob('*.swift')):
        count, funcs = functions(path)
        if count > MAX_FILE: breaches.append(f'{path}: {count} lines (at most {MAX_FILE})')
        for length, line, name in funcs:
            longest.append((length, f'{path}:{line} {name}'))
            if length > MAX_FUNC: breaches.append(f'{path}:{line}: {name} is {length} lines (at most {MAX_FUNC})')
    if '--report' in sys.argv:
        for length, where in sorted(longest, reverse=True)[:15]: print(f'{length:5} {where}')
    for b in breaches: print(b)
    sys.exit(1 if breaches else 0)

main()
