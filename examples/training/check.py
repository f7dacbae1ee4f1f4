#!/usr/bin/env python3
"""Bug or behaviour? The checks behind the NVFP4 arms' gap to BF16
(RESULTS.md), in one GPU run of about two minutes, on the kit of
run_training.sh:

layer   nvfp4.torch.Linear at the training shapes (32768 tokens; 512 ->
        512, 1536, 2048 and 2048 -> 512) for every recipe of the arms:
        each operand the kernels quantized (read from the launch's
        workspace) against reference.py -- round-to-nearest operands byte
        for byte; stochastically rounded ones: amax and scales byte for
        byte, every code one of the two E2M1 neighbours with the input's
        sign, rounding up as often as 8 random bits per element make it
        (|z| < 6) -- and Y, dX, dW within 8e-3 (max-norm relative) of the
        float64 products of the quantized operands.
mx      nvfp4.torch.Linear(format="mxfp8" / "mxfp4", and MXFP8 with E5M2
        gradients) at the training shapes: each operand in the format the
        recipe gives it, its codes and E8M0 scales byte for byte
        against reference.py's mx_quantize, the BF16 operands the sm_90a
        GEMM decodes them into bit for bit against the exact values, and Y,
        dX, dW within 8e-3 of the float64 products of the quantized
        operands (docs/Numerics.md 11.7: the decode is exact, only the
        FP32 summation order differs).
shared  one layer per shape, called as training does (every forward, then
        the backwards in reverse) three times with fresh tensors through
        the shared workspace: the same bytes as each layer alone with a
        private workspace.
update  the backward's W^T after fused AdamW steps and after a .data
        write is the weight of the step's forward; whether fused AdamW
        bumps the parameter's version counter (the key of the W^T cache
        that nvfp4.torch had until this check's commit).
host    where a layer step's host time goes (512 -> 2048).
model   the run's GPT: per-layer cosine of the NVFP4 weight gradients with
        BF16's on one batch, at initialization and after 150 and 450 BF16
        steps, with NVFP4 in both passes, only in the forward, only in the
        backward; for scale, BF16's gradients of two batches, and NVFP4's
        of two stochastic-rounding seeds.
train   450 steps of the nvfp4 arm against BF16's (the run's schedule of
        995 steps): validation loss at 150, 300 and 450 steps; and the same
        with W^T frozen at the first step (what the cache gave when fused
        AdamW leaves the version counter alone). The run had nvfp4 2.2994
        vs bf16 2.0005 at step 298 and 2.0573 vs 1.2401 at 398.

    python3 examples/training/check.py --kit examples/training/kit --out DIR

Prints a line per check and a verdict; writes DIR/check.json. Exit status
0 when the layer, shared and update checks pass.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import train  # noqa: E402  (puts this tree's python/ on the path)
import reference as ref  # noqa: E402

TOLERANCE = 8e-3
RECIPES = {"nvfp4": {}, "no_sr": {"stochastic_rounding": False},
           "no_rht": {"rht": False}, "no_2d": {"weight_2d": False}}
RESULTS = {}
FAILURES = []


def say(text):
    print(text, flush=True)


def check(ok, what, quiet=False):
    """Prints `what` (only a failure when quiet) and records a failure."""
    if not ok or not quiet:
        say(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)
    return ok


def section(name, function, *args):
    """Runs one part; an exception fails it with its message and the other
    parts still run (one GPU call answers everything)."""
    start = time.monotonic()
    say(f"== {name}")
    try:
        RESULTS[name] = function(*args)
    except Exception as e:
        traceback.print_exc()
        check(False, f"{name}: {type(e).__name__}: {e}")
        RESULTS[name] = {"error": f"{type(e).__name__}: {e}"}
    say(f"   ({time.monotonic() - start:.1f} s)")


# -- the layer at the training shapes ---------------------------------------

def e4m3_values(bits):
    import torch
    b = bits.long()
    exponent, mantissa = (b >> 3) & 15, (b & 7).double()
    return torch.where(exponent == 0, mantissa / 8 * 2.0 ** -6,
                       (1 + mantissa / 8) * torch.pow(
                           2.0, (exponent - 7).double())).float()


def workspace_operands(layer, phase):
    """[(kernel, argument, block, sr, rht, {amax, codes, scales})] of each
    quantize launch of `phase`, read from its private workspace."""
    workspace, kernels = layer.last_workspaces[phase]
    manifest = kernels.manifest(phase)
    launcher = kernels.launchers[phase]
    found = []
    for kernel in manifest["kernels"]:
        name = kernel["name"]
        if "quantize" not in name:
            continue
        params = kernel["params"]
        source = manifest["buffers"][params[0]["buffer"]]
        parts = {}
        for part, index in (("amax", 1), ("codes", 2), ("scales", 3)):
            buffer = params[index]["buffer"]
            spec = manifest["buffers"][buffer]
            size = spec["elements"] * (4 if spec["element_type"] in
                                       ("i32", "f32") else 1)
            offset = launcher.workspace_offset(buffer)
            parts[part] = workspace[offset:offset + size]
        found.append((name, source["argument"],
                      (16, 16) if "_16x16" in name else (1, 16),
                      "_sr" in name, "rht" in name, parts))
    return found


def amax_of(raw):
    return float(raw.cpu().numpy().view(np.float32)[0])


def operand_check(label, source, block, sr, parts):
    """Checks one quantized operand (prints only a failure); returns its
    float64 dequantization from the kernels' own bytes, whether it passed
    and the SR statistic (None for RN)."""
    import torch
    want = ref.quantize(source, block)
    rows, cols = source.shape
    amax = amax_of(parts["amax"])
    ok_amax = np.float32(amax).tobytes() == np.float32(want["amax"]).tobytes()
    scales = parts["scales"]
    ok_scales = torch.equal(scales.reshape(-1), want["scales"].reshape(-1))
    codes = ref.unpack(parts["codes"].reshape(rows, cols // 2))
    detail, z = "", None
    if not sr:
        different = int((codes != want["codes"]).sum())
        ok_codes = different == 0
        detail = "" if ok_codes else f", {different} codes differ"
    else:
        low, high, p_up = ref.sr_neighbours(want["scaled"])
        table = torch.tensor(ref.E2M1, dtype=torch.float64,
                             device=codes.device)
        magnitude = table[codes.long() & 7]
        neighbour = bool(((magnitude == low) | (magnitude == high)).all())
        sign = bool(torch.equal((codes >> 3).bool(),
                                torch.signbit(want["scaled"])))
        up = ((magnitude == high) & (high != low)).double()
        z = float((up - p_up).sum() / (p_up * (1 - p_up)).sum().clamp(
            min=1e-30).sqrt())
        ok_codes = neighbour and sign and abs(z) < 6
        detail = f", SR z = {z:+.2f}" + ("" if neighbour else
                                          ", codes not neighbours") + \
            ("" if sign else ", signs differ")
    codes_word = ("=" if not sr else "valid") if ok_codes else "WRONG"
    ok = check(ok_amax and ok_scales and ok_codes,
               f"{label}: amax {'=' if ok_amax else '!='}, scales "
               f"{'=' if ok_scales else '!='}, codes {codes_word}{detail}",
               quiet=True)
    values = e4m3_values(scales.reshape(want["scales"].shape))
    return ref.dequantize(codes, values, amax, block), ok, z


def rel_error(got, want):
    import torch
    got = got.double()
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    return float((got - want).abs().max() / want.abs().max().clamp(
        min=1e-300))


def make_inputs(tokens, k, n, device, seed):
    """Activations with outlier columns, small weights, gradients whose
    rows differ in scale (every block scale and the RHT's spreading
    matter), in BF16."""
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(tokens, k, device=device, generator=g)
    columns = torch.randperm(k, device=device, generator=g)[:8]
    x[:, columns] *= 20.0
    w = torch.randn(n, k, device=device, generator=g) * 0.02
    dy = torch.randn(tokens, n, device=device, generator=g) * torch.exp(
        torch.randn(tokens, 1, device=device, generator=g)) * 1e-5
    return x.bfloat16(), w.bfloat16(), dy.bfloat16()


def sync(device):
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


LABELS = {"forward": {0: "X", 1: "W"},
          "backward": {0: "dY", 1: "W^T", 2: "dY^T", 3: "X^T"}}


def verify_layer(label, layer, x, w, dy, y, dx, dw):
    """The operand and GEMM checks of one forward + backward of `layer`
    (kept workspaces) on x, w, dy with outputs y, dx, dw."""
    sources = {"forward": {0: x, 1: w},
               "backward": {0: dy, 1: w.t().contiguous(),
                            2: dy.t().contiguous(), 3: x.t().contiguous()}}
    dequantized, operands_ok, zs = {}, True, []
    for phase in ("forward", "backward"):
        for name, argument, block, sr, rht, parts in workspace_operands(
                layer, phase):
            source = sources[phase][argument]
            if rht:
                source = ref.hadamard(source)
            what = ("H " if rht else "") + LABELS[phase][argument]
            dequantized[LABELS[phase][argument]], ok, z = operand_check(
                f"{label} {what:6s} {block[0]}x{block[1]}"
                f"{' SR' if sr else ''}", source, block, sr, parts)
            operands_ok &= ok
            if z is not None:
                zs.append(z)
    if sorted(dequantized) != sorted(["X", "W", "dY", "W^T", "dY^T",
                                      "X^T"]):
        check(False, f"{label}: quantized operands {sorted(dequantized)}")
        return {"operands_ok": False, "gemm_ok": False}
    errors = {}
    d = dequantized
    for what, got, want in (
            ("Y", y, lambda: d["X"] @ d["W"].t()),
            ("dX", dx, lambda: d["dY"] @ d["W^T"].t()),
            ("dW", dw, lambda: d["dY^T"] @ d["X^T"].t())):
        errors[what] = rel_error(got, want())
    gemm_ok = all(e <= TOLERANCE for e in errors.values())
    check(gemm_ok and operands_ok,
          f"{label}: {len(dequantized)} operands "
          f"{'as the reference' if operands_ok else 'WRONG'}"
          + (f" (SR z {', '.join(f'{z:+.1f}' for z in zs)})" if zs else "")
          + "; GEMMs vs float64 of them: "
          + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    # For scale: how far NVFP4 is from the unquantized product.
    quantization = rel_error(y, x.double() @ w.double().t())
    return {"operands_ok": operands_ok, "gemm_ok": gemm_ok,
            "errors": errors, "sr_z": zs,
            "fprop_vs_unquantized": quantization}


def layer_case(recipe_name, k, n, tokens, device, cache_dir, seed):
    import torch
    import nvfp4.torch as nt
    recipe = nt.Recipe(cache_dir=cache_dir, **RECIPES[recipe_name])
    layer = nt.Linear(k, n, bias=False, recipe=recipe, device=device)
    x, w, dy = make_inputs(tokens, k, n, device, seed)
    with torch.no_grad():
        layer.weight.copy_(w)
    layer.keep_workspaces = True
    layer._next_seed = lambda: 0x243F6A8885A308D3 + seed
    xg = x.clone().requires_grad_()
    y = layer(xg)
    y.backward(dy)
    sync(device)
    result = verify_layer(f"{recipe_name:6s} {tokens}x{k}->{n}", layer, x, w,
                          dy, y.detach(), xg.grad, layer.weight.grad)
    layer.last_workspaces = {}
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


# (layer format, E5M2 gradients) of the MX layer checks: MXFP8, its HYBRID
# form (dY and dY^T in E5M2), MXFP4.
MX_FORMATS = (("mxfp8", False), ("mxfp8", True), ("mxfp4", False))


def mx_operand_format(kernel_name):
    """reference.py's name of the MX format a quantize kernel writes."""
    for tag, name in (("_mxfp8_e5m2_", "mxfp8_e5m2"),
                      ("_mxfp8_e4m3_", "mxfp8"), ("_mxfp4_", "mxfp4")):
        if tag in kernel_name:
            return name
    raise ValueError(f"{kernel_name}: not an MX quantize kernel")


def mx_workspace_operands(layer, phase):
    """[(argument, format, {codes, scales, decoded})] of each MX quantize
    launch of `phase` (the host-function argument it reads, the format it
    writes), with the BF16 operand a dequantize launch decodes its codes
    into, read from the launch's private workspace."""
    workspace, kernels = layer.last_workspaces[phase]
    manifest = kernels.manifest(phase)
    launcher = kernels.launchers[phase]
    sizes = {"i32": 4, "f32": 4, "bf16": 2}

    def raw(buffer):
        spec = manifest["buffers"][buffer]
        size = spec["elements"] * sizes.get(spec["element_type"], 1)
        offset = launcher.workspace_offset(buffer)
        return workspace[offset:offset + size]

    decoded = {}
    for kernel in manifest["kernels"]:
        if "nvfp4_dequantize_" in kernel["name"]:
            params = kernel["params"]
            decoded[params[0]["buffer"]] = params[2]["buffer"]
    found = []
    for kernel in manifest["kernels"]:
        if "nvfp4_quantize_" not in kernel["name"]:
            continue
        params = kernel["params"]
        codes, scales = params[1]["buffer"], params[2]["buffer"]
        parts = {"codes": raw(codes), "scales": raw(scales)}
        if codes in decoded:
            parts["decoded"] = raw(decoded[codes])
        argument = manifest["buffers"][params[0]["buffer"]]["argument"]
        found.append((argument, mx_operand_format(kernel["name"]), parts))
    return found


def mx_operand_check(label, source, layer_format, parts):
    """One MX operand against reference.py (prints only a failure);
    returns its float64 dequantization from the kernels' bytes and whether
    it passed."""
    import torch
    want = ref.mx_quantize(source, layer_format)
    rows, cols = source.shape
    if layer_format == "mxfp4":
        codes = ref.unpack(parts["codes"].reshape(rows, cols // 2))
    else:
        codes = parts["codes"].reshape(rows, cols)
    scales = parts["scales"].reshape(rows, cols // 32)
    ok_codes = torch.equal(codes, want["codes"])
    ok_scales = torch.equal(scales, want["scales"])
    values = ref.mx_dequantize(codes, scales, layer_format)
    ok_decoded = "decoded" in parts and torch.equal(
        parts["decoded"].view(torch.int16).reshape(rows, cols),
        values.to(torch.bfloat16).view(torch.int16))
    detail = "" if ok_codes else \
        f", {int((codes != want['codes']).sum())} codes differ"
    check(ok_codes and ok_scales and ok_decoded,
          f"{label}: codes {'=' if ok_codes else '!='}, scales "
          f"{'=' if ok_scales else '!='}, BF16 decode "
          f"{'exact' if ok_decoded else 'WRONG or missing'}{detail}",
          quiet=True)
    return values, ok_codes and ok_scales and ok_decoded


def mx_layer_case(layer_format, hybrid, k, n, tokens, device, cache_dir,
                  seed):
    import torch
    import nvfp4.torch as nt
    recipe = nt.Recipe(cache_dir=cache_dir,
                       mxfp8_gradients="e5m2" if hybrid else "e4m3")
    layer = nt.Linear(k, n, bias=False, recipe=recipe, device=device,
                      format=layer_format)
    x, w, dy = make_inputs(tokens, k, n, device, seed)
    with torch.no_grad():
        layer.weight.copy_(w)
    layer.keep_workspaces = True
    xg = x.clone().requires_grad_()
    y = layer(xg)
    y.backward(dy)
    sync(device)
    label = f"{layer_format}{'_hybrid' if hybrid else ''} {tokens}x{k}->{n}"
    gradient = "mxfp8_e5m2" if hybrid else layer_format
    expected = {"X": layer_format, "W": layer_format, "W^T": layer_format,
                "X^T": layer_format, "dY": gradient, "dY^T": gradient}
    sources = {"forward": {0: x, 1: w},
               "backward": {0: dy, 1: w.t().contiguous(),
                            2: dy.t().contiguous(), 3: x.t().contiguous()}}
    d, operands_ok = {}, True
    for phase in ("forward", "backward"):
        for argument, operand_format, parts in mx_workspace_operands(layer,
                                                                     phase):
            what = LABELS[phase][argument]
            ok = check(operand_format == expected[what],
                       f"{label} {what}: quantized to {operand_format}, "
                       f"expected {expected[what]}", quiet=True)
            d[what], ok_bytes = mx_operand_check(f"{label} {what:4s}",
                                                 sources[phase][argument],
                                                 operand_format, parts)
            operands_ok &= ok and ok_bytes
    layer.last_workspaces = {}
    if sorted(d) != sorted(["X", "W", "dY", "W^T", "dY^T", "X^T"]):
        check(False, f"{label}: quantized operands {sorted(d)}")
        return {"operands_ok": False, "gemm_ok": False}
    errors = {"Y": rel_error(y.detach(), d["X"] @ d["W"].t()),
              "dX": rel_error(xg.grad, d["dY"] @ d["W^T"].t()),
              "dW": rel_error(layer.weight.grad, d["dY^T"] @ d["X^T"].t())}
    gemm_ok = all(e <= TOLERANCE for e in errors.values())
    quantization = rel_error(y.detach(), x.double() @ w.double().t())
    check(gemm_ok and operands_ok,
          f"{label}: 6 operands {'as the reference' if operands_ok else 'WRONG'}"
          f"; GEMMs vs float64 of them: "
          + ", ".join(f"{key} {v:.1e}" for key, v in errors.items())
          + f"; fprop vs unquantized {quantization:.3f}")
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return {"operands_ok": operands_ok, "gemm_ok": gemm_ok,
            "errors": errors, "fprop_vs_unquantized": quantization}


def mx_layer_checks(shapes, tokens, device, cache_dir):
    rows = {}
    for layer_format, hybrid in MX_FORMATS:
        for i, (k, n) in enumerate(shapes):
            name = layer_format + ("_hybrid" if hybrid else "")
            rows[f"{name} {k}->{n}"] = mx_layer_case(
                layer_format, hybrid, k, n, tokens, device, cache_dir, 31 + i)
    return rows


def layer_checks(shapes, tokens, device, cache_dir):
    rows = {}
    for recipe_name in RECIPES:
        for i, (k, n) in enumerate(shapes):
            rows[f"{recipe_name} {k}->{n}"] = layer_case(
                recipe_name, k, n, tokens, device, cache_dir, 11 + i)
    return rows


def shared_workspace(shapes, tokens, device, cache_dir):
    """Private workspaces vs the shared one, in training's call order."""
    import torch
    import nvfp4.torch as nt
    recipe = nt.Recipe(cache_dir=cache_dir)
    layers, inputs = [], []
    for i, (k, n) in enumerate(shapes):
        layer = nt.Linear(k, n, bias=False, recipe=recipe, device=device)
        x, w, dy = make_inputs(tokens, k, n, device, 100 + i)
        with torch.no_grad():
            layer.weight.copy_(w)
        layer._next_seed = (lambda s: (lambda: s))(1000 + i)
        layers.append(layer)
        inputs.append((x, dy))

    alive = []  # earlier rounds' tensors: each round gets new addresses

    def step(private):
        outputs = []
        for layer in layers:
            layer.keep_workspaces = private
        for layer, (x, dy) in zip(layers, inputs):
            xg = x.clone().requires_grad_()
            outputs.append([xg, layer(xg)])
        for (x, dy), out in reversed(list(zip(inputs, outputs))):
            out[1].backward(dy.clone())
        sync(device)
        result = [(out[1].detach().clone(), out[0].grad.clone(),
                   layer.weight.grad.clone())
                  for layer, out in zip(layers, outputs)]
        for layer in layers:
            layer.weight.grad = None
            layer.last_workspaces = {}
        alive.append(outputs)
        return result

    expected = step(True)
    nt._workspaces.clear()  # the shared buffer grows during the first round
    same = True
    for _ in range(3):
        got = step(False)
        same &= all(torch.equal(a, b) for g, e in zip(got, expected)
                    for a, b in zip(g, e))
    check(same, "shared workspace: 3 rounds of 4 layers (forwards, then "
                "backwards in reverse, fresh tensors) give the private "
                "workspaces' bytes")
    return {"identical": same}


def weight_updates(tokens, device, cache_dir):
    """W^T of each backward is the weight of its forward, through fused
    AdamW steps and a .data write."""
    import torch
    import nvfp4.torch as nt
    k, n = 512, 2048
    layer = nt.Linear(k, n, bias=False, device=device, dtype=torch.float32,
                      recipe=nt.Recipe(cache_dir=cache_dir))
    layer.keep_workspaces = True
    x, _, dy = make_inputs(tokens, k, n, device, 7)
    fused = {"fused": True} if "fused" in __import__("inspect").signature(
        torch.optim.AdamW).parameters else {}
    optimizer = torch.optim.AdamW([layer.weight], lr=1e-2, **fused)
    bumps, current = [], []
    for step in range(4):
        if step == 3:
            layer.weight.data.mul_(0.5)  # bypasses the version counter
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = layer(x)
        y.backward(dy)
        torch.cuda.synchronize()
        wt = layer.weight.detach().bfloat16().t().contiguous()
        want = ref.quantize(wt, (16, 16))
        for name, argument, block, sr, rht, parts in workspace_operands(
                layer, "backward"):
            if argument == 1:
                codes = ref.unpack(parts["codes"].reshape(k, n // 2))
                current.append(bool(torch.equal(codes, want["codes"])) and
                               bool(torch.equal(parts["scales"].reshape(-1),
                                                want["scales"].reshape(-1))))
        version = layer.weight._version
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        bumps.append(layer.weight._version != version)
    check(all(current) and len(current) == 4,
          f"update: W^T quantized by each backward is the weight of its "
          f"forward ({sum(current)} of 4: at the start, after 1, 2 and 3 "
          f"{'fused ' if fused else ''}AdamW steps, the last with a .data "
          f"write)")
    say(f"     fused AdamW bumps the weight's version counter: "
        f"{'yes' if all(bumps) else 'no'} ({bumps}); the removed W^T cache "
        f"was {'stale' if not all(bumps) else 'current'} in the H200 run")
    return {"current": current, "fused": bool(fused),
            "adamw_bumps_version": bumps}


def host_time(tokens, device, cache_dir):
    """Host time to enqueue one layer step, split into its parts."""
    import torch
    import nvfp4.torch as nt
    k, n = 512, 2048
    layer = nt.Linear(k, n, bias=False, device=device,
                      recipe=nt.Recipe(cache_dir=cache_dir))
    x, w, dy = make_inputs(tokens, k, n, device, 5)
    xg = x.clone().requires_grad_()
    kernels = layer._kernels_for(tokens, x.device)
    ws = {p: torch.empty(kernels.workspace_bytes(p), dtype=torch.uint8,
                         device=device) for p in ("forward", "backward")}
    y = torch.empty(tokens, n, device=device, dtype=torch.bfloat16)
    dx, dw = torch.empty_like(x), torch.empty_like(w)
    wt, dyt, xt = (w.t().contiguous(), dy.t().contiguous(),
                   x.t().contiguous())
    stream = torch.cuda.current_stream().cuda_stream
    fl, bl = kernels.launchers["forward"], kernels.launchers["backward"]

    def full():
        layer(xg).backward(dy)

    def launches():
        kernels.forward(x, w, y, stream, ws["forward"])
        kernels.backward(dy, wt, dyt, xt, 1, dx, dw, stream, ws["backward"])

    def c_only():
        for launcher, phase in ((fl, "forward"), (bl, "backward")):
            # The last launch's addresses and seed are still set.
            launcher._lib.nvfp4rtLauncherLaunch(
                launcher._handle, __import__("ctypes").c_void_p(stream),
                launcher._arguments, len(launcher.arguments),
                launcher._results, len(launcher.results),
                ws[phase].data_ptr())

    def prep():
        layer.weight.t().contiguous(), dy.t().contiguous()
        x.t().contiguous()
        torch.empty_like(x), torch.empty_like(w), torch.empty(
            tokens, n, device=device, dtype=torch.bfloat16)

    result = {}
    for name, fn in (("layer step (forward + backward)", full),
                     ("LayerKernels.forward + backward", launches),
                     ("the C launches alone", c_only),
                     ("transposes + allocations (PyTorch)", prep)):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
        result[name] = float(np.median(times))
        say(f"     host {name:38s} {result[name]:.3f} ms")
    result["tensor_map_cache"] = {p: kernels.launchers[p]
                                  .tensor_map_cache_stats()
                                  for p in ("forward", "backward")}
    result["kernels"] = {p: len(kernels.manifest(p)["kernels"])
                         for p in ("forward", "backward")}
    say(f"     {result['kernels']} kernels; tensor maps "
        f"{result['tensor_map_cache']}")
    return result


# -- the model --------------------------------------------------------------

def model_args(kit):
    args = train.parse_args(["--tokens", str(995 * 32768), "--kit", kit])
    return args


def gradients(model, batch, device):
    model.zero_grad(set_to_none=True)
    x, y = batch
    with train.autocast(device):
        loss = model(x, y)
    loss.backward()
    grads = {name: p.grad.detach().double().reshape(-1).clone()
             for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return grads, float(loss.detach())


def cosine(a, b):
    return float((a @ b) / (a.norm() * b.norm()).clamp(min=1e-300))


class Modes:
    """NVFP4 in both passes (the layer as it is), or only in the forward,
    or only in the backward (the other pass BF16 cuBLAS)."""

    def __init__(self):
        import torch
        import nvfp4.torch as nt
        self.nt = nt
        self.real = nt._nvfp4_linear

        class Mixed(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, layer_id, nvfp4_forward):
                ctx.save_for_backward(x, w)
                ctx.layer_id, ctx.nvfp4_backward = layer_id, \
                    not nvfp4_forward
                if nvfp4_forward:
                    return nt._forward_impl(x, w, layer_id)
                return x @ w.t()

            @staticmethod
            def backward(ctx, dy):
                x, w = ctx.saved_tensors
                if ctx.nvfp4_backward:
                    dx, dw = nt._backward_impl(dy, x, w, ctx.layer_id)
                else:
                    dy = dy.to(torch.bfloat16)
                    dx, dw = dy @ w, dy.t() @ x
                return dx, dw, None, None

        self.mixed = Mixed

    def set(self, mode):
        nt = self.nt
        if mode == "both":
            nt._nvfp4_linear = self.real
        else:
            forward = mode == "forward"
            nt._nvfp4_linear = lambda x, w, i: self.mixed.apply(
                x, w, i, forward)


def model_checks(args, device, batches, bf16_model, nvfp4_model, steps_at,
                 total, eval_every):
    """Gradient cosines at the checkpoints `steps_at` of BF16 training (the
    schedule of `total` steps); returns them and the BF16 arm's validation
    losses every `eval_every` steps."""
    import torch
    import nvfp4.torch as nt
    modes = Modes()
    optimizer = train.make_optimizer(bf16_model, args, device)
    nvfp4_names = {f"{name}.weight" for name, m in
                   nvfp4_model.named_modules() if isinstance(m, nt.Linear)}
    probe = batches.train_batch(1700)
    other = batches.train_batch(1701)
    results, val = {}, {}
    step = 0
    for target in steps_at:
        while step < target:
            lr = train.learning_rate(args, step, total)
            for group in optimizer.param_groups:
                group["lr"] = lr
            x, y = batches.train_batch(step)
            with train.autocast(device):
                loss = bf16_model(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(bf16_model.parameters(),
                                           args.clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % eval_every == 0:
                val[step] = train.evaluate(bf16_model, batches,
                                           args.eval_batches, device)
        nvfp4_model.load_state_dict(bf16_model.state_dict())
        base, loss_b = gradients(bf16_model, probe, device)
        row = {"bf16_loss": loss_b}
        row["bf16_other_batch"] = cosine(
            torch.cat(list(base.values())),
            torch.cat(list(gradients(bf16_model, other, device)[0]
                           .values())))
        for mode in ("both", "forward", "backward"):
            modes.set(mode)
            try:
                got, loss_n = gradients(nvfp4_model, probe, device)
            finally:
                modes.set("both")
            layers = [cosine(got[n], base[n]) for n in sorted(nvfp4_names)]
            others = [cosine(got[n], base[n]) for n in base
                      if n not in nvfp4_names]
            norms = [float(got[n].norm() / base[n].norm().clamp(min=1e-300))
                     for n in sorted(nvfp4_names)]
            row[mode] = {
                "loss": loss_n,
                "all": cosine(torch.cat(list(got.values())),
                              torch.cat(list(base.values()))),
                "nvfp4_layers_median": float(np.median(layers)),
                "nvfp4_layers_min": float(np.min(layers)),
                "other_params_median": float(np.median(others)),
                "other_params_min": float(np.min(others)),
                "norm_ratio_median": float(np.median(norms)),
                "per_layer": dict(zip(sorted(nvfp4_names), layers))}
        # Each backward takes the next SR seed: two more calls, two seeds.
        first, _ = gradients(nvfp4_model, probe, device)
        again, _ = gradients(nvfp4_model, probe, device)
        row["nvfp4_two_seeds"] = cosine(torch.cat(list(again.values())),
                                        torch.cat(list(first.values())))
        results[target] = row
        b = row["both"]
        say(f"     step {target:3d}: loss bf16 {loss_b:.4f} nvfp4 "
            f"{b['loss']:.4f}; cosine with BF16's gradient: all "
            f"{b['all']:.3f}, NVFP4 layers median {b['nvfp4_layers_median']:.3f}"
            f" min {b['nvfp4_layers_min']:.3f}, other params median "
            f"{b['other_params_median']:.3f} min {b['other_params_min']:.3f}, "
            f"|g| ratio {b['norm_ratio_median']:.2f}; forward-only all "
            f"{row['forward']['all']:.3f}, backward-only all "
            f"{row['backward']['all']:.3f}; scale: BF16 other batch "
            f"{row['bf16_other_batch']:.3f}, NVFP4 two SR seeds "
            f"{row['nvfp4_two_seeds']:.3f}")
    return results, val


def nt_layers(model):
    import nvfp4.torch as nt
    return [m for m in model.modules() if isinstance(m, nt.Linear)]


def train_nvfp4(args, device, batches, model, steps, total, eval_every,
                stale=False):
    """`steps` steps of the nvfp4 arm's loop (the schedule of `total`
    steps); {step: val loss} every `eval_every` steps. stale: dgrad's W^T
    stays the first step's (the old cache's behaviour when the optimizer
    leaves the version counter alone)."""
    import torch
    import nvfp4.torch as nt
    optimizer = train.make_optimizer(model, args, device)
    saved = nt._backward_impl
    if stale:
        frozen = {}

        def stale_backward(dy, x, w, layer_id):
            # dgrad takes W^T of the first step; wgrad does not read W.
            frozen.setdefault(layer_id, w.detach().clone())
            return saved(dy, x, frozen[layer_id], layer_id)
        nt._backward_impl = stale_backward
    val = {}
    try:
        for step in range(steps):
            nt.set_progress(model, step / total)
            lr = train.learning_rate(args, step, total)
            for group in optimizer.param_groups:
                group["lr"] = lr
            x, y = batches.train_batch(step)
            with train.autocast(device):
                loss = model(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if (step + 1) % eval_every == 0:
                val[step + 1] = train.evaluate(model, batches,
                                               args.eval_batches, device)
                if not math.isfinite(val[step + 1]):
                    break
    finally:
        nt._backward_impl = saved
    return val


def model_and_training(args, device, cache_dir, steps, stale, total=995):
    """The model and training checks: `steps` steps of the schedule of
    `total` (the run's), gradient checkpoints at 0, steps/3 and steps."""
    import torch
    every = max(1, steps // 3)
    corpus, _ = train.load_corpus(args.data)
    batches = train.Batches(corpus, args.context, args.batch, args.seed,
                            device)
    bf16_model = train.build_model(args, "bf16", device, cache_dir)
    nvfp4_model = train.build_model(args, "nvfp4", device, cache_dir)
    say("   gradients (probe batch 1700; scale: batch 1701, a second seed):")
    cosines, val_bf16 = model_checks(args, device, batches, bf16_model,
                                     nvfp4_model, (0, every, steps), total,
                                     every)
    RESULTS["model"] = {"cosines": cosines}
    del nvfp4_model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    t0 = time.monotonic()
    val_nvfp4 = train_nvfp4(args, device, batches, train.build_model(
        args, "nvfp4", device, cache_dir), steps, total, every)
    say(f"   nvfp4 arm, {steps} steps in {time.monotonic() - t0:.0f} s")
    arms = {"bf16": val_bf16, "nvfp4": val_nvfp4}
    if stale:
        arms["nvfp4_stale_wt"] = train_nvfp4(
            args, device, batches, train.build_model(
                args, "nvfp4", device, cache_dir), steps, total, every,
            stale=True)
    for step in sorted(val_bf16):
        tokens = step * args.batch * args.context
        say(f"     step {step:3d} ({tokens / 1e6:4.1f}M tokens): val "
            + ", ".join(f"{arm} {v.get(step, float('nan')):.4f}"
                        for arm, v in arms.items()))
    return {"cosines": cosines, "val": arms}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kit", default=os.path.join(HERE, "kit"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--steps", type=int, default=450)
    parser.add_argument("--no-stale", action="store_true",
                        help="skip the training with a frozen W^T")
    parser.add_argument("--only",
                        default="layer,mx,shared,update,host,model",
                        help="comma-separated parts")
    options = parser.parse_args()
    import torch
    if not torch.cuda.is_available():
        raise SystemExit("check.py: needs a CUDA GPU")
    device = torch.device("cuda", 0)
    args = model_args(options.kit)
    cache_dir = os.path.join(options.kit, "cache")
    library = os.path.join(options.kit, "lib", "libnvfp4_runtime.so")
    if os.path.isfile(library):
        os.environ.setdefault("NVFP4_RUNTIME_LIBRARY", library)
    train.open_kit(args, device, cache_dir, [a for a in train.ARMS
                                             if a != "bf16"])
    from gpt import GPT
    shapes = GPT(1, args.width, args.heads, 16).linear_shapes()
    tokens = args.batch * args.context
    say(f"check.py: {torch.cuda.get_device_name()}, PyTorch "
        f"{torch.__version__}; {tokens} tokens, shapes {shapes}")
    parts = options.only.split(",")
    start = time.monotonic()
    if "layer" in parts:
        section("layer", layer_checks, shapes, tokens, device, cache_dir)
    if "mx" in parts:
        section("mx", mx_layer_checks, shapes, tokens, device, cache_dir)
    if "shared" in parts:
        section("shared", shared_workspace, shapes, tokens, device,
                cache_dir)
    if "update" in parts:
        section("update", weight_updates, tokens, device, cache_dir)
    if "host" in parts:
        section("host", host_time, tokens, device, cache_dir)
    if "model" in parts:
        section("model", model_and_training, args, device, cache_dir,
                options.steps, not options.no_stale)
    layer = RESULTS.get("layer", {})
    kernels_ok = bool(layer) and "error" not in layer and all(
        r["operands_ok"] and r["gemm_ok"] for r in layer.values())
    mx = RESULTS.get("mx", {})
    mx_ok = bool(mx) and "error" not in mx and all(
        r["operands_ok"] and r["gemm_ok"] for r in mx.values())
    update = RESULTS.get("update", {})
    stale = update.get("adamw_bumps_version")
    verdict = [f"kernels at the training shapes "
               f"{'correct' if kernels_ok else 'WRONG (see FAIL lines)'}"
               if "layer" in parts else "NVFP4 layers unchecked",
               f"MX layers {'correct' if mx_ok else 'WRONG (see FAIL lines)'}"
               if "mx" in parts else "MX layers unchecked",
               "shared workspace " + ("identical" if RESULTS.get(
                   "shared", {}).get("identical") else "DIFFERS or untested"),
               "old W^T cache under fused AdamW: " + (
                   "unknown" if stale is None else "STALE (the bug)"
                   if not all(stale) else "current")]
    val = RESULTS.get("model", {}).get("val", {})
    if val.get("bf16") and val.get("nvfp4"):
        last = max(val["bf16"])
        b, n = val["bf16"][last], val["nvfp4"].get(last, float("nan"))
        verdict.append(f"at step {last}: nvfp4 {n:.4f} vs bf16 {b:.4f} "
                       f"({n - b:+.4f})" + (
                           f", frozen W^T {val['nvfp4_stale_wt'][last]:.4f}"
                           if last in val.get("nvfp4_stale_wt", {}) else ""))
    say("VERDICT: " + "; ".join(verdict) +
        f" ({time.monotonic() - start:.0f} s, {len(FAILURES)} failed)")
    out = options.out or os.path.join(os.environ.get("OUT", os.path.join(
        HERE, "runs")), "training")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "check.json"), "w") as f:
        json.dump({"results": RESULTS, "failures": FAILURES}, f, indent=1,
                  default=str)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
