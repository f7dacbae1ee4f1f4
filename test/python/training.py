# RUN: rm -rf %t && mkdir -p %t
# RUN: env NVFP4_CACHE_DIR=%t/cache TRAINING_TMP=%t NVFP4_BUILD=%nvfp4_obj_root %PYTHON %s
# REQUIRES: python-nvfp4, python-torch, ptxas, nvfp4-runtime
"""examples/training on the CPU (Debian's PyTorch has no CUDA): the corpus
checks, a BF16 arm end to end, the refusals, make_kit.py's kit and its
check without a compiler, SIGTERM's partial results, and the orchestration
of the NVFP4 arms (same initialization and data order, the late switch's
fork) with nvfp4.torch.Linear's GPU call replaced by F.linear. That stand-in
makes every arm compute what BF16 computes, so their losses must be
identical: any difference in initialization, data order, or the fork's
model and optimizer state would show. The NVFP4 numerics of the arms are
the GPU run's (examples/training/README.md)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "training")
sys.path.insert(0, EXAMPLE)
TMP = os.environ["TRAINING_TMP"]

import nvfp4.torch as nt  # noqa: E402
from nvfp4 import layer_kernels as lk  # noqa: E402
import train  # noqa: E402

TINY = ["--layers", "3", "--width", "32", "--heads", "2", "--context", "32",
        "--batch", "4"]
QUICK = ["--evals", "4", "--eval-batches", "2", "--val-batches", "4",
         "--log-every", "5", "--no-layer-timing"]


def run_train(*args, **kwargs):
    return subprocess.run([sys.executable, os.path.join(EXAMPLE, "train.py")]
                          + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, **kwargs)


def summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return {row["arm"]: row for row in json.load(f)["arms"]}


class Training(unittest.TestCase):
    def test_bf16_arm_on_cpu(self):
        out = os.path.join(TMP, "bf16")
        result = run_train("--cpu", "--arms", "bf16", "--tokens", "12800",
                           "--out", out, *TINY, *QUICK)
        self.assertEqual(result.returncode, 0, result.stdout)
        row = summary(out)["bf16"]
        self.assertEqual(row["status"], "done")
        self.assertEqual(row["tokens"], 100 * 4 * 32)
        # A byte-level model starts at ln(256) = 5.55 nats; 100 steps of a
        # working training loop bring it well below.
        self.assertLess(row["val_loss"], 4.0)
        logs = train.read_logs(out)["bf16"]
        self.assertEqual(logs["header"]["steps"], 100)
        self.assertEqual([r["step"] for r in logs["eval"]], [25, 50, 75, 100])
        with open(os.path.join(out, "summary.md")) as f:
            self.assertIn("| bf16 | BF16 (no NVFP4) |", f.read())
        # --summarize rebuilds the same table from the logs.
        again = run_train("--summarize", out)
        self.assertEqual(again.returncode, 0, again.stdout)
        self.assertIn("| bf16 | BF16 (no NVFP4) | 0.0M | "
                      f"{row['val_loss']:.4f} |", again.stdout)

    def test_refusals(self):
        out = os.path.join(TMP, "refused")
        for args, message in (
                (["--cpu", "--arms", "bf16,nvfp4", "--tokens", "1000"],
                 "the arms ['nvfp4'] need a CUDA GPU"),
                (["--arms", "fp8", "--tokens", "1000"], "unknown arms"),
                (["--arms", "bf16"], "give --tokens, --time-budget or both"),
                (["--batch", "3", "--context", "7", "--tokens", "10"],
                 "must be a multiple of 16"),
                (["--cpu", "--arms", "bf16", "--tokens", "100"],
                 "only 0 steps per arm fit")):
            result = run_train(*args, "--out", out)
            self.assertNotEqual(result.returncode, 0, args)
            self.assertIn(message, result.stdout, args)

    def test_corpus_check(self):
        data = os.path.join(TMP, "data")
        shutil.copytree(os.path.join(EXAMPLE, "data"), data)
        with open(os.path.join(data, "manifest.json")) as f:
            manifest = json.load(f)
        corpus, _ = train.load_corpus(data)
        self.assertEqual(len(corpus["train"]),
                         manifest["splits"]["train"]["bytes"])
        manifest["splits"]["val"]["sha256"] = "0" * 64
        with open(os.path.join(data, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        with self.assertRaises(SystemExit) as e:
            train.load_corpus(data)
        self.assertIn("val.txt.xz does not match", str(e.exception))

    def test_kit(self):
        kit = os.path.join(TMP, "kit")
        result = subprocess.run(
            [sys.executable, os.path.join(EXAMPLE, "make_kit.py"), "--build",
             os.environ["NVFP4_BUILD"], "--kit",
             kit, "--arms", "nvfp4,all_nvfp4,nvfp4_mxfp8", *TINY],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(result.returncode, 0, result.stdout)
        with open(os.path.join(kit, "meta.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["tokens"], 128)
        self.assertEqual(meta["arms"]["nvfp4"]["nvfp4_layers"], 4)
        self.assertEqual(meta["arms"]["all_nvfp4"]["nvfp4_layers"], 12)
        self.assertEqual(meta["arms"]["nvfp4"]["shapes"],
                         [[32, 32], [32, 96], [32, 128], [128, 32]])
        # The mixed arm: the attention projections (qkv 32 -> 96, proj
        # 32 -> 32) MXFP8 by the compiler's policy, the MLP NVFP4.
        self.assertEqual(meta["arms"]["nvfp4_mxfp8"]["shapes"],
                         [[32, 32, "mxfp8"], [32, 96, "mxfp8"], [32, 128],
                          [128, 32]])
        self.assertEqual(meta["arms"]["nvfp4_mxfp8"]["formats"], {
            "blocks.1.attn.qkv": "mxfp8", "blocks.1.attn.proj": "mxfp8",
            "blocks.1.mlp.fc": "nvfp4", "blocks.1.mlp.proj": "nvfp4"})
        self.assertTrue(os.path.isfile(os.path.join(
            kit, "lib", "libnvfp4_runtime.so")))
        # Without a compiler (the GPU machine) the kit answers for itself;
        # a missing bundle is an error naming it.
        args = train.parse_args(TINY + ["--tokens", "1"])
        saved = os.environ.get("NVFP4_TOOLS_DIR")
        os.environ["NVFP4_TOOLS_DIR"] = os.path.join(TMP, "no-compiler")
        try:
            cache = os.path.join(kit, "cache")
            self.assertEqual(train.check_kit(args, meta, cache,
                                             ["nvfp4", "all_nvfp4",
                                              "nvfp4_mxfp8"]), 0)
            # An MX kernel is its own bundle: without it the mixed arm
            # cannot run, the NVFP4 arms still can.
            mx = [d for d in os.listdir(os.path.join(cache, "sm_90a"))
                  if "mxfp8" in open(os.path.join(
                      cache, "sm_90a", d, "meta.json")).read()]
            self.assertEqual(len(mx), 2 * 2)  # 2 shapes x fwd/bwd
            shutil.rmtree(os.path.join(cache, "sm_90a", mx[0]))
            with self.assertRaises(lk.CompilerUnavailable):
                train.check_kit(args, meta, cache, ["nvfp4_mxfp8"])
            self.assertEqual(train.check_kit(args, meta, cache,
                                             ["nvfp4"]), 0)
            victim = sorted(os.listdir(os.path.join(cache, "sm_90a")))[0]
            shutil.rmtree(os.path.join(cache, "sm_90a", victim))
            with self.assertRaises(lk.CompilerUnavailable):
                train.check_kit(args, meta, cache, ["nvfp4"])
        finally:
            if saved is None:
                del os.environ["NVFP4_TOOLS_DIR"]
            else:
                os.environ["NVFP4_TOOLS_DIR"] = saved

    def test_sigterm_leaves_partial_results(self):
        out = os.path.join(TMP, "sigterm")
        process = subprocess.Popen(
            [sys.executable, os.path.join(EXAMPLE, "train.py"), "--cpu",
             "--arms", "bf16", "--time-budget", "600", "--out", out, *TINY,
             *QUICK], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        log = os.path.join(out, "bf16.jsonl")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            if os.path.isfile(log):
                with open(log) as f:
                    if '"type": "train"' in f.read():
                        break
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        stdout, _ = process.communicate(timeout=300)
        self.assertEqual(process.returncode, 0, stdout)
        self.assertIn("interrupted (SIGTERM)", stdout)
        self.assertIn("calibration: bf16", stdout)
        row = summary(out)["bf16"]
        self.assertEqual(row["status"], "interrupted")
        self.assertGreater(row["tokens"], 0)

    def test_arms_share_initialization_data_and_fork(self):
        calls = {"nvfp4": 0, "bf16_path": 0}
        real_forward = nt.Linear.forward

        def stand_in(layer, x):
            if layer.recipe.bf16_now:
                calls["bf16_path"] += 1
                return real_forward(layer, x)  # the layer's own BF16 path
            calls["nvfp4"] += 1
            return F.linear(x, layer.weight, layer.bias)

        def open_kit(args, device, cache, arms):
            return None

        out = os.path.join(TMP, "arms")
        saved = nt.Linear.forward, train.open_kit
        nt.Linear.forward, train.open_kit = stand_in, open_kit
        try:
            self.assertEqual(train.main(
                ["--cpu", "--arms",
                 "bf16,nvfp4,late_bf16,all_nvfp4,mxfp4,nvfp4_mxfp8",
                 "--tokens", str(60 * 128), "--out", out,
                 "--kit", os.path.join(TMP, "arms-kit"), *TINY, *QUICK]), 0)
        finally:
            nt.Linear.forward, train.open_kit = saved
        rows = summary(out)
        logs = train.read_logs(out)
        self.assertEqual(list(rows), ["bf16", "nvfp4", "late_bf16",
                                      "all_nvfp4", "mxfp4", "nvfp4_mxfp8"])
        for arm, row in rows.items():
            self.assertEqual(row["status"], "done", arm)
            # The same numbers as BF16 (the stand-in): same initialization,
            # same batches in the same order, same evaluation.
            self.assertEqual(row["val_loss"], rows["bf16"]["val_loss"], arm)
            self.assertEqual(row["gap_nats"], 0.0, arm)
            self.assertEqual([r["loss"] for r in logs[arm]["train"]],
                             [r["loss"] for r in logs["bf16"]["train"]], arm)
        self.assertEqual(logs["nvfp4"]["header"]["nvfp4_layers"], 4)
        self.assertEqual(logs["all_nvfp4"]["header"]["nvfp4_layers"], 12)
        self.assertEqual(logs["nvfp4"]["header"]["formats"], {"nvfp4": 4})
        self.assertEqual(logs["mxfp4"]["header"]["formats"], {"mxfp4": 4})
        self.assertEqual(logs["nvfp4_mxfp8"]["header"]["formats"],
                         {"mxfp8": 2, "nvfp4": 2})
        # late_bf16 continues nvfp4's state from the first step at 80%:
        # 48 of 60; its own 12 steps run no NVFP4 call.
        late = logs["late_bf16"]
        self.assertEqual(late["final"]["forked_at_step"], 48)
        shared = [r for r in late["train"] if r.get("shared_with")]
        self.assertEqual([r["step"] for r in shared],
                         [r["step"] for r in logs["nvfp4"]["train"]
                          if r["step"] <= 48])
        self.assertTrue(all(r["bf16_now"] for r in late["train"]
                            if r["step"] > 48))
        self.assertFalse(any(r["bf16_now"] for r in logs["nvfp4"]["train"]))
        # Layer calls: nvfp4 trains 60 steps through the stand-in, late 12
        # steps through the BF16 path; evaluations add forward calls.
        self.assertGreater(calls["bf16_path"], 0)
        self.assertTrue(os.path.isfile(os.path.join(out, "summary.md")))

        # Arms of two runs in one summary: the first run that has an arm
        # gives it.
        part = os.path.join(TMP, "arms-part")
        os.makedirs(part)
        shutil.copy(os.path.join(out, "nvfp4.jsonl"), part)
        merged = os.path.join(TMP, "arms-merged")
        self.assertEqual(train.main(["--summarize", part, out, "--out",
                                     merged]), 0)
        self.assertEqual(list(summary(merged)), list(rows))

    def test_budget_calibrates_the_mx_arms(self):
        # With --time-budget the plan measures every arm of another format
        # (MX kernels do not cost what NVFP4's do) besides bf16 and nvfp4.
        calibrated = []
        real_calibrate = train.calibrate

        def calibrate(args, arm, *rest):
            calibrated.append(arm)
            return real_calibrate(args, arm, *rest, steps=1, warmup=1)

        def stand_in(layer, x):
            return F.linear(x, layer.weight, layer.bias)

        out = os.path.join(TMP, "budget")
        saved = nt.Linear.forward, train.open_kit, train.calibrate
        nt.Linear.forward, train.calibrate = stand_in, calibrate
        train.open_kit = lambda *args: {"arms": {
            a: {"nvfp4_layers": 4} for a in ("nvfp4", "mxfp4",
                                             "nvfp4_mxfp8")}}
        try:
            self.assertEqual(train.main(
                ["--cpu", "--arms", "bf16,mxfp4,nvfp4_mxfp8", "--tokens",
                 str(10 * 128), "--time-budget", "600", "--out", out,
                 "--kit", os.path.join(TMP, "budget-kit"), *TINY,
                 *QUICK]), 0)
        finally:
            nt.Linear.forward, train.open_kit, train.calibrate = saved
        self.assertEqual(calibrated, ["bf16", "nvfp4", "mxfp4",
                                      "nvfp4_mxfp8"])
        with open(os.path.join(out, "run.json")) as f:
            self.assertEqual(set(json.load(f)["calibration"]),
                             {"bf16", "nvfp4", "mxfp4", "nvfp4_mxfp8"})
        self.assertEqual([r["status"] for r in summary(out).values()],
                         ["done"] * 3)


if __name__ == "__main__":
    unittest.main(verbosity=1)
