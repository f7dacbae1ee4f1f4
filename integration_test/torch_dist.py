#!/usr/bin/env python3
"""nvfp4.torch.Linear under torch.distributed on the GPU, one process per
rank (launched by run_dist_suite.sh through torchrun; the kit of
make_dist_kit.py; needs PyTorch with CUDA and distributed, numpy, and this
tree's python/ and runtime/python/ on the path -- not nvfp4's numerics
extension, which the GPU machine's Python has no build of: the kit carries
the library's bytes).

Every rank also runs the layer in one process, without a process group,
on the same data (the reference), and compares:

- the reference itself (sections "single process rn/full"): its quantized
  operands (codes, scales, amax of X, W, dY, W^T, H dY^T, H X^T read from
  the launches' workspaces) byte-identical to the numerics library's, Y,
  dX, dW within 8e-3 of the float64 model of the recipe.
- data parallel, DistributedDataParallel and FSDP2 (fully_shard): each rank
  its half of the tokens. The quantized operands are byte-identical to the
  reference's on that rank's tokens (activations and gradients keep
  per-rank amaxes, as TransformerEngine's; W is the whole weight, FSDP2
  gathers it before the forward), Y and dX within 8e-3, and the reduced dW
  within 8e-3 of the mean of the reference's per-batch dW (FSDP2's Shard(0)
  gradient gathered by a c10d all-gather, see gather_rows); no amax
  all-reduce is issued.
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

Each section runs in its own process group and device mesh (a section
whose ranks fail apart leaves no collective for the next one to pair
with); an exception is a FAIL line with the section's name and a traceback
on stderr; a CUDA context a section broke stops the run with the names of
the sections left (NVFP4_DIST_SECTIONS=name,... reruns some: names or
their beginnings). Prints "== section" headers, "ok"/"FAIL" lines (rank
0's, and any other rank's failures), a summary per section, and exits 0
when every check passes on every rank.

  torch_dist.py KIT --check-kit   (here, without CUDA: the imports work
                                   without the extension and every bundle
                                   is in the kit's cache)
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
from torch_linear import bf16, workspace_operands  # noqa: E402

_ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
KIT = _ARGS[0] if _ARGS else os.path.join(HERE, "dist_kit")
RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
failures = []
passes = [0]
OPERANDS = {"forward": ["x", "w"], "backward": ["dy", "wt", "dyt", "xt"]}
# Seconds a collective may wait for the other ranks: a rank that fails
# before a collective must not hang the others for gloo's half hour. The
# bookkeeping group between sections waits longer than a section's
# collectives, so a section's timeout surfaces inside the section.
SECTION_TIMEOUT = 120
STATUS_TIMEOUT = 400


def check(ok, what):
    if RANK == 0 or not ok:
        prefix = "" if RANK == 0 else f"[rank {RANK}] "
        print(("ok   " if ok else "FAIL ") + prefix + what, flush=True)
    if ok:
        passes[0] += 1
    else:
        failures.append(what)


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
        t, k, n = self.t, self.k, self.n
        # Made here by make_dist_kit.py with the numerics library's bytes
        # of the single-process run (no library on the GPU machine).
        self.data = dict(np.load(os.path.join(KIT, "data.npz")))
        self.x, self.w, self.dy = (bf16(self.data[name], device)
                                   for name in ("x", "w", "dy"))
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


def library(s, ctx, recipe):
    """The single-process run (every other section's reference) against the
    numerics library and the float64 model of the recipe."""
    label = f"single process ({recipe} recipe)"
    y, dx, dw, operands = s.reference(recipe)
    for name in OPERANDS["forward"] + OPERANDS["backward"]:
        kernel, parts = operands[name]
        for part in ("amax", "scales", "codes"):
            got = parts[part]
            want = s.data[f"{recipe}_q_{name}_{part}"].view(np.uint8)
            same = got.shape == want.shape and np.array_equal(got, want)
            detail = "" if same else (
                f" ({int(np.count_nonzero(got != want))} of {want.size} "
                f"bytes differ)" if got.shape == want.shape else
                f" ({got.size} bytes, {want.size} expected)")
            check(same, f"{label}: {name} {part} ({kernel}) identical to "
                        f"the numerics library's{detail}")
    for name, got in (("Y", y), ("dX", dx), ("dW", dw)):
        want = torch.from_numpy(s.data[f"{recipe}_{name.lower()}_ref"])
        error = rel_error(got, want)
        check(error <= s.tolerance, f"{label}: {name} within {s.tolerance} "
                                    f"of the float64 model of the recipe "
                                    f"({error:.1e})")


def data_parallel(s, ctx, wrap, label):
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
    if hasattr(grad, "to_local"):
        grad = gather_rows(grad.to_local(), ctx.group)
    error = rel_error(grad, mean)
    check(error <= s.tolerance, f"{label}: dW (reduced over the ranks) "
                                f"within {s.tolerance} of the reduction of "
                                f"the single process's per-batch dW "
                                f"({error:.1e})")
    check(layer.amax_reductions == 0, f"{label}: no amax all-reduce "
                                      f"(issued {layer.amax_reductions})")


def gather_rows(shard, group):
    """The whole tensor from equal dim-0 shards (FSDP2's Shard(0) gradient),
    by a plain c10d all-gather. Not DTensor.full_tensor(): its functional
    all-gather crashes the process (SIGSEGV in AsyncCollectiveTensor) under
    gloo with CUDA tensors in PyTorch 2.11, with torch.nn.Linear alone
    (integration_test/fsdp2_gloo_probe.py fsdp2_bf16_cuda_full; the c10d
    all-gather, ag_bf16_cuda, works)."""
    shard = shard.contiguous()
    whole = shard.new_empty((shard.shape[0] * WORLD,) + shard.shape[1:])
    dist.all_gather_into_tensor(whole, shard, group=group)
    return whole


def ddp(s, ctx):
    from torch.nn.parallel import DistributedDataParallel as DDP
    data_parallel(s, ctx, lambda layer: DDP(layer, device_ids=[s.device.index],
                                            process_group=ctx.group), "DDP")


def fsdp2(s, ctx):
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard

    from torch.distributed.tensor import DTensor

    def wrap(layer):
        fully_shard(layer, mesh=ctx.mesh)
        check(isinstance(layer.weight, DTensor) and
              layer.weight.to_local().shape[0] == s.n // WORLD,
              "FSDP2: the parameter is a DTensor of one shard per rank "
              "between steps")
        return layer
    data_parallel(s, ctx, wrap, "FSDP2")


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


def tensor_parallel(s, ctx, mode, recipe, how, reduce=True):
    label = f"TP {mode} ({how}, {recipe} recipe" + \
        ("" if reduce else ", NO amax reduction") + ")"
    span, slices = split_slices(s, mode)
    if how == "DTensor":
        from torch.distributed.tensor.parallel import (
            ColwiseParallel, RowwiseParallel, parallelize_module)
        layer = s.layer(recipe)
        parallelize_module(layer, ctx.mesh, ColwiseParallel()
                           if mode == "column" else RowwiseParallel())
    elif mode == "column":
        layer = s.layer(recipe, n=s.n // WORLD, weight=s.w[span],
                        parallel="column", process_group=ctx.group)
    else:
        layer = s.layer(recipe, k=s.k // WORLD, weight=s.w[:, span],
                        parallel="row", process_group=ctx.group)
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
            dist.all_reduce(dx, group=ctx.group)  # partial sums of dY W
        else:
            dist.all_reduce(y, group=ctx.group)   # partial sums of X W^T
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


def sections():
    """(name, function, arguments) of every section, in order."""
    out = [(f"single process {recipe}", library, (recipe,))
           for recipe in ("rn", "full")]
    out += [("DDP", ddp, ()), ("FSDP2", fsdp2, ())]
    for mode in ("column", "row"):
        for recipe in ("rn", "full"):
            out.append((f"TP {mode} DTensor {recipe}", tensor_parallel,
                        (mode, recipe, "DTensor")))
        out.append((f"TP {mode} explicit", tensor_parallel,
                    (mode, "rn", "explicit")))
        out.append((f"TP {mode} without reduction", tensor_parallel,
                    (mode, "rn", "DTensor", False)))
    return out


def layer_shapes(meta):
    """(recipe, tokens, in, out) of every layer the sections run (theirs
    and the single-process references'), from the sections' splits."""
    case = meta["case"]
    t, k, n, p = case["tokens"], case["in"], case["out"], case["ranks"]
    shapes = set()
    for _, function, args in sections():
        if function is library:
            shapes.add((args[0], t, k, n))
        elif function is tensor_parallel:
            mode, recipe = args[0], args[1]
            shapes.add((recipe, t, k, n))  # the reference
            shapes.add((recipe, t, k, n // p) if mode == "column" else
                       (recipe, t, k // p, n))
        else:  # data parallel: each rank (and its reference) half the tokens
            shapes.add(("full", t // p, k, n))
    return sorted(shapes)


def check_kit():
    """Here, before the kit travels: the device side's imports work without
    nvfp4's numerics extension, and every bundle the sections launch is in
    the kit's cache (found without a compiler, as on the GPU machine)."""
    import nvfp4
    from nvfp4 import layer_kernels as lk
    problems = []
    if "nvfp4._nvfp4" in sys.modules:
        problems.append(f"nvfp4._nvfp4 was loaded (from {nvfp4.__file__}): "
                        f"the check must run without the extension")
    with open(os.path.join(KIT, "meta.json")) as f:
        meta = json.load(f)
    cache = lk.KernelCache(os.path.join(KIT, "cache"))
    shapes = layer_shapes(meta)
    for recipe, t, k, n in shapes:
        options = lk.RecipeOptions(stochastic_rounding=(recipe == "full"))
        try:
            lk.compile_layer(lk.LayerShape(t, k, n), options, meta["chip"],
                             cache)
        except lk.CompilerUnavailable as e:
            problems.append(str(e))
    if cache.compiles:
        problems.append(f"{cache.compiles} bundles were compiled: the check "
                        f"must run without the compiler (NVFP4_TOOLS_DIR)")
    for problem in problems:
        print(f"torch_dist.py --check-kit: {problem}", file=sys.stderr)
    return 1 if problems else 0


class Context:
    """A section's process group (its own, so that a section whose ranks
    fail apart cannot leave collectives that the next section's would pair
    with) and a device mesh over it."""

    def __init__(self, backend):
        self.backend = backend
        self.group = dist.new_group(
            backend=backend,
            timeout=datetime.timedelta(seconds=SECTION_TIMEOUT))
        from torch.distributed.device_mesh import DeviceMesh
        if hasattr(DeviceMesh, "from_group"):
            # The mesh's collectives run in this group (init_device_mesh
            # would reuse or create a world group of its choice).
            self.mesh = DeviceMesh.from_group(self.group, "cuda")
        else:
            from torch.distributed.device_mesh import init_device_mesh
            self.mesh = init_device_mesh("cuda", (WORLD,))


def cuda_error():
    """None while the CUDA context works; else the error (a kernel fault
    poisons the context for the rest of the process)."""
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return None
    except Exception as e:  # noqa: BLE001 (any error says the same)
        return f"{type(e).__name__}: {e}"


def note_progress(line):
    """For run_dist_suite.sh (NVFP4_DIST_PROGRESS): which section a run
    that died (a rank's crash, a timeout) stopped in, so that it can run
    the sections after it again in fresh processes."""
    path = os.environ.get("NVFP4_DIST_PROGRESS")
    if path and RANK == 0:
        with open(path, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


def run_section(s, backend, name, function, args):
    try:
        ctx = Context(backend)
        function(s, ctx, *args)
        torch.cuda.synchronize()
    except Exception as e:  # one device call: report, run the rest
        print(f"[rank {RANK}] {name}: traceback", file=sys.stderr,
              flush=True)
        traceback.print_exc()
        check(False, f"{name}: {type(e).__name__}: {e}")


def main():
    if "--check-kit" in sys.argv[1:]:
        return check_kit()
    with open(os.path.join(KIT, "meta.json")) as f:
        meta = json.load(f)
    if WORLD != meta["case"]["ranks"]:
        print(f"torch_dist.py: run with {meta['case']['ranks']} ranks "
              f"(torchrun --nproc_per_node={meta['case']['ranks']}), not "
              f"{WORLD}")
        return 2
    chosen = sections()
    wanted = [w.strip() for w in
              os.environ.get("NVFP4_DIST_SECTIONS", "").split(",")
              if w.strip()]
    if wanted:  # a rerun of some sections: names or their beginnings
        chosen = [c for c in chosen
                  if any(c[0].lower().startswith(w.lower()) for w in wanted)]
        if not chosen:
            print(f"torch_dist.py: NVFP4_DIST_SECTIONS={','.join(wanted)} "
                  f"names no section of: "
                  f"{', '.join(c[0] for c in sections())}")
            return 2
    backend = os.environ.get("NVFP4_DIST_BACKEND") or (
        "nccl" if torch.cuda.device_count() >= WORLD else "gloo")
    local = int(os.environ.get("LOCAL_RANK", RANK))
    device = torch.device("cuda", local if backend == "nccl" else 0)
    torch.cuda.set_device(device)
    dist.init_process_group(
        backend, timeout=datetime.timedelta(seconds=SECTION_TIMEOUT))
    # Bookkeeping between sections (CPU tensors, whatever the backend).
    status = dist.new_group(backend="gloo",
                            timeout=datetime.timedelta(seconds=STATUS_TIMEOUT))
    if RANK == 0:
        print(f"{torch.cuda.get_device_name(device)}, PyTorch "
              f"{torch.__version__}, {WORLD} ranks, backend {backend}"
              + ("" if backend == "nccl" else
                 f" (all ranks on cuda:{device.index})"), flush=True)
    s = Setup(meta, device)
    summary = []
    note_progress("order " + ",".join(c[0] for c in chosen))
    for index, (name, function, args) in enumerate(chosen):
        if RANK == 0:
            print(f"== {name}", flush=True)
        note_progress(f"start {name}")
        before = (passes[0], len(failures))
        run_section(s, backend, name, function, args)
        broken = cuda_error()
        rest = [c[0] for c in chosen[index + 1:]]
        if broken and rest:
            check(False, f"{name}: the CUDA context is unusable after it "
                         f"({broken}); not run in this process: "
                         f"{', '.join(rest)} (run_dist_suite.sh runs them "
                         f"in fresh processes)")
        mine = (passes[0] - before[0], len(failures) - before[1])
        counts = [None] * WORLD
        dist.all_gather_object(counts, (mine, bool(broken)), group=status)
        summary.append((name, counts))
        if any(b for _, b in counts):
            break
    else:
        note_progress("finished")
    totals = [None] * WORLD
    dist.all_gather_object(totals, len(failures), group=status)
    dist.destroy_process_group()
    if RANK == 0:
        print("== summary (checks passed on rank 0 / failed per rank)")
        for name, counts in summary:
            failed = [c[0][1] for c in counts]
            print(f"{'FAIL' if any(failed) else 'ok  '} {name}: "
                  f"{counts[0][0][0]} passed, failed per rank {failed}")
        skipped = [c[0] for c in chosen[len(summary):]]
        if skipped:
            print(f"FAIL not run: {', '.join(skipped)}")
        total = sum(totals)
        print(f"torch_dist: {total} failed (per rank {totals})" if total
              else f"torch_dist: all checks passed on {WORLD} ranks")
    return 1 if any(totals) else 0


if __name__ == "__main__":
    sys.exit(main())
