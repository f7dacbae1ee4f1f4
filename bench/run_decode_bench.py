#!/usr/bin/env python3
"""Decode-like GEMMs (M <= 128 rows of A, a 4096 x 4096 weight B) as a
memory-bound workload, in one run (issue 13):

  python3 bench/run_decode_bench.py bench/build-gemm      (after make_gemm_bench.sh)
      [--alternate VARIANT ...] [--rounds R]

A few microseconds per call, so two traps of run_gemm_bench.py's timing are
avoided here:
  * host launch overhead: every variant is timed as a CUDA graph of 8 calls
    (torch.cuda.CUDAGraph; our programs' launches captured through cupy on
    the capture stream), replayed 50 times -- the median per call;
  * the H200's 50 MB L2: a 9.4 MB NVFP4 weight (or a 32 MB BF16 one) stays
    cached between back-to-back calls, so each of the 8 calls of a graph uses
    its own copy of the operands (75 MB of NVFP4 weights, 256 MB of BF16).
Peers in the same run: cuBLAS BF16 (torch.matmul), our dequantize kernels +
cuBLAS, and a device copy of the weight's bytes (the bandwidth ceiling for
this size: read + write of the same 8 rotating buffers), besides the 1 GiB
copy. "x copy" is the weight bytes per second of a GEMM against the copy's
(read + write) bytes per second, as in run_gemm_bench.py. A read of the
weight bytes alone (a kernel of 16-byte loads that writes nothing, same
rotating buffers: "the read-only peer") shows what a GEMM that only read B
could reach at this size, launch and ramp included. Every GEMM line gives
its weight bytes per second against all three in the same run: the
same-size copy ("x copy"), the read-only peer ("x read"), the 1 GiB copy
("x 1 GiB copy", the large-size bandwidth).

--alternate VARIANT (repeatable) then times each such variant against the
shape's default in R rounds (default 8), their graphs interleaved in an
order that rotates every round, so that clock drift hits both alike;
printed: the median per call of each over the rounds and the rounds'
ratios default / variant (median, and in how many rounds the variant won).
"""
import argparse
import os
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import device_copy_gbs, program  # noqa: E402
from run_gemm_bench import operands  # noqa: E402

COPIES = 8
REPLAYS = 50

# Reads n16 16-byte words (grid-stride, 4 loads in flight per thread) and
# stores only if their XOR is a value random bytes never give in practice:
# the loads cannot be dropped, nothing is written.
READ_KERNEL = cp.RawKernel(r"""
extern "C" __global__ void read_words(const uint4 *src, long long n16,
                                      unsigned *sink) {
  unsigned acc = 0;
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride],
          d = src[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^
           c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n16; i += stride) {
    uint4 a = src[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9E3779B9u && threadIdx.x == 1023) sink[0] = acc;
}
""", "read_words")


def graph_ms(calls):
    """Median time per call of a CUDA graph that runs `calls` in order."""
    stream = torch.cuda.Stream()
    for call in calls:  # warm-up: module loads, cupy's fill kernels
        call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        with cp.cuda.ExternalStream(stream.cuda_stream):
            for call in calls:
                call()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPLAYS):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / len(calls))
    times.sort()
    return times[len(times) // 2]


def alternate(path, dims, sets, variants, rounds):
    """Interleaved rounds of the default and `variants` of one shape."""
    names = ["default"] + [v for v in variants if os.path.exists(
        os.path.join(path, f"gemm_{dims}_{v}.json"))]
    if len(names) == 1:
        return
    progs = {v: [program(path, f"gemm_{dims}" + ("" if v == "default"
                                                  else "_" + v), s)
                 for s in sets] for v in names}
    times = {v: [] for v in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for v in order:
            times[v].append(graph_ms(progs[v]))
    base = times["default"]
    for v in names:
        t = sorted(times[v])
        line = (f"  alternate {dims:14s} {v:26s} median {t[len(t) // 2] * 1e3:6.2f} us "
                f"(min {t[0] * 1e3:.2f}, max {t[-1] * 1e3:.2f})")
        if v != "default":
            ratios = sorted(b / x for b, x in zip(base, times[v]))
            wins = sum(x < b for b, x in zip(base, times[v]))
            line += (f"; default / this: median {ratios[len(ratios) // 2]:.3f}, "
                     f"won {wins} of {rounds} rounds")
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--alternate", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    path = args.path
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {dev}; torch {torch.__version__}; cupy {cp.__version__}")
    with open(os.path.join(path, "shapes.txt")) as f:
        shapes = [s for s in f.read().split()
                  if int(s.split("x")[0]) <= 128]
    with open(os.path.join(path, "decode_variants.txt")) as f:
        variants = f.read().split()
    # The large-shape schedules make_gemm_bench.sh compiles for every shape
    # (one tile per CTA, decoder warpgroup, the route, the route in
    # clusters): peers of the rule's choice at M = 128.
    variants = ["v1", "v2", "route", "route_c2"] + variants
    rng = cp.random.default_rng(0)

    big_ms, big_gbs = device_copy_gbs()

    summary = []
    for shape in shapes:
        dims, block_b = shape.split(":")
        m, n, k = (int(v) for v in dims.split("x"))
        weight = n * k // 2 + (n if block_b == "1x16" else n // 16) * k // 16
        sets = [operands(rng, m, n, k, block_b) for _ in range(COPIES)]

        pairs = [(torch.empty(weight, dtype=torch.uint8, device="cuda"),
                  torch.empty(weight, dtype=torch.uint8, device="cuda"))
                 for _ in range(COPIES)]
        copy_ms = graph_ms([lambda d=d, s=s: d.copy_(s) for s, d in pairs])
        copy_gbs = 2 * weight / copy_ms / 1e6
        sink = cp.zeros(1, cp.uint32)
        sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        views = [cp.asarray(s) for s, _ in pairs]
        reads = [lambda v=v: READ_KERNEL(
            (2 * sms,), (1024,), (v, cp.int64(weight // 16), sink))
            for v in views]
        read_ms = graph_ms(reads)
        del pairs, views

        a16 = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
               for _ in range(COPIES)]
        b16 = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
               for _ in range(COPIES)]
        cublas = graph_ms([lambda a=a, b=b: torch.matmul(a, b.t())
                           for a, b in zip(a16, b16)])
        del a16, b16

        deqs = [program(path, f"dequant_{dims}", s) for s in sets]
        route_calls = []
        for deq in deqs:
            ta = torch.as_tensor(deq.results[0], device="cuda").view(
                torch.bfloat16).view(m, k)
            tb = torch.as_tensor(deq.results[1], device="cuda").view(
                torch.bfloat16).view(n, k)
            route_calls.append(
                lambda deq=deq, ta=ta, tb=tb: (deq(), torch.matmul(ta, tb.t())))
        route = graph_ms(route_calls)
        del deqs, route_calls

        read_gbs = weight / read_ms / 1e6
        print(f"{dims} (B {block_b}, weight {weight / 1e6:.2f} MB): "
              f"copy of the weight bytes {copy_ms * 1e3:.2f} us "
              f"({copy_gbs:.0f} GB/s = {copy_gbs / big_gbs:.2f} x 1 GiB copy); "
              f"read of the weight bytes {read_ms * 1e3:.2f} us "
              f"({read_gbs:.0f} GB/s = "
              f"{read_gbs / copy_gbs:.2f} x same-size copy, "
              f"{read_gbs / big_gbs:.2f} x 1 GiB copy); "
              f"cuBLAS bf16 {cublas * 1e3:.2f} us; "
              f"dequantize + cuBLAS {route * 1e3:.2f} us")
        for variant in ["default"] + variants:
            name = f"gemm_{dims}" + ("" if variant == "default"
                                     else "_" + variant)
            if not os.path.exists(os.path.join(path, name + ".json")):
                continue
            progs = [program(path, name, s) for s in sets]
            ms = graph_ms(progs)
            kernel = progs[0].kernels
            gemm = [kk for kk in kernel if "scaled_matmul" in kk][0]
            gbs = weight / ms / 1e6
            print(f"  {variant:22s} {gemm.split('_to_')[-1]:34s} "
                  f"{ms * 1e3:7.2f} us  weight {gbs:5.0f} GB/s = "
                  f"{gbs / copy_gbs:.2f} x same-size copy, "
                  f"{gbs / read_gbs:.2f} x read-only peer, "
                  f"{gbs / big_gbs:.2f} x 1 GiB copy; "
                  f"{cublas / ms:.2f} x cuBLAS, {route / ms:.2f} x "
                  f"dequantize + cuBLAS ({len(kernel)} kernels)")
            summary.append((dims, variant, ms, gbs / copy_gbs, gbs / read_gbs,
                            gbs / big_gbs, cublas / ms, route / ms))
            del progs
        if args.alternate:
            alternate(path, dims, sets, args.alternate, args.rounds)
        del sets
        cp.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()
    print(f"\nsummary (1 GiB copy {big_gbs:.0f} GB/s): shape, variant, us, "
          "x same-size copy, x read-only peer, x 1 GiB copy, x cuBLAS, "
          "x dequantize + cuBLAS")
    for dims, variant, ms, xs, xp, xb, xc, xr in summary:
        print(f"  {dims:16s} {variant:26s} {ms * 1e3:7.2f} {xs:5.2f} {xp:5.2f} "
              f"{xb:5.2f} {xc:5.2f} {xr:5.2f}")


if __name__ == "__main__":
    main()
