#!/usr/bin/env python3
"""nvfp4.torch.Linear forward and backward on the GPU (the kit of
make_torch_case.py; needs PyTorch with CUDA, numpy, and this tree's
python/ and runtime/python/ on the path -- run_torch_suite.sh sets them).

1. Correctness (512 tokens, 768 -> 1024, full recipe): Y, dX and dW of the
   layer within 8e-3 max-norm relative error of the float64 model of the
   recipe, and every quantized operand the kernels wrote (codes, scales,
   amax of X, W, dY, W^T, H dY^T, H X^T, read from the launches'
   workspaces) byte-identical to the numerics library's. Also: gradient
   accumulation (two backward passes add up in .grad), torch.autocast with
   FP32 master weights, torch.compile with the layer as an opaque custom op
   (same bytes as eager), and no synchronization in a step.
2. Timing: one training step of the layer (forward + backward, 2048 tokens,
   4096 x 4096, bias-free) against the same three GEMMs in BF16 (cuBLAS
   through torch.matmul), CUDA events, median of 20.

Exit status 0 when every check passes.
"""
import json
import os
import sys
import time

import numpy as np
import torch

import nvfp4.torch as nt

KIT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "torch_kit")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def bf16(bits, device):
    return torch.from_numpy(np.ascontiguousarray(bits).view(np.int16)).view(
        torch.bfloat16).to(device)


def section(name, function, *args):
    """Runs one part; an exception is a failure with its message, and the
    other parts still run."""
    try:
        function(*args)
    except Exception as e:  # report and go on: one GPU run, all answers
        import traceback
        traceback.print_exc()
        check(False, f"{name}: {type(e).__name__}: {e}")


def rel_error(got, want):
    got = got.detach().float().cpu().numpy().astype(np.float64)
    want = want.astype(np.float64)
    if not np.isfinite(got).all():
        return float("inf")
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def workspace_operands(layer, phase):
    """{part: bytes} of each quantization of `phase`, in launch order:
    (amax, codes, scales) buffers of every quantize kernel."""
    workspace, kernels = layer.last_workspaces[phase]
    manifest = kernels.manifest(phase)
    launcher = kernels.launchers[phase]
    raw = workspace.cpu().numpy()
    found = []
    for kernel in manifest["kernels"]:
        if "quantize" not in kernel["name"]:
            continue
        parts = {}
        for part, param in (("amax", 1), ("codes", 2), ("scales", 3)):
            buffer = kernel["params"][param]["buffer"]
            spec = manifest["buffers"][buffer]
            size = spec["elements"] * (4 if spec["element_type"] in
                                       ("i32", "f32") else 1)
            offset = launcher.workspace_offset(buffer)
            parts[part] = raw[offset:offset + size]
        found.append((kernel["name"], parts))
    return found


def correctness(meta, data, device):
    case = meta["case"]
    recipe = nt.Recipe(cache_dir=os.path.join(KIT, "cache"))
    layer = nt.Linear(case["in"], case["out"], bias=False, recipe=recipe,
                      device=device)
    with torch.no_grad():
        layer.weight.copy_(bf16(data["w"], device))
    layer.keep_workspaces = True
    layer._next_seed = lambda: case["seed"]
    x = bf16(data["x"], device).requires_grad_()
    dy = bf16(data["dy"], device)

    y = layer(x)
    y.backward(dy)
    torch.cuda.synchronize()
    tolerance = meta["tolerance"]
    for name, got, want in (("Y", y, data["y_ref"]),
                            ("dX", x.grad, data["dx_ref"]),
                            ("dW", layer.weight.grad, data["dw_ref"])):
        error = rel_error(got, want)
        check(error <= tolerance, f"{name} within {tolerance} of the float64 "
                                  f"model of the recipe (max-norm relative "
                                  f"error {error:.2e})")
    for phase in ("forward", "backward"):
        found = workspace_operands(layer, phase)
        names = meta["operands"][phase]
        check(len(found) == len(names), f"{phase}: {len(found)} "
                                        f"quantizations, {len(names)} "
                                        f"expected")
        for operand, (kernel, parts) in zip(names, found):
            for part, got in parts.items():
                want = data[f"q_{operand}_{part}"].view(np.uint8)
                same = got.shape == want.shape and np.array_equal(got, want)
                detail = "" if same else (
                    f" ({int(np.count_nonzero(got != want))} of {want.size} "
                    f"bytes differ)" if got.shape == want.shape else
                    f" ({got.size} bytes, {want.size} expected)")
                check(same, f"{phase} {operand} {part} ({kernel}) identical "
                            f"to the numerics library{detail}")

    # Gradient accumulation: a second backward of the same step adds the
    # same gradient (same seed) to .grad.
    first_dw = layer.weight.grad.clone()
    first_dx = x.grad.clone()
    layer(x).backward(dy)
    torch.cuda.synchronize()
    check(torch.equal(layer.weight.grad, 2 * first_dw) and
          torch.equal(x.grad, 2 * first_dx),
          "gradient accumulation: a second backward (same seed) adds the "
          "same dW and dX to .grad")

    # Autocast with FP32 master weights: the layer casts to BF16 itself and
    # the gradient reaches the FP32 parameter.
    def autocast_master():
        master = nt.Linear(case["in"], case["out"], bias=True, recipe=recipe,
                           device=device, dtype=torch.float32)
        with torch.no_grad():
            master.weight.copy_(bf16(data["w"], device).float())
            master.bias.zero_()
        master._next_seed = lambda: case["seed"]
        x32 = bf16(data["x"], device).float()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y32 = master(x32)
        y32.backward(dy)
        torch.cuda.synchronize()
        check(y32.dtype == torch.bfloat16 and torch.equal(y32, y.detach()),
              "autocast: FP32 master weights give the same BF16 output")
        check(master.weight.grad.dtype == torch.float32 and
              rel_error(master.weight.grad, data["dw_ref"]) <= tolerance,
              "autocast: the FP32 weight gets the NVFP4 gradient")

    section("autocast", autocast_master)

    # torch.compile: the layer stays one opaque op per direction.
    def compiled_step():
        compiled = torch.compile(layer, fullgraph=True)
        x2 = x.detach().clone().requires_grad_()
        layer.weight.grad = None
        y2 = compiled(x2)
        y2.backward(dy)
        torch.cuda.synchronize()
        check(torch.equal(y2, y.detach()),
              "torch.compile(fullgraph=True): the same output bytes")
        check(rel_error(layer.weight.grad, data["dw_ref"]) <= tolerance,
              "torch.compile: the same gradient")

    if os.environ.get("TORCH_LINEAR_SKIP_COMPILE"):
        print("skip torch.compile (TORCH_LINEAR_SKIP_COMPILE)")
    elif nt._custom_ops:
        section("torch.compile", compiled_step)
    else:
        print("skip torch.compile (this PyTorch has no torch.library."
              "custom_op)")

    # No host synchronization in a step: time to enqueue vs. to run.
    layer.keep_workspaces = False
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(5):
        layer(x).backward(dy)
    enqueued = time.perf_counter() - start
    torch.cuda.synchronize()
    print(f"     5 steps enqueued in {enqueued * 1e3:.2f} ms, done after "
          f"{(time.perf_counter() - start) * 1e3:.2f} ms")


def timing(meta, device):
    shape = meta["timing"]
    t, k, n = shape["tokens"], shape["in"], shape["out"]
    recipe = nt.Recipe(cache_dir=os.path.join(KIT, "cache"))
    layer = nt.Linear(k, n, bias=False, recipe=recipe, device=device)
    torch.manual_seed(0)
    x = torch.randn(t, k, device=device, dtype=torch.bfloat16)
    dy = torch.randn(t, n, device=device, dtype=torch.bfloat16) * 1e-2
    w = layer.weight.detach()
    xg = x.clone().requires_grad_()

    def nvfp4_step():
        y = layer(xg)
        y.backward(dy)

    def bf16_step():
        torch.matmul(x, w.t())
        torch.matmul(dy, w)
        torch.matmul(dy.t(), x)

    kernels = layer._kernels_for(t, x.device)

    def kernels_only():
        wt = w.t().contiguous()
        dyt, xt = dy.t().contiguous(), x.t().contiguous()
        y = torch.empty(t, n, device=device, dtype=torch.bfloat16)
        dx, dw = torch.empty_like(x), torch.empty_like(w)
        stream = torch.cuda.current_stream().cuda_stream
        kernels.forward(x, w, y, stream, ws_f)
        kernels.backward(dy, wt, dyt, xt, 1, dx, dw, stream, ws_b)

    ws_f = torch.empty(kernels.workspace_bytes("forward"), dtype=torch.uint8,
                       device=device)
    ws_b = torch.empty(kernels.workspace_bytes("backward"), dtype=torch.uint8,
                       device=device)

    def median_ms(fn, repeat=20):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            start, stop = torch.cuda.Event(True), torch.cuda.Event(True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return float(np.median(times))

    ms = {"nvfp4.torch.Linear step": median_ms(nvfp4_step),
          "its kernels (15 launches + 3 transposes)": median_ms(kernels_only),
          "BF16 cuBLAS (3 GEMMs)": median_ms(bf16_step)}
    base = ms["BF16 cuBLAS (3 GEMMs)"]
    print(f"timing: one layer step, {t} tokens, {k} x {n}, on "
          f"{torch.cuda.get_device_name()}:")
    for name, value in ms.items():
        print(f"     {name:42s} {value:8.3f} ms  {value / base:5.2f}x BF16")
    with torch.no_grad():
        y = layer(x)
        error = float((y.float() - x.float() @ w.float().t()).abs().max() /
                      (x.float() @ w.float().t()).abs().max())
    print(f"     fprop vs the unquantized product: max-norm relative "
          f"difference {error:.3f} (NVFP4 quantization)")
    check(np.isfinite(error) and error < 0.5,
          "timing case: the output is the product, up to quantization")


def main():
    if not torch.cuda.is_available():
        print("torch_linear.py: no CUDA device")
        return 1
    with open(os.path.join(KIT, "meta.json")) as f:
        meta = json.load(f)
    data = np.load(os.path.join(KIT, "data.npz"))
    device = torch.device("cuda", 0)
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}")
    section("correctness", correctness, meta, data, device)
    if not os.environ.get("TORCH_LINEAR_SKIP_TIMING"):
        section("timing", timing, meta, device)
    print(f"torch_linear: {len(failures)} failed" if failures else
          "torch_linear: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
