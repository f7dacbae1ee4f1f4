#!/usr/bin/env python3
"""nvfp4.torch.Linear under torch.distributed on the GPU, one process per
rank (launched by run_dist_suite.sh through torchrun; the kit of
make_dist_kit.py; needs PyTorch with CUDA and distributed, numpy, and this
tree's python/ and runtime/python/ on the path).

Every rank also runs the layer in one process, without a process group,
on the same data (the reference), and compares:

- data parallel, DistributedDataParallel and FSDP2 (fully_shard): each rank
  its half of the tokens. The quantized operands (codes, scales, amax of X,
  W, dY, W^T, H dY^T, H X^T read from the launches' workspaces) are
  byte-identical to the reference's on that rank's tokens (activations and
  gradients keep per-rank amaxes, as TransformerEngine's; W is the whole
  weight, FSDP2 gathers it before the forward), Y and dX within 8e-3, and
  the averaged dW within 8e-3 of the mean of the reference's per-batch dW;
  no amax all-reduce is issued.
- tensor parallel, a column split (W split along out) and a row split
  (along in), through parallelize_module (DTensor weights) and through
  Linear(parallel=..., process_group=...) with the caller's communication:
  every operand's bytes equal the matching slice of the reference's
  (sharded operands are quantized with the amax of the whole tensor, one
  all-reduce per phase), Y, dX and dW within 8e-3 of the reference's
  slices. With stochastic rounding, the codes of a sharded SR operand (dY
  of a column split) cannot match (its random draws follow the element's
  position in the shard); its amax and scales must.
- the negative test: a column and a row split with the reduction off
  (layer.reduce_amax = False): rank 0's shard of W encodes with its own,
  smaller amax and its bytes differ from the single-process ones.

Prints "ok"/"FAIL" lines (rank 0's, and any other rank's failures) and
exits 0 when every check passes on every rank.
"""
import datetime
import json
import os
import re
import sys
import traceback

import numpy as np
import torch
import torch.distributed as dist

import nvfp4.torch as nt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_linear import workspace_operands  # noqa: E402

KIT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "dist_kit")
RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
failures = []
OPERANDS = {"forward": ["x", "w"], "backward": ["dy", "wt", "dyt", "xt"]}


def check(ok, what):
    if RANK == 0 or not ok:
        prefix = "" if RANK == 0 else f"[rank {RANK}] "
        print(("ok   " if ok else "FAIL ") + prefix + what, flush=True)
    if not ok:
        failures.append(what)


def section(name, function, *args):
    try:
        function(*args)
    except Exception as e:  # one device call: report, run the rest
        traceback.print_exc()
        check(False, f"{name}: {type(e).__name__}: {e}")


def rel_error(got, want):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if got.shape != want.shape or not torch.isfinite(got).all():
        return float("inf")
    return float((got - want).abs().max() / max(want.abs().max(), 1e-30))


def run(layer, x, dy, seed, module=None):
    """One forward and backward; (y, dx, quantized operands by name)."""
    layer.keep_workspaces = True
    layer._next_seed = lambda: seed
    x = x.detach().clone().requires_grad_()
    y = (module or layer)(x)
    y.backward(dy)
    torch.cuda.synchronize()
    operands = {}
    for phase, names in OPERANDS.items():
        found = workspace_operands(layer, phase)
        if len(found) != len(names):
            raise RuntimeError(f"{phase}: {len(found)} quantizations, "
                               f"{len(names)} expected")
        for name, (kernel, parts) in zip(names, found):
            operands[name] = (kernel, parts)
    return y.detach(), x.grad, operands


def block_rows(kernel):
    """16 for a 16x16-block quantize kernel (its name ends in the block and
    rounding: nvfp4_quantize_<shape>xbf16_16x16_rn), else 1."""
    return 16 if re.search(r"_16x16_(rn|sr)", kernel) else 1


def sliced(kernel, parts, shape, rows, cols):
    """The parts of a quantized [rows x cols] tensor's sub-block: codes
    (packed, two per byte), scales (one per 1x16 or 16x16 block, linear),
    amax."""
    r, c = shape
    br = block_rows(kernel)
    codes = parts["codes"].reshape(r, c // 2)[rows, cols.start // 2:
                                              cols.stop // 2]
    scales = parts["scales"].reshape(r // br, c // 16)[
        rows.start // br:rows.stop // br, cols.start // 16:cols.stop // 16]
    return {"codes": np.ascontiguousarray(codes).reshape(-1),
            "scales": np.ascontiguousarray(scales).reshape(-1),
            "amax": parts["amax"]}


def compare_operands(label, got, want, shapes, slices, skip_codes=()):
    for name in OPERANDS["forward"] + OPERANDS["backward"]:
        kernel, parts = got[name]
        wkernel, wparts = want[name]
        rows, cols = slices.get(name, (slice(0, shapes[name][0]),
                                       slice(0, shapes[name][1])))
        expected = sliced(wkernel, wparts, shapes[name], rows, cols)
        for part in ("amax", "scales", "codes"):
            if part == "codes" and name in skip_codes:
                continue
            a, b = parts[part], expected[part]
            same = a.shape == b.shape and np.array_equal(a, b)
            detail = "" if same else (
                f" ({int(np.count_nonzero(a != b))} of {b.size} bytes differ)"
                if a.shape == b.shape else f" ({a.size} bytes, {b.size} "
                                           f"expected)")
            check(same, f"{label}: {name} {part} identical to the single "
                        f"process's{detail}")


class Setup:
    def __init__(self, meta, device):
        case = meta["case"]
        self.t, self.k, self.n = case["tokens"], case["in"], case["out"]
        self.seed = case["seed"]
        self.tolerance = meta["tolerance"]
        self.device = device
        self.cache = os.path.join(KIT, "cache")
        g = torch.Generator().manual_seed(20261201)
        t, k, n = self.t, self.k, self.n
        # Halves of different magnitude along every split dimension: a
        # shard's own amax is not the whole tensor's.
        x = torch.randn(t, k, generator=g)
        x[:, k // 2:] *= 3.0
        x[:, torch.randperm(k, generator=g)[:4]] *= 10.0
        w = torch.randn(n, k, generator=g) * 0.02
        w[n // 2:, :] *= 4.0
        w[:, k // 2:] *= 3.0
        dy = torch.randn(t, n, generator=g) * 1e-3 * torch.exp(
            torch.randn(t, 1, generator=g))
        dy[:, n // 2:] *= 5.0
        self.x, self.w, self.dy = (v.to(torch.bfloat16).to(device)
                                   for v in (x, w, dy))
        self.shapes = {"x": (t, k), "w": (n, k), "dy": (t, n), "wt": (k, n),
                       "dyt": (n, t), "xt": (k, t)}
        self.references = {}

    def recipe(self, name):
        return nt.Recipe(stochastic_rounding=(name == "full"),
                         cache_dir=self.cache)

    def layer(self, recipe, k=None, n=None, weight=None, **kwargs):
        layer = nt.Linear(k or self.k, n or self.n, bias=False,
                          recipe=self.recipe(recipe), device=self.device,
                          **kwargs)
        with torch.no_grad():
            layer.weight.copy_(self.w if weight is None else weight)
        return layer

    def reference(self, recipe, tokens=None, seed=None):
        """The single-process run on all tokens or on a token slice."""
        key = (recipe, tokens and (tokens.start, tokens.stop), seed)
        if key not in self.references:
            tokens = tokens or slice(0, self.t)
            layer = self.layer(recipe)
            y, dx, operands = run(layer, self.x[tokens], self.dy[tokens],
                                  self.seed if seed is None else seed)
            self.references[key] = (y, dx, layer.weight.grad.detach(),
                                    operands)
        return self.references[key]


def data_parallel(s, wrap, label):
    half = s.t // WORLD
    mine = slice(RANK * half, (RANK + 1) * half)
    seeds = [s.seed + r for r in range(WORLD)]  # each rank its SR draws
    layer = s.layer("full")
    module = wrap(layer)
    y, dx, operands = run(layer, s.x[mine], s.dy[mine], seeds[RANK], module)
    ry, rdx, _, roperands = s.reference("full", mine, seeds[RANK])
    grads = [s.reference("full", slice(r * half, (r + 1) * half),
                         seeds[r])[2].double() for r in range(WORLD)]
    mean = sum(grads) / WORLD
    data_shapes = dict(s.shapes, x=(half, s.k), dy=(half, s.n),
                       dyt=(s.n, half), xt=(s.k, half))
    compare_operands(label, operands, roperands, data_shapes, {})
    for name, got, want in (("Y", y, ry), ("dX", dx, rdx)):
        error = rel_error(got, want)
        check(error <= s.tolerance, f"{label}: {name} within {s.tolerance} "
                                    f"of the single process's ({error:.1e})")
    grad = layer.weight.grad
    if hasattr(grad, "full_tensor"):
        grad = grad.full_tensor()
    error = rel_error(grad, mean)
    check(error <= s.tolerance, f"{label}: dW (averaged over the ranks) "
                                f"within {s.tolerance} of the mean of the "
                                f"single process's per-batch dW "
                                f"({error:.1e})")
    check(layer.amax_reductions == 0, f"{label}: no amax all-reduce "
                                      f"(issued {layer.amax_reductions})")


def ddp(s):
    from torch.nn.parallel import DistributedDataParallel as DDP
    data_parallel(s, lambda layer: DDP(layer, device_ids=[s.device.index]),
                  "DDP")


def fsdp2(s, mesh):
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard

    from torch.distributed.tensor import DTensor

    def wrap(layer):
        fully_shard(layer, mesh=mesh)
        check(isinstance(layer.weight, DTensor) and
              layer.weight.to_local().shape[0] == s.n // WORLD,
              "FSDP2: the parameter is a DTensor of one shard per rank "
              "between steps")
        return layer
    data_parallel(s, wrap, "FSDP2")


def split_slices(s, mode):
    """This rank's (rows, cols) of every operand under a split."""
    if mode == "column":
        part = s.n // WORLD
        r = slice(RANK * part, (RANK + 1) * part)
        return r, {"w": (r, slice(0, s.k)), "wt": (slice(0, s.k), r),
                   "dy": (slice(0, s.t), r), "dyt": (r, slice(0, s.t))}
    part = s.k // WORLD
    c = slice(RANK * part, (RANK + 1) * part)
    return c, {"x": (slice(0, s.t), c), "w": (slice(0, s.n), c),
               "wt": (c, slice(0, s.n)), "xt": (c, slice(0, s.t))}


def tensor_parallel(s, mesh, mode, recipe, how, reduce=True):
    label = f"TP {mode} ({how}, {recipe} recipe" + \
        ("" if reduce else ", NO amax reduction") + ")"
    span, slices = split_slices(s, mode)
    if how == "DTensor":
        from torch.distributed.tensor.parallel import (
            ColwiseParallel, RowwiseParallel, parallelize_module)
        layer = s.layer(recipe)
        parallelize_module(layer, mesh, ColwiseParallel()
                           if mode == "column" else RowwiseParallel())
    elif mode == "column":
        layer = s.layer(recipe, n=s.n // WORLD, weight=s.w[span],
                        parallel="column")
    else:
        layer = s.layer(recipe, k=s.k // WORLD, weight=s.w[:, span],
                        parallel="row", process_group=dist.group.WORLD)
    layer.reduce_amax = reduce
    x = s.x if mode == "column" else s.x[:, span]
    dy = s.dy[:, span] if mode == "column" else s.dy
    y, dx, operands = run(layer, x, dy, s.seed)
    ry, rdx, rdw, roperands = s.reference(recipe)
    weight = layer.weight
    dw = weight.grad.to_local() if hasattr(weight.grad, "to_local") \
        else weight.grad
    if how == "explicit":  # the caller's communication, as for nn.Linear
        if mode == "column":
            dist.all_reduce(dx)  # partial sums of dX = dY W
        else:
            dist.all_reduce(y)   # partial sums of Y = X W^T
    if not reduce:
        _, parts = operands["w"]
        wkernel, wparts = roperands["w"]
        want = sliced(wkernel, wparts, s.shapes["w"], *slices["w"])
        differ = int(np.count_nonzero(parts["codes"] != want["codes"]))
        amax = float(parts["amax"].view(np.float32)[0])
        whole = float(want["amax"].view(np.float32)[0])
        if RANK == 0:  # the shard of the smaller half
            check(amax < whole and differ > 0,
                  f"{label}: rank 0's W shard encodes with its own amax "
                  f"{amax:.4g} (the whole weight's: {whole:.4g}); "
                  f"{differ} of {want['codes'].size} code bytes differ "
                  f"from the single process's")
        check(layer.amax_reductions == 0, f"{label}: no all-reduce issued")
        return
    sr_sharded = ("dy", "dyt") if recipe == "full" and mode == "column" \
        else ()
    compare_operands(label, operands, roperands, s.shapes, slices,
                     skip_codes=sr_sharded)
    if mode == "column":
        want = {"Y": ry[:, span], "dX": rdx, "dW": rdw[span]}
    else:
        want = {"Y": ry, "dX": rdx[:, span], "dW": rdw[:, span]}
    got = {"Y": y, "dX": dx, "dW": dw}
    for name in ("Y", "dX", "dW"):
        if sr_sharded and name != "Y":
            continue  # different SR draws of dY: not comparable at 8e-3
        error = rel_error(got[name], want[name])
        check(error <= s.tolerance, f"{label}: {name} within {s.tolerance} "
                                    f"of the single process's slice "
                                    f"({error:.1e})")
    check(layer.amax_reductions == 2, f"{label}: one amax all-reduce per "
                                      f"phase (issued "
                                      f"{layer.amax_reductions})")


def main():
    with open(os.path.join(KIT, "meta.json")) as f:
        meta = json.load(f)
    if WORLD != meta["case"]["ranks"]:
        print(f"torch_dist.py: run with {meta['case']['ranks']} ranks "
              f"(torchrun --nproc_per_node={meta['case']['ranks']}), not "
              f"{WORLD}")
        return 2
    backend = os.environ.get("NVFP4_DIST_BACKEND") or (
        "nccl" if torch.cuda.device_count() >= WORLD else "gloo")
    local = int(os.environ.get("LOCAL_RANK", RANK))
    device = torch.device("cuda", local if backend == "nccl" else 0)
    torch.cuda.set_device(device)
    # A failure on one rank before a collective must not hang the others
    # for gloo's default half hour.
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=120))
    if RANK == 0:
        print(f"{torch.cuda.get_device_name(device)}, PyTorch "
              f"{torch.__version__}, {WORLD} ranks, backend {backend}"
              + ("" if backend == "nccl" else
                 f" (all ranks on cuda:{device.index})"), flush=True)
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cuda", (WORLD,))
    s = Setup(meta, device)
    section("DDP", ddp, s)
    section("FSDP2", fsdp2, s, mesh)
    for mode in ("column", "row"):
        for recipe in ("rn", "full"):
            section(f"TP {mode} DTensor {recipe}", tensor_parallel, s, mesh,
                    mode, recipe, "DTensor")
        section(f"TP {mode} explicit", tensor_parallel, s, mesh, mode, "rn",
                "explicit")
        section(f"TP {mode} without reduction", tensor_parallel, s, mesh,
                mode, "rn", "DTensor", False)
    counts = [None] * WORLD
    dist.all_gather_object(counts, len(failures))
    dist.destroy_process_group()
    if RANK == 0:
        total = sum(counts)
        print(f"torch_dist: {total} failed (per rank {counts})" if total
              else f"torch_dist: all checks passed on {WORLD} ranks")
    return 1 if any(counts) else 0


if __name__ == "__main__":
    sys.exit(main())
