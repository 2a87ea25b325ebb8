#!/usr/bin/env python3
"""Make a stand-in for a shared library: same SONAME, same version nodes, every exported
symbol defined (functions return 0, objects are zeros of the same size). For libraries the
measured paths never call, so the FFmpeg and dualcam binaries load without them."""
import re, subprocess, sys, os
lib, outdir = sys.argv[1], sys.argv[2]
def run(*a): return subprocess.run(a, capture_output=True, text=True, check=True).stdout
soname = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", run("readelf", "-d", "-W", lib)).group(1)
defs = []
verdefs = []
vd = run("readelf", "-V", "-W", lib)
sec = vd.split("Version definition section")[1].split("Version needs section")[0] if "Version definition section" in vd else ""
for m in re.finditer(r"Flags: (\S+)\s+Index: (\d+)\s+Cnt: \d+\s+Name: (\S+)", sec):
    if m.group(1) != "BASE": verdefs.append(m.group(3))
for line in run("readelf", "--dyn-syms", "-W", lib).splitlines():
    f = line.split()
    if len(f) < 8 or not f[0].endswith(":"): continue
    size, typ, bind, ndx, name = f[2], f[3], f[4], f[6], f[7]
    if ndx == "UND" or bind == "LOCAL" or typ not in ("FUNC", "OBJECT", "IFUNC", "NOTYPE", "TLS"): continue
    size = int(size, 0)
    ver, default = None, True
    if "@@" in name: name, ver = name.split("@@")
    elif "@" in name: name, ver = name.split("@"); default = False
    ver = ver.split()[0] if ver else None
    if ver and ver not in verdefs: verdefs.append(ver)
    defs.append((name, typ, bind, size, ver, default))
defs = [d for d in defs if d[0] not in verdefs]  # the version nodes' own symbols
asm = [".text"]
nodes = {v: [] for v in verdefs}
for i, (name, typ, bind, size, ver, default) in enumerate(defs):
    local = f"__stub_{i}"
    if typ in ("OBJECT", "TLS"):
        asm += [".data" if typ == "OBJECT" else ".section .tbss,\"awT\",@nobits", f".type {local},@object" if typ == "OBJECT" else f".type {local},@tls_object",
                f".size {local},{max(size,1)}", f".globl {local}", f"{local}:", f".zero {max(size,1)}", ".text"]
    else:
        asm += [f".type {local},@function", f".globl {local}", f"{local}:", "xorl %eax,%eax", "ret"]
    if ver:
        asm.append(f".symver {local},{name}{'@@@' if default else '@'}{ver}")
    else:
        asm += [f".set {name},{local}", f".globl {name}", (f".type {name},@object" if typ == "OBJECT" else f".type {name},@function")]
        if typ == "OBJECT": asm.append(f".size {name},{max(size,1)}")
    if bind == "WEAK" and not ver: asm.append(f".weak {name}")
script = "".join(f"{v} {{ {'global: *; ' if i == 0 else ''}}};\n" for i, v in enumerate(verdefs))
# every __stub_ must stay out of the dynamic table: local in the first node
if verdefs:
    script = f"{verdefs[0]} {{ global: *; local: __stub_*; }};\n" + "".join(f"{v} {{ }};\n" for v in verdefs[1:])
else:
    script = "{ global: *; local: __stub_*; };\n"
base = os.path.join(os.environ.get("TMPDIR", "/tmp"), "stub-" + soname)
open(base + ".s", "w").write("\n".join(asm) + "\n")
open(base + ".map", "w").write(script)
subprocess.run(["gcc", "-shared", "-nostdlib", "-o", os.path.join(outdir, soname), f"-Wl,-soname,{soname}",
                f"-Wl,--version-script={base}.map", base + ".s"], check=True)
print(soname, len(defs), "symbols", len(verdefs), "versions")
