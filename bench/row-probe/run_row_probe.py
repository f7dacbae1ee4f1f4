"""Probe: the Llama block's softmax row kernel (nvfp4_linalg_rows_32x16384x16384_3op,
one CTA of 512 threads per 16384-element BF16 row, causal mask, scale, max,
sum of exp, divide) in variants edited at the PTX level, to tell whether it is
bound by instructions (the per-element div.rn.f32) or by bytes in flight per SM
(59 registers -> 2 CTAs of 512 threads per SM).
  A: as compiled;  B: div.rn -> div.full (approximate);  D: one rcp.rn per row,
  then mul.rn per element;  E: D plus the residual correction (2 fma: exact
  division where nothing under- or overflows);  G: what nvfp4-compile now emits
  (E with the range checks and one branch a chunk to div.rn);  X3: the same with .minnctapersm 3 (<= 40 registers).
Cubins from make_row_probe.py. Times each on ROWS rows (the kernel's mask uses row % 16384), CUDA events,
median of 10, and counts the output elements whose bits differ from A."""
import sys, os
import cupy as cp
import numpy as np
here = os.path.dirname(os.path.abspath(__file__))
name = open(os.path.join(here, "name.txt")).read().strip()
rows = int(sys.argv[1]) if len(sys.argv) > 1 else 8 * 16384
L = 16384
rng = cp.random.default_rng(1)
x32 = rng.standard_normal((rows, L), dtype=cp.float32) * 4
xin = (x32.view(cp.uint32) >> 16).astype(cp.uint16)   # BF16 by truncation
out = cp.empty_like(xin)
nbytes = 2 * xin.nbytes
start, stop = cp.cuda.Event(), cp.cuda.Event()
def timeit(fn):
    fn(); cp.cuda.runtime.deviceSynchronize()
    ts = []
    for _ in range(10):
        start.record(); fn(); stop.record(); stop.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(ts))
tmp = cp.empty_like(xin)
copy_ms = timeit(lambda: tmp.__setitem__(Ellipsis, xin))
print(f"rows {rows} x {L} bf16: {nbytes/1e9:.2f} GB moved; copy {copy_ms:.3f} ms = {nbytes/copy_ms/1e6:.0f} GB/s")
ref = None
for tag in ["A", "B", "D", "E", "G", "A3", "E3"]:
    mod = cp.RawModule(path=os.path.join(here, tag + ".cubin"))
    k = mod.get_function(name)
    run = lambda: k((rows,), (512,), (out, xin))
    ms = timeit(run)
    got = out.copy()
    if ref is None:
        ref = got
    diff = int(cp.count_nonzero(got != ref))
    print(f"{tag:3s} {ms:8.3f} ms  {nbytes/ms/1e6:6.0f} GB/s  {copy_ms/ms:5.2f}x copy  "
          f"outputs differing from A: {diff} of {got.size}")
