"""Writes the cubins of run_row_probe.py (development machine, ~5 s):
kernel_div_rn.ptx is the Llama block's softmax row kernel as nvfp4-compile
emitted it before the reciprocal path (a div.rn.f32 per element; session 8's
compiler, bench/build-model's block), kernel_compiled.ptx as it emits it
now. From the first, PTX edits make B (div.full.f32: approximate), D (one
rcp.rn.f32 a row, mul.rn per element: not exact) and E (D plus the residual
correction: fma, fma -- the reciprocal path without its range checks);
A3/E3 add .minnctapersm 3 (at most 40 registers)."""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
ptxas = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/bin/ptxas"
base = open(os.path.join(here, "kernel_div_rn.ptx")).read()
name = re.search(r"\.entry (\S+)\(", base).group(1)
divs = re.findall(r"div\.rn\.f32\s+(%r\d+), (%r\d+), (%r\d+);", base)
divisor = divs[0][2]
assert all(d[2] == divisor for d in divs)


def with_reciprocal(text, correct):
    line = text.rfind("\n", 0, text.index("div.rn.f32"))
    text = (text[:line] + f"\n\trcp.rn.f32 \t%rcpinv, {divisor};"
            f"\n\tneg.f32 \t%rcpns, {divisor};" + text[line:])
    count = [0]

    def edit(m):
        count[0] += 1
        q, x, k = m.group(1), m.group(2), count[0]
        if not correct:
            return f"mul.rn.f32 \t{q}, {x}, %rcpinv;"
        return (f"mul.rn.f32 \t%q0_{k}, {x}, %rcpinv;\n"
                f"\tfma.rn.f32 \t%e_{k}, %q0_{k}, %rcpns, {x};\n"
                f"\tfma.rn.f32 \t{q}, %e_{k}, %rcpinv, %q0_{k};")
    text = re.sub(r"div\.rn\.f32\s+(%r\d+), (%r\d+), (%r\d+);", edit, text)
    regs = "\n\t.reg .b32 \t%rcpinv;\n\t.reg .b32 \t%rcpns;\n" + "".join(
        f"\t.reg .b32 \t%q0_{k};\n\t.reg .b32 \t%e_{k};\n" for k in range(1, count[0] + 1))
    return re.sub(r"(\.reg \.b64 \t%rd<\d+>;)", lambda m: m.group(1) + regs, text, count=1)


def occupancy3(text):
    return re.sub(r"(\.maxntid 512, 1, 1)", r"\1\n.minnctapersm 3", text, count=1)


variants = {
    "A": base,
    "B": base.replace("div.rn.f32", "div.full.f32"),
    "D": with_reciprocal(base, correct=False),
    "E": with_reciprocal(base, correct=True),
    "G": open(os.path.join(here, "kernel_compiled.ptx")).read(),
}
variants["A3"] = occupancy3(variants["A"])
variants["E3"] = occupancy3(variants["E"])
for tag, text in variants.items():
    assert name in text
    path = os.path.join(here, tag + ".ptx.tmp")
    with open(path, "w") as f:
        f.write(text)
    subprocess.run([ptxas, "-arch=sm_90a", path, "-o", os.path.join(here, tag + ".cubin")],
                   check=True)
    os.remove(path)
with open(os.path.join(here, "name.txt"), "w") as f:
    f.write(name + "\n")
