# RUN: rm -rf %t && mkdir -p %t
# RUN: c++ -shared -fPIC -o %t/libfakecuda.so %nvfp4_src_root/test/Runtime/Inputs/fake_driver.cpp
# RUN: env NVFP4_CACHE_DIR=%t/cache NVFP4_CUDA_DRIVER=%t/libfakecuda.so %PYTHON %s
# REQUIRES: python-nvfp4, python-torch, ptxas, nvfp4-runtime
"""examples/training/check.py's layer verification on the CPU: the real
bundles of a small layer (loaded on the fake driver, for their manifests
and workspace offsets) with workspaces written by an emulation of the
kernels from reference.py -- stochastic rounding drawn with its
probabilities -- and outputs from the float64 products. The checks pass
on that, and each fails on one wrong byte of a round-to-nearest operand,
a biased stochastic rounding, a wrong scale and a wrong GEMM result.
The GPU half is the H200 run of check.py (RESULTS.md)."""
import os
import sys
import types
import unittest

import torch

from nvfp4 import layer_kernels as lk

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "examples", "training"))
import check  # noqa: E402
import reference as ref  # noqa: E402

T, K, N = 256, 128, 256


def emulate(kernels, x, w, dy, bias_sr=False, seed=0):
    """(layer, y, dx, dw): workspaces as the kernels write them and the
    products of the operands they hold."""
    g = torch.Generator().manual_seed(seed)
    sources = {"forward": {0: x, 1: w},
               "backward": {0: dy, 1: w.t().contiguous(),
                            2: dy.t().contiguous(), 3: x.t().contiguous()}}
    workspaces, deq = {}, {}
    for phase in ("forward", "backward"):
        manifest = kernels.manifest(phase)
        launcher = kernels.launchers[phase]
        ws = torch.zeros(kernels.workspace_bytes(phase), dtype=torch.uint8)
        for kernel in manifest["kernels"]:
            name = kernel["name"]
            if "quantize" not in name:
                continue
            params = kernel["params"]
            argument = manifest["buffers"][params[0]["buffer"]]["argument"]
            source = sources[phase][argument]
            if "rht" in name:
                source = ref.hadamard(source)
            block = (16, 16) if "_16x16" in name else (1, 16)
            q = ref.quantize(source, block)
            codes = q["codes"]
            if "_sr" in name:
                low, high, p_up = ref.sr_neighbours(q["scaled"])
                up = torch.rand(p_up.shape, generator=g,
                                dtype=torch.float64) < (
                    p_up * 0.5 if bias_sr else p_up)
                table = torch.tensor(ref.E2M1, dtype=torch.float64)
                magnitude = torch.where(up, high, low)
                index = (table[None, :] == magnitude.reshape(-1, 1)).int() \
                    .argmax(1).reshape(magnitude.shape)
                codes = (index + 8 * torch.signbit(q["scaled"]).int()) \
                    .to(torch.uint8)
            amax = torch.tensor([q["amax"]], dtype=torch.float32).view(
                torch.uint8)
            for index, data in ((1, amax), (2, ref.pack(codes).reshape(-1)),
                                (3, q["scales"].reshape(-1))):
                offset = launcher.workspace_offset(params[index]["buffer"])
                ws[offset:offset + data.numel()] = data
            deq[(phase, argument)] = ref.dequantize(
                codes, q["scale_values"], q["amax"], block)
        workspaces[phase] = (ws, kernels)
    y = deq[("forward", 0)] @ deq[("forward", 1)].t()
    dx = deq[("backward", 0)] @ deq[("backward", 1)].t()
    dw = deq[("backward", 2)] @ deq[("backward", 3)].t()
    layer = types.SimpleNamespace(last_workspaces=workspaces)
    return layer, y.bfloat16(), dx.bfloat16(), dw.bfloat16()


class LayerVerification(unittest.TestCase):
    def setUp(self):
        check.FAILURES.clear()
        self.x, self.w, self.dy = check.make_inputs(T, K, N,
                                                    torch.device("cpu"), 3)

    def kernels(self, **recipe):
        return lk.LayerKernels(lk.LayerShape(T, K, N),
                               lk.RecipeOptions(**recipe), "sm_90a")

    def verify(self, layer, y, dx, dw):
        check.FAILURES.clear()
        return check.verify_layer("test", layer, self.x, self.w, self.dy, y,
                                  dx, dw)

    def test_emulated_kernels_pass(self):
        for recipe in ({}, {"stochastic_rounding": False},
                       {"rht": False}, {"weight_2d": False}):
            result = self.verify(*emulate(self.kernels(**recipe), self.x,
                                          self.w, self.dy))
            self.assertTrue(result["operands_ok"] and result["gemm_ok"],
                            (recipe, check.FAILURES))
            self.assertEqual(check.FAILURES, [])
            self.assertLess(max(result["errors"].values()), 4e-3)

    def test_each_defect_fails(self):
        kernels = self.kernels()
        layer, y, dx, dw = emulate(kernels, self.x, self.w, self.dy)
        manifest = kernels.manifest("forward")
        codes = [k["params"][2]["buffer"] for k in manifest["kernels"]
                 if "quantize" in k["name"]]
        ws = layer.last_workspaces["forward"][0]
        offset = kernels.launchers["forward"].workspace_offset(codes[0])
        ws[offset + 5] ^= 0x11  # one byte of X's codes
        result = self.verify(layer, y, dx, dw)
        self.assertFalse(result["operands_ok"])
        self.assertTrue(any("X " in f and "codes differ" in f
                            for f in check.FAILURES), check.FAILURES)

        result = self.verify(*emulate(kernels, self.x, self.w, self.dy,
                                      bias_sr=True))
        self.assertFalse(result["operands_ok"])
        self.assertTrue(any("SR z" in f for f in check.FAILURES))

        layer, y, dx, dw = emulate(kernels, self.x, self.w, self.dy)
        scales = [k["params"][3]["buffer"] for k in
                  kernels.manifest("backward")["kernels"]
                  if "quantize" in k["name"]]
        ws = layer.last_workspaces["backward"][0]
        offset = kernels.launchers["backward"].workspace_offset(scales[1])
        ws[offset] += 1  # one scale of W^T
        result = self.verify(layer, y, dx, dw)
        self.assertTrue(any("W^T" in f and "scales !=" in f
                            for f in check.FAILURES), check.FAILURES)

        layer, y, dx, dw = emulate(kernels, self.x, self.w, self.dy)
        result = self.verify(layer, y, dx * 1.02, dw)
        self.assertTrue(result["operands_ok"])
        self.assertFalse(result["gemm_ok"])
        self.assertGreater(result["errors"]["dX"], 8e-3)


class ModelChecks(unittest.TestCase):
    """The model and training checks' plumbing on a tiny GPT, with the
    layer's GPU calls replaced by BF16 matmuls (so NVFP4 "both", forward-
    only and backward-only all give BF16's gradients, and the frozen-W^T
    training differs from the others)."""

    def test_tiny_model(self):
        import nvfp4.torch as nt
        import torch.nn.functional as F
        calls = {"forward": 0, "backward": 0, "weights": set()}

        def forward_impl(x, w, layer_id):
            calls["forward"] += 1
            return x @ w.t()

        def backward_impl(dy, x, w, layer_id):
            calls["backward"] += 1
            calls["weights"].add(w.data_ptr())
            dy = dy.to(torch.bfloat16)
            return dy @ w, dy.t() @ x

        def forward(layer, x):  # nt.Linear.forward without the CUDA check
            if layer.recipe.bf16_now:
                return F.linear(x, layer.weight, layer.bias)
            x2d = x.reshape(-1, layer.in_features).to(torch.bfloat16)
            w = layer.weight.to(torch.bfloat16)
            return nt._nvfp4_linear(x2d, w, layer._id).reshape(
                *x.shape[:-1], layer.out_features)

        saved = nt._forward_impl, nt._backward_impl, nt.Linear.forward
        nt._forward_impl, nt._backward_impl = forward_impl, backward_impl
        nt.Linear.forward = forward
        args = check.train.parse_args(
            ["--tokens", "1", "--layers", "3", "--width", "32", "--heads",
             "2", "--context", "32", "--batch", "4", "--eval-batches", "2"])
        try:
            result = check.model_and_training(
                args, torch.device("cpu"), os.environ["NVFP4_CACHE_DIR"], 6,
                True, total=12)
        finally:
            nt._forward_impl, nt._backward_impl, nt.Linear.forward = saved
        for step, row in result["cosines"].items():
            for mode in ("both", "forward", "backward"):
                self.assertAlmostEqual(row[mode]["all"], 1.0, 5, (step, mode))
                self.assertEqual(len(row[mode]["per_layer"]), 4)
            self.assertAlmostEqual(row["nvfp4_two_seeds"], 1.0, 5)
        self.assertEqual(sorted(result["cosines"]), [0, 2, 6])
        val = result["val"]
        self.assertEqual(sorted(val["bf16"]), [2, 4, 6])
        # The stand-in computes BF16's numbers: the same losses (up to the
        # order of the autocast casts), and a frozen W^T changes them.
        for step in (2, 4, 6):
            self.assertAlmostEqual(val["nvfp4"][step], val["bf16"][step], 2)
        self.assertNotEqual(val["nvfp4_stale_wt"][6], val["nvfp4"][6])
        self.assertGreater(calls["backward"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
