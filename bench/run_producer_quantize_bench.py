#!/usr/bin/env python3
"""The producer-quantization benchmark (bench/make_producer_quantize_bench.sh)
on one GPU, with its peers in the same run:

  python3 bench/run_producer_quantize_bench.py bench/build-producer

Rows: the fused kernel (y = bf16(max(g, 0) * u) quantized 1x16 with a given
amax, y never stored); the two kernels it replaces (the op writing y, then
the quantization of y); torch.compile of the same algorithm (the op, then
bench/run_bench.py's PyTorch quantization with the amax given); the device
copy of 1 GiB. Bytes counted: g and u read, codes and scales written (the
unfused route also writes and reads y). The fused kernel's bytes are also
checked against the unfused route's, byte for byte.
"""
import os
import sys

import cupy as cp
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import (device_copy_gbs, program, time_batched_ms,  # noqa: E402
                       torch_quantize_given)

M, N = 16384, 14336


def main():
    path = sys.argv[1]
    g = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    u = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    g_bits = cp.asarray(g.view(torch.int16)).view(cp.uint16)
    u_bits = cp.asarray(u.view(torch.int16)).view(cp.uint16)
    amax = np.float32(8.0)
    _, copy_gbs = device_copy_gbs()
    fused = program(path, "fused", [g_bits, u_bits, amax])
    producer = program(path, "producer", [g_bits, u_bits])
    producer()
    y = producer.results[0]
    quantize = program(path, "quantize", [y, amax])
    fused()
    quantize()
    cp.cuda.runtime.deviceSynchronize()
    same = all(bool(cp.array_equal(fused.results[i], quantize.results[i])) for i in (0, 1))
    print(f"fused bytes equal the unfused route's (codes, scales): {same}")

    elems = M * N
    out_bytes = elems // 2 + elems // 16
    fused_ms = time_batched_ms(fused)
    producer_ms = time_batched_ms(producer)
    quantize_ms = time_batched_ms(quantize)
    route_ms = producer_ms + quantize_ms

    def gbs(nbytes, ms):
        return nbytes / ms / 1e6

    fused_bytes = 4 * elems + out_bytes
    route_bytes = 4 * elems + 2 * elems + 2 * elems + out_bytes
    print(f"{M}x{N}: fused ({' + '.join(fused.kernels)}) {fused_ms:.4f} ms, "
          f"{gbs(fused_bytes, fused_ms):.0f} GB/s = {gbs(fused_bytes, fused_ms) / copy_gbs:.2f} x copy")
    print(f"  op writing y {producer_ms:.4f} ms + quantize of y {quantize_ms:.4f} ms = "
          f"{route_ms:.4f} ms ({gbs(route_bytes, route_ms):.0f} GB/s): fused is "
          f"{route_ms / fused_ms:.2f} x faster")
    a = torch.tensor(float(amax), device="cuda")
    compiled = torch.compile(lambda g, u: torch_quantize_given(
        (torch.clamp_min(g.float(), 0.0) * u.float()).bfloat16(), a))
    compiled(g, u)
    torch_ms = time_batched_ms(lambda: compiled(g, u))
    print(f"  torch.compile of the same algorithm {torch_ms:.4f} ms: fused is "
          f"{torch_ms / fused_ms:.2f} x faster")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
