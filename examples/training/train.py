#!/usr/bin/env python3
"""Trains the byte-level GPT of gpt.py on the Linux C corpus of data/ in
several arms, back to back, with the same initialization, the same data
order and the same stochastic-rounding seeds; only the precision of the
blocks' linear layers differs (examples/training/README.md).

    python3 examples/training/train.py --kit examples/training/kit \\
        --time-budget 420 --out runs/h200      # as many tokens as fit
    python3 examples/training/train.py --tokens 20000000 --arms bf16,nvfp4

Arms: bf16 (nn.Linear under BF16 autocast), nvfp4 (nvfp4.torch, the full
recipe; the first --keep-first and last --keep-last blocks BF16), no_rht,
no_sr, no_2d (one component off), all_nvfp4 (no BF16 blocks), late_bf16
(nvfp4, then every layer BF16 for the last --late-fraction of the steps:
forked from the nvfp4 arm's state at that step when that arm ran first),
and the MX formats on the same layers: mxfp4, mxfp8, mxfp8_hybrid (E5M2
gradients), nvfp4_mxfp8 (NVFP4 FFN layers, MXFP8 attention projections).

--time-budget S: the whole run ends within S seconds; a calibration (a few
steps of bf16 and nvfp4) sizes the steps per arm so that every arm gets
the same number of tokens (at most --tokens, at most one epoch of the
corpus). An arm that would run past the budget stops early and is marked
so. Everything is written as it happens into --out: <arm>.jsonl (training
loss, validation loss, step times), summary.md / summary.json (rewritten
after every evaluation) and loss_curves.png; SIGTERM writes the summary
and exits. `train.py --summarize DIR... [--out DIR]` writes the summary
and the plot of one run, or of arms from several runs, from their logs.
"""
import argparse
import copy
import hashlib
import inspect
import json
import lzma
import math
import os
import platform
import signal
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# nvfp4.torch from this tree unless PYTHONPATH names another (the package
# imports without its numerics extension; the runtime is ctypes).
for _path in (os.path.join(ROOT, "python"), os.path.join(ROOT, "runtime",
                                                          "python")):
    if _path not in sys.path:
        sys.path.append(_path)

# name: (what it is, Recipe overrides or None for plain BF16)
ARMS = {
    "bf16": ("BF16 (no NVFP4)", None),
    "nvfp4": ("NVFP4, full recipe", {}),
    "late_bf16": ("NVFP4, BF16 for the last steps", {"late": True}),
    "no_sr": ("NVFP4 without stochastic rounding", {
        "stochastic_rounding": False}),
    "no_rht": ("NVFP4 without the RHT", {"rht": False}),
    "no_2d": ("NVFP4 without 2D weight scaling", {"weight_2d": False}),
    "all_nvfp4": ("NVFP4 in every block", {"keep_first": 0, "keep_last": 0}),
    # The NVFP4 paper's baseline: E8M0 scales per 32 elements, no tensor
    # scale, round to nearest, no RHT (docs/Numerics.md section 11).
    "mxfp4": ("MXFP4 (E8M0 scale per 32)", {"formats": "mxfp4"}),
    # The mixed recipe: the FFN layers NVFP4 (full recipe), the attention
    # projections MXFP8 (E4M3 elements).
    "nvfp4_mxfp8": ("NVFP4 FFN + MXFP8 attention", {
        "formats": {"attention": "mxfp8", "ffn": "nvfp4"}}),
    "mxfp8": ("MXFP8 (E4M3, E8M0 scale per 32)", {"formats": "mxfp8"}),
    # TE's HYBRID MXFP8: E4M3 forward, E5M2 gradients (dY, dY^T).
    "mxfp8_hybrid": ("MXFP8, E5M2 gradients", {"formats": "mxfp8",
                                               "mxfp8_gradients": "e5m2"}),
}


class Interrupted(Exception):
    pass


def add_model_arguments(parser):
    """The options that fix the model and the kernel shapes (make_kit.py
    takes the same)."""
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--context", type=int, default=512,
                        help="tokens (bytes) per sequence")
    parser.add_argument("--batch", type=int, default=64,
                        help="sequences per step")
    parser.add_argument("--keep-first", type=int, default=1)
    parser.add_argument("--keep-last", type=int, default=1)
    parser.add_argument("--late-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=1234)


def model_config(args):
    return {"layers": args.layers, "width": args.width, "heads": args.heads,
            "context": args.context, "batch": args.batch,
            "keep_first": args.keep_first, "keep_last": args.keep_last}


def make_recipe(args, arm, cache_dir):
    import nvfp4.torch as nt
    overrides = dict(ARMS[arm][1])
    late = overrides.pop("late", False)
    options = {"keep_first": args.keep_first, "keep_last": args.keep_last,
               "seed": args.seed, "cache_dir": cache_dir}
    options.update(overrides)
    if late:
        options["bf16_after_fraction"] = 1.0 - args.late_fraction
    return nt.Recipe(**options)


def build_model(args, arm, device, cache_dir):
    """The arm's model: the same initialization for every arm (FP32 master
    weights), its linear layers converted by the arm's recipe."""
    import torch
    from gpt import GPT
    torch.manual_seed(args.seed)
    model = GPT(args.layers, args.width, args.heads, args.context)
    if ARMS[arm][1] is not None:
        import nvfp4.torch as nt
        nt.convert(model, make_recipe(args, arm, cache_dir))
    return model.to(device)


def check_kit(args, kit, cache_dir, arms):
    """Finds every layer kernel of `arms` in the kit's cache; without a
    compiler a missing one raises CompilerUnavailable naming it. Returns
    the number compiled (0 unless a compiler is here)."""
    from nvfp4 import layer_kernels as lk
    cache = lk.KernelCache(cache_dir)
    tokens = args.batch * args.context
    for arm in arms:
        options = make_recipe(args, arm, cache_dir).options
        for shape in kit["arms"][arm]["shapes"]:
            k, n, layer_format = (list(shape) + ["nvfp4"])[:3]
            lk.compile_layer(lk.LayerShape(tokens, k, n),
                             options.with_format(layer_format), kit["chip"],
                             cache)
    return cache.compiles


def layer_shapes(layers):
    """The distinct kernels of an arm's layers: [in, out] for NVFP4 (the
    kits before the MX arms had only these), [in, out, format] for an MX
    format."""
    return sorted({(m.in_features, m.out_features) +
                   (() if m.format == "nvfp4" else (m.format,))
                   for m in layers}, key=lambda s: (s[:2], s[2:]))


def nvfp4_layers(model):
    import nvfp4.torch as nt
    return [m for m in model.modules() if isinstance(m, nt.Linear)]


# -- data -----------------------------------------------------------------

def load_corpus(data_dir):
    """{split: uint8 array} of the prepared corpus, checked against its
    manifest."""
    with open(os.path.join(data_dir, "manifest.json")) as f:
        manifest = json.load(f)
    splits = {}
    for split in ("train", "val"):
        info = manifest["splits"][split]
        with open(os.path.join(data_dir, info["file"]), "rb") as f:
            raw = lzma.decompress(f.read())
        if len(raw) != info["bytes"] or \
                hashlib.sha256(raw).hexdigest() != info["sha256"]:
            raise SystemExit(f"train.py: {info['file']} does not match "
                             f"{data_dir}/manifest.json (run "
                             f"prepare_data.py again)")
        splits[split] = np.frombuffer(raw, np.uint8)
    return splits, manifest


class Batches:
    """Non-overlapping windows of context + 1 bytes; the training windows
    in one fixed permutation (the same for every arm), the validation
    windows in order."""

    def __init__(self, corpus, context, batch, seed, device):
        import torch
        self.context, self.batch = context, batch
        self.train = torch.from_numpy(corpus["train"].copy()).to(device)
        self.val = torch.from_numpy(corpus["val"].copy()).to(device)
        windows = (len(corpus["train"]) - 1) // context
        order = np.random.default_rng(seed).permutation(windows)
        self.order = torch.from_numpy(order).to(device)
        self.train_steps = windows // batch  # one epoch
        self.val_batches = ((len(corpus["val"]) - 1) // context) // batch
        self.offsets = torch.arange(context + 1, device=device)

    def _take(self, data, starts):
        window = data[starts[:, None] * self.context + self.offsets].long()
        return window[:, :-1], window[:, 1:]

    def train_batch(self, step):
        b = self.batch
        return self._take(self.train, self.order[step * b:(step + 1) * b])

    def val_batch(self, index):
        import torch
        b = self.batch
        starts = torch.arange(index * b, (index + 1) * b,
                              device=self.val.device)
        return self._take(self.val, starts)


# -- training -------------------------------------------------------------

def autocast(device):
    import torch
    return torch.autocast(device.type, dtype=torch.bfloat16)


def make_optimizer(model, args, device):
    import torch
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay},
              {"params": rest, "weight_decay": 0.0}]
    extra = {}
    if device.type == "cuda" and "fused" in inspect.signature(
            torch.optim.AdamW).parameters:
        extra["fused"] = True
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), **extra)


def learning_rate(args, step, steps):
    warmup = max(1, int(args.warmup * steps))
    if step < warmup:
        return args.lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    floor = args.lr * args.min_lr_fraction
    return floor + (args.lr - floor) * 0.5 * (1 + math.cos(math.pi *
                                                          progress))


def switch_step(steps, fraction):
    """The first step whose progress step/steps reaches `fraction` (the
    comparison nvfp4.torch.Recipe makes)."""
    return next((s for s in range(steps + 1) if s / steps >= fraction),
                steps)


def evaluate(model, batches, count, device):
    import torch
    total = torch.zeros((), device=device)
    with torch.no_grad(), autocast(device):
        for i in range(count):
            x, y = batches.val_batch(i)
            total += model(x, y).float()
    return float(total) / count


def evaluate_bf16(model, batches, count, device):
    """The validation loss of the same weights with every layer in BF16."""
    layers = nvfp4_layers(model)
    if not layers:
        return None
    recipes = {id(m.recipe): m.recipe for m in layers}.values()
    saved = [(r, r.bf16_after_fraction) for r in recipes]
    for recipe, _ in saved:
        recipe.bf16_after_fraction = 0.0
    try:
        return evaluate(model, batches, count, device)
    finally:
        for recipe, value in saved:
            recipe.bf16_after_fraction = value


def synchronize(device):
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class ArmLog:
    """<arm>.jsonl of a run, one JSON object a line, flushed as written."""

    def __init__(self, out, arm, header):
        self.path = os.path.join(out, f"{arm}.jsonl")
        self.file = open(self.path, "w")
        self.write(dict(header, type="arm", arm=arm))

    def write(self, record):
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()

    def close(self):
        self.file.close()


def run_arm(arm, args, steps, batches, device, cache_dir, out, deadline,
            snapshots, say):
    """Trains one arm for `steps` steps (or until `deadline`); writes its
    log; returns its final record."""
    import torch
    import nvfp4.torch as nt

    tokens_per_step = args.batch * args.context
    late = arm == "late_bf16"
    first = switch_step(steps, 1.0 - args.late_fraction)
    model = build_model(args, arm, device, cache_dir)
    optimizer = make_optimizer(model, args, device)
    params = [p for p in model.parameters()]
    nvfp4_count = len(nvfp4_layers(model))
    log = ArmLog(out, arm, {
        "what": ARMS[arm][0], "steps": steps,
        "tokens_per_step": tokens_per_step, "nvfp4_layers": nvfp4_count,
        "linear_layers": sum(isinstance(m, torch.nn.Linear)
                             for m in model.modules()),
        "recipe": repr(nvfp4_layers(model)[0].recipe) if nvfp4_count
        else None,
        "formats": {f: sum(m.format == f for m in nvfp4_layers(model))
                    for f in sorted({m.format for m in
                                     nvfp4_layers(model)})}})
    start_step = 0
    if late and "nvfp4" in snapshots:
        snap = snapshots["nvfp4"]
        model.load_state_dict(snap["model"])
        optimizer.load_state_dict(snap["optimizer"])
        start_step = snap["step"]
        for record in snap["records"]:
            log.write(dict(record, shared_with="nvfp4"))
        say(f"  late_bf16: continues the nvfp4 arm's state at step "
            f"{start_step} of {steps}")
    evals = set(int(round(steps * (i + 1) / args.evals))
                for i in range(args.evals))
    records = []  # for the late arm's fork
    losses, interval_ms = [], []
    if start_step:
        losses = list(snapshots["nvfp4"]["losses"])
    status, error = "done", None
    synchronize(device)
    t_last = time.perf_counter()
    steps_in_interval = len(losses)
    arm_start = time.monotonic()
    step = start_step
    try:
        while step < steps:
            if arm == "nvfp4" and step == first and "late_bf16" in \
                    args.arm_list:
                snapshots["nvfp4"] = {
                    "model": {k: v.detach().clone()
                              for k, v in model.state_dict().items()},
                    "optimizer": copy.deepcopy(optimizer.state_dict()),
                    "step": step, "records": list(records),
                    "losses": list(losses)}
            if nvfp4_count:
                nt.set_progress(model, step / steps)
            lr = learning_rate(args, step, steps)
            for group in optimizer.param_groups:
                group["lr"] = lr
            x, y = batches.train_batch(step)
            with autocast(device):
                loss = model(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, args.clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.detach())
            step += 1
            steps_in_interval += 1
            if step % args.log_every == 0 or step == steps or step in evals:
                synchronize(device)
                now = time.perf_counter()
                ms = (now - t_last) * 1e3 / steps_in_interval
                interval_ms.append(ms)
                train_loss = float(torch.stack(losses).float().mean())
                if not math.isfinite(train_loss):
                    raise FloatingPointError(
                        f"the training loss is {train_loss} at step {step}")
                record = {"type": "train", "step": step,
                          "tokens": step * tokens_per_step,
                          "loss": train_loss, "lr": lr, "step_ms": ms,
                          "bf16_now": bool(nvfp4_count) and
                          nvfp4_layers(model)[0].recipe.bf16_now}
                log.write(record)
                records.append(record)
                losses = []
                if step in evals:
                    e0 = time.perf_counter()
                    val = evaluate(model, batches, args.eval_batches, device)
                    record = {"type": "eval", "step": step,
                              "tokens": step * tokens_per_step,
                              "val_loss": val,
                              "eval_s": time.perf_counter() - e0}
                    log.write(record)
                    records.append(record)
                    if len(records) and sum(r["type"] == "eval" for r in
                                            records) % 2 == 0:
                        say(f"  {arm:9s} step {step:5d}/{steps} "
                            f"{step * tokens_per_step / 1e6:6.1f}M tokens "
                            f" train {train_loss:.4f}  val {val:.4f}  "
                            f"{ms:6.1f} ms/step")
                    write_summary(out, args, with_plot=False)
                t_last = time.perf_counter()
                steps_in_interval = 0
                if time.monotonic() > deadline:
                    status = "stopped"
                    say(f"  {arm}: out of time at step {step} of {steps}")
                    break
    except Interrupted:
        status = "interrupted"
    except Exception as e:  # one arm's failure leaves the others to run
        import traceback
        traceback.print_exc()
        status, error = "failed", f"{type(e).__name__}: {e}"
    # The first interval holds the warm-up (kernel loads, caches).
    step_ms = float(np.median(interval_ms[1:] or interval_ms)) \
        if interval_ms else None
    if start_step and step_ms is not None:
        # A forked arm's steps before the fork ran at the other arm's pace.
        shared = [r["step_ms"] for r in snapshots["nvfp4"]["records"]
                  if r["type"] == "train"]
        shared_ms = float(np.median(shared[1:] or shared))
        step_ms = (start_step * shared_ms + (step - start_step) *
                   step_ms) / step
    final = {"type": "final", "status": status, "step": step,
             "tokens": step * tokens_per_step,
             "train_s": time.monotonic() - arm_start, "step_ms": step_ms}
    if start_step:
        final["forked_at_step"] = start_step
    if error:
        final["error"] = error
    if status in ("done", "stopped"):
        try:
            final["val_loss"] = evaluate(model, batches,
                                         batches.val_batches, device)
            final["val_loss_bf16_inference"] = evaluate_bf16(
                model, batches, batches.val_batches, device)
            final["val_tokens"] = batches.val_batches * tokens_per_step
        except Interrupted:
            final["status"] = "interrupted"
    log.write(final)
    log.close()
    if final["status"] == "interrupted":
        raise Interrupted()
    return final


# -- calibration and the plan ----------------------------------------------

def calibrate(args, arm, batches, device, cache_dir, steps=8, warmup=3):
    """(seconds per training step, seconds per evaluation batch) of an
    arm, measured on a throwaway copy of its model."""
    import torch
    model = build_model(args, arm, device, cache_dir)
    optimizer = make_optimizer(model, args, device)

    def step(i):
        x, y = batches.train_batch(i)
        with autocast(device):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for i in range(warmup):
        step(i)
    synchronize(device)
    t0 = time.perf_counter()
    for i in range(steps):
        step(warmup + i)
    synchronize(device)
    t_step = (time.perf_counter() - t0) / steps
    evaluate(model, batches, 1, device)
    synchronize(device)
    t0 = time.perf_counter()
    evaluate(model, batches, 3, device)
    t_eval = (time.perf_counter() - t0) / 3
    return t_step, t_eval


def plan_steps(args, arms, cost, fixed_s, available_s, data_steps):
    """Steps per arm so that every arm fits in `available_s`: each arm
    costs its steps, its evaluations and its final evaluations."""
    per_step, fixed = 0.0, fixed_s
    forked = "nvfp4" in arms
    for arm in arms:
        t_step, t_eval = cost[arm]
        fraction = args.late_fraction if arm == "late_bf16" and forked \
            else 1.0
        per_step += fraction * t_step
        finals = 2 if ARMS[arm][1] is not None else 1
        fixed += t_eval * (args.evals * args.eval_batches +
                           finals * args.val_batches) + args.arm_setup_s
    steps = int((available_s - fixed) / per_step) if per_step else 0
    return max(0, min(steps, data_steps)), fixed, per_step


def calibrated_arms(arms):
    """The arms calibrate() measures besides bf16 and nvfp4: those with
    another format (their kernels are not NVFP4's, so their cost does not
    scale from nvfp4's)."""
    return [a for a in arms if a not in ("bf16", "nvfp4") and
            "formats" in (ARMS[a][1] or {})]


def arm_cost(arm, measured, counts, args):
    """An arm's (step, eval batch) seconds: measured (bf16, nvfp4 and the
    calibrated_arms), else from the measured bf16 and nvfp4 arms: the NVFP4
    layers' share scales with their number; late_bf16 runs
    (1 - late_fraction) of its steps as nvfp4."""
    bf16 = measured["bf16"]
    nvfp4 = measured.get("nvfp4", bf16)
    if arm in measured:
        return measured[arm]
    if arm == "late_bf16":
        f = args.late_fraction
        return tuple((1 - f) * n + f * b for n, b in zip(nvfp4, bf16))
    scale = counts[arm] / max(counts["nvfp4"], 1)
    return tuple(b + (n - b) * scale for n, b in zip(nvfp4, bf16))


# -- per-layer step time (issue 14's goal: within 1.3x of BF16) ----------------

def timed_layers(args, kit, arms):
    """(in, out, format) of every layer kernel the per-layer timing
    measures: each linear shape of the model in NVFP4, and each MX layer
    kernel the kit holds for `arms`."""
    from gpt import GPT
    layers = [(k, n, "nvfp4") for k, n in
              GPT(1, args.width, args.heads, 16).linear_shapes()]
    for arm in arms:
        for shape in kit["arms"][arm]["shapes"]:
            if len(shape) == 3 and tuple(shape) not in layers:
                layers.append(tuple(shape))
    return layers


def layer_timing(args, device, cache_dir, say, layers):
    """One training step (forward + backward) of each of `layers` ((in,
    out, format), timed_layers) against the same three GEMMs in BF16
    (cuBLAS): median of 20 (CUDA events), and the host time to enqueue
    the step."""
    import torch
    import nvfp4.torch as nt
    tokens = args.batch * args.context
    rows = []

    def median_ms(fn, repeat=20):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times, host = [], []
        for _ in range(repeat):
            start, stop = torch.cuda.Event(True), torch.cuda.Event(True)
            torch.cuda.synchronize()
            h0 = time.perf_counter()
            start.record()
            fn()
            stop.record()
            host.append((time.perf_counter() - h0) * 1e3)
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return float(np.median(times)), float(np.median(host))

    for k, n, layer_format in layers:
        layer = nt.Linear(k, n, bias=False, device=device,
                          recipe=nt.Recipe(seed=args.seed,
                                           cache_dir=cache_dir),
                          format=layer_format)
        torch.manual_seed(0)
        x = torch.randn(tokens, k, device=device, dtype=torch.bfloat16)
        dy = torch.randn(tokens, n, device=device,
                         dtype=torch.bfloat16) * 1e-2
        w = layer.weight.detach()
        xg = x.clone().requires_grad_()

        def nvfp4_step():
            layer(xg).backward(dy)

        def bf16_step():
            torch.matmul(x, w.t())
            torch.matmul(dy, w)
            torch.matmul(dy.t(), x)

        kernels = layer._kernels_for(tokens, x.device)
        ws_f = torch.empty(kernels.workspace_bytes("forward"),
                           dtype=torch.uint8, device=device)
        ws_b = torch.empty(kernels.workspace_bytes("backward"),
                           dtype=torch.uint8, device=device)

        def kernels_only():
            wt = w.t().contiguous()
            dyt, xt = dy.t().contiguous(), x.t().contiguous()
            y = torch.empty(tokens, n, device=device, dtype=torch.bfloat16)
            dx, dw = torch.empty_like(x), torch.empty_like(w)
            stream = torch.cuda.current_stream().cuda_stream
            kernels.forward(x, w, y, stream, ws_f)
            kernels.backward(dy, wt, dyt, xt, 1, dx, dw, stream, ws_b)

        step_ms, host_ms = median_ms(nvfp4_step)
        kernel_ms, _ = median_ms(kernels_only)
        bf16_ms, _ = median_ms(bf16_step)
        # Sanity of the layer the arms use: the output is the product up
        # to NVFP4 quantization, and the same bytes with the shared
        # workspace as with a private one.
        with torch.no_grad():
            shared = layer(x)
            layer.keep_workspaces = True
            private = layer(x)
            layer.keep_workspaces = False
            exact = x.float() @ w.float().t()
            difference = float((shared.float() - exact).abs().max() /
                               exact.abs().max())
        same = bool(torch.equal(shared, private))
        rows.append({"tokens": tokens, "in": k, "out": n,
                     "format": layer_format, "nvfp4_step_ms": step_ms, "nvfp4_host_ms": host_ms,
                     "nvfp4_kernels_ms": kernel_ms, "bf16_gemms_ms": bf16_ms,
                     "fprop_relative_difference": difference,
                     "shared_workspace_identical": same})
        say(f"  {tokens} x {k} -> {n} {layer_format}: nvfp4.torch.Linear "
            f"step {step_ms:.3f} "
            f"ms ({step_ms / bf16_ms:.2f}x BF16; its kernels "
            f"{kernel_ms:.3f} ms = {kernel_ms / bf16_ms:.2f}x; host "
            f"{host_ms:.3f} ms), BF16 cuBLAS {bf16_ms:.3f} ms; fprop vs "
            f"exact {difference:.3f}" + ("" if same else
                                         "; SHARED WORKSPACE DIFFERS"))
    return rows


# -- summary and plot -------------------------------------------------------

def read_logs(*runs):
    """{arm: {"header", "train", "eval", "final"}} from the logs of one or
    more runs (an arm from the first run that has it), in the order of
    ARMS."""
    arms = {}
    for arm in ARMS:
        paths = [os.path.join(run, f"{arm}.jsonl") for run in runs
                 if os.path.isfile(os.path.join(run, f"{arm}.jsonl"))]
        if not paths:
            continue
        path = paths[0]
        entry = {"header": None, "train": [], "eval": [], "final": None}
        with open(path) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    break  # a line cut by a kill
                kind = record.get("type")
                if kind == "arm":
                    entry["header"] = record
                elif kind in ("train", "eval"):
                    entry[kind].append(record)
                elif kind == "final":
                    entry["final"] = record
        arms[arm] = entry
    return arms


def summary_rows(arms):
    base = arms.get("bf16", {}).get("final") or {}
    base_loss, base_ms = base.get("val_loss"), base.get("step_ms")
    rows = []
    for arm, entry in arms.items():
        final = entry["final"] or {}
        evals = entry["eval"]
        loss = final.get("val_loss")
        status = final.get("status", "running")
        if loss is None and evals:
            loss = evals[-1]["val_loss"]  # a partial result
        tokens = final.get("tokens") or (
            entry["train"][-1]["tokens"] if entry["train"] else 0)
        step_ms = final.get("step_ms")
        if step_ms is None and len(entry["train"]) > 1:
            step_ms = float(np.median([r["step_ms"]
                                       for r in entry["train"][1:]]))
        row = {"arm": arm, "what": ARMS[arm][0], "status": status,
               "tokens": tokens, "val_loss": loss,
               "val_loss_bf16_inference": final.get(
                   "val_loss_bf16_inference"),
               "step_ms": step_ms, "error": final.get("error")}
        if loss is not None and base_loss is not None:
            row["gap_nats"] = loss - base_loss
            row["gap_percent"] = 100.0 * (loss - base_loss) / base_loss
        if step_ms and base_ms:
            row["time_vs_bf16"] = step_ms / base_ms
        rows.append(row)
    return rows


def _fmt(value, spec, missing="-"):
    return missing if value is None else format(value, spec)


def write_summary(out, args=None, extra=None, with_plot=True, runs=None):
    """summary.json, summary.md and (with_plot) loss_curves.png in `out`
    from the logs of the run in `out` (any time, also mid-run) or of
    several `runs` together."""
    runs = runs or [out]
    arms = read_logs(*runs)
    rows = summary_rows(arms)
    meta_path = os.path.join(out, "run.json")
    meta = {}
    for run in [out] + runs:
        path = os.path.join(run, "run.json")
        if os.path.isfile(path):
            with open(path) as f:
                for key, value in json.load(f).items():
                    meta.setdefault(key, value)
    if extra:
        meta.update(extra)
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=1)
    lines = ["| arm | what | tokens | final val loss (nats/byte) | "
             "gap to BF16 | gap % | val loss, BF16 inference | ms/step | "
             "time vs BF16 | status |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| --- |"]
    for r in rows:
        lines.append(
            f"| {r['arm']} | {r['what']} | {r['tokens'] / 1e6:.1f}M | "
            f"{_fmt(r['val_loss'], '.4f')} | "
            f"{_fmt(r.get('gap_nats'), '+.4f')} | "
            f"{_fmt(r.get('gap_percent'), '+.2f')} | "
            f"{_fmt(r['val_loss_bf16_inference'], '.4f')} | "
            f"{_fmt(r['step_ms'], '.1f')} | "
            f"{_fmt(r.get('time_vs_bf16'), '.2f')} | {r['status']}"
            + (f": {r['error']}" if r.get("error") else "") + " |")
    timing = meta.get("layer_timing") or []
    if timing:
        lines += ["", "One linear layer's training step (forward + "
                  "backward), H200:", "",
                  "| tokens x in -> out | format | nvfp4.torch.Linear | "
                  "its kernels "
                  "| host enqueue | BF16 cuBLAS (3 GEMMs) | step vs BF16 "
                  "(goal 1.3x) | kernels vs BF16 |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for t in timing:
            b = t["bf16_gemms_ms"]
            lines.append(
                f"| {t['tokens']} x {t['in']} -> {t['out']} | "
                f"{t.get('format', 'nvfp4')} | {t['nvfp4_step_ms']:.3f} ms | {t['nvfp4_kernels_ms']:.3f} "
                f"ms | {t['nvfp4_host_ms']:.3f} ms | {b:.3f} ms | "
                f"{t['nvfp4_step_ms'] / b:.2f}x | "
                f"{t['nvfp4_kernels_ms'] / b:.2f}x |")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"run": meta, "arms": rows}, f, indent=1)
    if with_plot:
        plot(out, arms)
    return lines


def plot(out, arms):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(18, 5.2))
    base = {r["step"]: r["val_loss"] for r in arms.get("bf16", {}).get(
        "eval", [])}
    colors = {arm: f"C{i}" for i, arm in enumerate(ARMS)}
    for arm, entry in arms.items():
        train = entry["train"]
        if train:
            tokens = np.array([r["tokens"] for r in train]) / 1e6
            loss = np.array([r["loss"] for r in train])
            smooth = np.copy(loss)
            for i in range(1, len(loss)):  # EMA over the logged intervals
                smooth[i] = 0.8 * smooth[i - 1] + 0.2 * loss[i]
            axes[0].plot(tokens, smooth, label=arm, lw=1.2,
                         color=colors[arm])
        evals = entry["eval"]
        if evals:
            tokens = [r["tokens"] / 1e6 for r in evals]
            axes[1].plot(tokens, [r["val_loss"] for r in evals], marker="o",
                         ms=3, label=arm, color=colors[arm])
            paired = [(r["tokens"] / 1e6, r["val_loss"] - base[r["step"]])
                      for r in evals if r["step"] in base]
            if paired and arm != "bf16":
                axes[2].plot(*zip(*paired), marker="o", ms=3, label=arm,
                             color=colors[arm])
    axes[0].set_title("training loss (EMA)")
    axes[1].set_title("validation loss")
    axes[2].set_title("validation loss minus BF16's")
    axes[2].axhline(0.0, color="black", lw=0.8)
    for ax in axes:
        ax.set_xlabel("training tokens (millions of bytes)")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    axes[0].set_ylabel("nats per byte")
    if any(e["train"] for e in arms.values()):
        low = min(min(r["loss"] for r in e["train"]) for e in arms.values()
                  if e["train"])
        axes[0].set_ylim(low - 0.05, low + 1.5)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "loss_curves.png"), dpi=110)
    plt.close(fig)
    return True


# -- main -------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(parser)
    parser.add_argument("--arms", default=",".join(ARMS),
                        help="comma-separated, run in this order")
    parser.add_argument("--tokens", type=float, default=None,
                        help="training tokens per arm (at most)")
    parser.add_argument("--time-budget", type=float, default=None,
                        help="seconds for the whole run")
    parser.add_argument("--lr", type=float, default=1.5e-3)
    parser.add_argument("--min-lr-fraction", type=float, default=0.1)
    parser.add_argument("--warmup", type=float, default=0.03,
                        help="fraction of the steps")
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--evals", type=int, default=10,
                        help="evaluations during an arm")
    parser.add_argument("--eval-batches", type=int, default=8)
    parser.add_argument("--val-batches", type=int, default=None,
                        help="batches of the final evaluation (default: "
                        "the whole validation split)")
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--arm-setup-s", type=float, default=3.0,
                        help="seconds an arm costs besides its steps and "
                        "evaluations (budget planning)")
    parser.add_argument("--reserve-s", type=float, default=20.0,
                        help="seconds of the budget kept for the final "
                        "evaluations, summary and plot")
    parser.add_argument("--plan-margin", type=float, default=0.92,
                        help="share of the budget the plan fills (the "
                        "calibration's estimate is not exact)")
    parser.add_argument("--no-layer-timing", action="store_true")
    parser.add_argument("--data", default=os.path.join(HERE, "data"))
    parser.add_argument("--kit", default=os.path.join(HERE, "kit"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--cpu", action="store_true",
                        help="run on the CPU (BF16 arms only)")
    parser.add_argument("--summarize", metavar="DIR", nargs="+",
                        help="only write the summary and plot of the runs "
                        "in DIR... (into --out, default the first DIR)")
    args = parser.parse_args(argv)
    args.arm_list = [a for a in args.arms.split(",") if a]
    unknown = [a for a in args.arm_list if a not in ARMS]
    if unknown:
        parser.error(f"unknown arms {unknown}; known: {', '.join(ARMS)}")
    if args.summarize is None and args.tokens is None and \
            args.time_budget is None:
        parser.error("give --tokens, --time-budget or both")
    if not 0.0 < args.late_fraction < 1.0:
        parser.error("--late-fraction must be in (0, 1)")
    if (args.batch * args.context) % 16:
        parser.error("--batch x --context must be a multiple of 16 (the "
                     "NVFP4 layers' tokens per call)")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.summarize:
        out = args.out or args.summarize[0]
        os.makedirs(out, exist_ok=True)
        print("\n".join(write_summary(out, runs=args.summarize)))
        return 0
    started = time.monotonic()

    def on_term(signum, frame):
        raise Interrupted()

    signal.signal(signal.SIGTERM, on_term)
    out = args.out or os.path.join(
        os.environ.get("OUT", os.path.join(HERE, "runs")),
        time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    try:
        train_arms(args, out, started)
    except Interrupted:
        print("train.py: interrupted (SIGTERM); partial results follow",
              flush=True)
    lines = write_summary(out, args, {
        "elapsed_s": time.monotonic() - started})
    print(f"summary ({out}):\n" + "\n".join(lines), flush=True)
    return 0


def train_arms(args, out, started):
    deadline = started + args.time_budget if args.time_budget else math.inf
    sys.path.insert(0, HERE)
    kit_cache = os.path.join(args.kit, "cache")
    library = os.path.join(args.kit, "lib", "libnvfp4_runtime.so")
    if os.path.isfile(library):
        os.environ.setdefault("NVFP4_RUNTIME_LIBRARY", library)
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() and
                          not args.cpu else "cpu")

    def say(text):
        print(text, flush=True)

    wanted_nvfp4 = [a for a in args.arm_list if ARMS[a][1] is not None]
    kit = None
    if wanted_nvfp4:
        kit = open_kit(args, device, kit_cache, wanted_nvfp4)

    corpus, manifest = load_corpus(args.data)
    batches = Batches(corpus, args.context, args.batch, args.seed, device)
    if args.val_batches is not None:
        batches.val_batches = max(1, min(args.val_batches,
                                         batches.val_batches))
    args.val_batches = batches.val_batches
    tokens_per_step = args.batch * args.context
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" \
        else platform.processor() or "CPU"
    say(f"train.py: {gpu}, PyTorch {torch.__version__}; corpus "
        f"{manifest['package']} {manifest['version']}: "
        f"{len(corpus['train']) / 1e6:.1f}M training bytes, "
        f"{batches.val_batches * tokens_per_step:,} validation tokens; "
        f"model {args.layers}x{args.width}, context {args.context}, "
        f"{tokens_per_step} tokens per step")
    write_summary(out, args, {
        "command": sys.argv, "device": gpu, "torch": torch.__version__,
        "config": model_config(args), "corpus": {
            k: manifest[k] for k in ("package", "version")},
        "arms": args.arm_list, "lr": args.lr})

    if wanted_nvfp4 and not args.no_layer_timing:
        say("per-layer step time:")
        try:
            write_summary(out, args, {"layer_timing": layer_timing(
                args, device, kit_cache, say,
                timed_layers(args, kit, wanted_nvfp4))}, with_plot=False)
        except Interrupted:
            raise
        except Exception as e:  # the training still runs
            import traceback
            traceback.print_exc()
            say(f"per-layer timing failed: {type(e).__name__}: {e}")

    data_steps = batches.train_steps
    steps = data_steps
    if args.tokens is not None:
        steps = min(steps, int(args.tokens // tokens_per_step))
    if args.time_budget is not None:
        measured = {"bf16": calibrate(args, "bf16", batches, device,
                                      kit_cache)}
        if wanted_nvfp4:
            try:
                measured["nvfp4"] = calibrate(args, "nvfp4", batches, device,
                                              kit_cache)
            except Interrupted:
                raise
            except Exception as e:  # the NVFP4 arms cannot run: BF16 can
                import traceback
                traceback.print_exc()
                say(f"calibration of nvfp4 failed ({type(e).__name__}: {e});"
                    f" running the BF16 arms only")
                write_summary(out, args, {"nvfp4_failed": f"{e}"})
                args.arm_list = [a for a in args.arm_list
                                 if ARMS[a][1] is None]
                wanted_nvfp4 = []
        for arm in calibrated_arms(wanted_nvfp4):
            try:
                measured[arm] = calibrate(args, arm, batches, device,
                                          kit_cache)
            except Interrupted:
                raise
            except Exception as e:  # that arm cannot run: the others can
                import traceback
                traceback.print_exc()
                say(f"calibration of {arm} failed ({type(e).__name__}: "
                    f"{e}); skipping it")
                write_summary(out, args, {f"{arm}_failed": f"{e}"})
                args.arm_list.remove(arm)
                wanted_nvfp4.remove(arm)
        counts = {arm: kit["arms"][arm]["nvfp4_layers"]
                  for arm in wanted_nvfp4}
        if wanted_nvfp4:
            counts.setdefault("nvfp4", kit["arms"]["nvfp4"]["nvfp4_layers"]
                              if "nvfp4" in kit["arms"] else
                              counts[wanted_nvfp4[0]])
        cost = {arm: arm_cost(arm, measured, counts, args)
                for arm in args.arm_list}
        available = (deadline - time.monotonic() - args.reserve_s) * \
            args.plan_margin
        fitted, _, _ = plan_steps(args, args.arm_list, cost, 0.0, available,
                                  data_steps)
        steps = min(steps, fitted)
        say("calibration: " + ", ".join(
            f"{a} {1e3 * t:.1f} ms/step" for a, (t, _) in measured.items())
            + f"; planned for {available:.0f} s")
        write_summary(out, args, {
            "calibration": {a: {"step_s": t, "eval_batch_s": e}
                            for a, (t, e) in measured.items()},
            "planned_steps": steps}, with_plot=False)
    if steps < 10:
        raise SystemExit(f"train.py: only {steps} steps per arm fit; give "
                         f"more time or tokens")
    say(f"{len(args.arm_list)} arms, {steps} steps x {tokens_per_step} "
        f"tokens = {steps * tokens_per_step / 1e6:.1f}M tokens each (one "
        f"epoch: {data_steps} steps)")
    snapshots = {}
    for arm in args.arm_list:
        if time.monotonic() > deadline - args.reserve_s:
            say(f"{arm}: skipped, no time left")
            continue
        say(f"{arm}: {ARMS[arm][0]}")
        final = run_arm(arm, args, steps, batches, device, kit_cache, out,
                        deadline - args.reserve_s, snapshots, say)
        say(f"  {arm}: {final['status']}, val loss "
            f"{_fmt(final.get('val_loss'), '.4f')}"
            + (f" (BF16 inference "
               f"{_fmt(final.get('val_loss_bf16_inference'), '.4f')})"
               if final.get("val_loss_bf16_inference") else "")
            + f", {_fmt(final.get('step_ms'), '.1f')} ms/step, "
            f"{final['train_s']:.0f} s")
        write_summary(out, args)


def open_kit(args, device, kit_cache, arms):
    """The kit's meta.json after checking that it fits this run and GPU
    and holds every kernel of `arms`."""
    import torch
    if device.type != "cuda":
        raise SystemExit(f"train.py: the arms {arms} need a CUDA GPU "
                         f"(nvfp4.torch launches the compiled kernels); on "
                         f"the CPU run --arms bf16")
    meta_path = os.path.join(args.kit, "meta.json")
    if not os.path.isfile(meta_path):
        raise SystemExit(f"train.py: no kit at {args.kit} (build it with "
                         f"examples/training/run_training.sh)")
    with open(meta_path) as f:
        kit = json.load(f)
    if kit["config"] != model_config(args):
        raise SystemExit(f"train.py: the kit {args.kit} was made for "
                         f"{kit['config']}, this run is {model_config(args)}"
                         f": make it again with these options")
    missing = [a for a in arms if a not in kit["arms"]]
    if missing:
        raise SystemExit(f"train.py: the kit has no kernels for {missing}")
    from nvfp4 import layer_kernels as lk
    chip = lk.chip_of_capability(*torch.cuda.get_device_capability(device))
    if chip != kit["chip"]:
        raise SystemExit(f"train.py: the kit holds {kit['chip']} kernels, "
                         f"this GPU is {chip} (make_kit.py --chip {chip})")
    try:
        check_kit(args, kit, kit_cache, arms)
    except lk.CompilerUnavailable as e:
        raise SystemExit(f"train.py: {e}")
    return kit


if __name__ == "__main__":
    sys.exit(main())
