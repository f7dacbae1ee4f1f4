# RUN: rm -rf %t && mkdir -p %t
# RUN: env NVFP4_CACHE_DIR=%t/cache %PYTHON %s
# REQUIRES: python-nvfp4, python-torch
"""nvfp4.torch on the CPU (Debian's PyTorch has no CUDA): everything up to
the launch. Linear is a drop-in nn.Linear (parameters, initialization,
state dict); unsupported shapes, dtypes and devices are one clear
ValueError each; convert() replaces layers by nvfp4-assign-precision's
per-layer policy and shares the parameters; Recipe's knobs and late
switch. The GPU half is integration_test/torch_linear.py."""
import unittest

import torch

import nvfp4.torch as nt


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.attn_qkv = torch.nn.Linear(width, 3 * width)
        self.attn_proj = torch.nn.Linear(width, width)
        self.fc1 = torch.nn.Linear(width, 4 * width)
        self.fc2 = torch.nn.Linear(4 * width, width)
        self.odd = torch.nn.Linear(width, 10)  # out not a multiple of 16


class Model(torch.nn.Module):
    def __init__(self, depth=4, width=32):
        super().__init__()
        self.embed = torch.nn.Embedding(256, width)
        self.blocks = torch.nn.ModuleList(Block(width) for _ in range(depth))
        self.head = torch.nn.Linear(width, 256)


class LinearTest(unittest.TestCase):
    def test_drop_in(self):
        torch.manual_seed(0)
        reference = torch.nn.Linear(64, 32, dtype=torch.bfloat16)
        torch.manual_seed(0)
        layer = nt.Linear(64, 32)
        self.assertIsInstance(layer, torch.nn.Linear)
        self.assertEqual(layer.weight.dtype, torch.bfloat16)
        self.assertTrue(torch.equal(layer.weight, reference.weight))
        self.assertTrue(torch.equal(layer.bias, reference.bias))
        self.assertEqual(set(layer.state_dict()), {"weight", "bias"})
        self.assertIsNone(nt.Linear(64, 32, bias=False).bias)
        self.assertEqual(nt.Linear(64, 32, dtype=torch.float32).weight.dtype,
                         torch.float32)

    def test_shape_errors(self):
        with self.assertRaisesRegex(ValueError, r"in_features = 20; NVFP4 "
                                    r"needs a positive multiple of 16 \(it "
                                    r"is K of the fprop GEMM"):
            nt.Linear(20, 32)
        with self.assertRaisesRegex(ValueError, "out_features = 24.*dgrad"):
            nt.Linear(32, 24)
        with self.assertRaisesRegex(ValueError, "parameters must be bfloat16 "
                                    "or float32"):
            nt.Linear(32, 32, dtype=torch.float16)
        layer = nt.Linear(32, 16)
        x = torch.zeros(3, 5, 32, dtype=torch.bfloat16)
        with self.assertRaisesRegex(ValueError, r"15 tokens \(the input's "
                                    r"leading dimensions\); NVFP4 needs a "
                                    r"positive multiple of 16"):
            layer(x)
        with self.assertRaisesRegex(ValueError, r"input shape \(16, 48\) "
                                    "does not end in in_features = 32"):
            layer(torch.zeros(16, 48, dtype=torch.bfloat16))

    def test_dtype_and_device_errors(self):
        layer = nt.Linear(32, 16)
        with self.assertRaisesRegex(ValueError, "the input is torch.float32; "
                                    "the layer computes in bfloat16"):
            layer(torch.zeros(16, 32))
        with self.assertRaisesRegex(ValueError, "runs on CUDA tensors; the "
                                    "input is on cpu"):
            layer(torch.zeros(16, 32, dtype=torch.bfloat16))

    def test_late_switch(self):
        recipe = nt.Recipe(bf16_after_fraction=0.75)
        layer = nt.Linear(32, 16, recipe=recipe)
        x = torch.randn(16, 32, dtype=torch.bfloat16)
        self.assertFalse(recipe.bf16_now)
        nt.set_progress(layer, 0.8)
        self.assertTrue(recipe.bf16_now)
        # Past the switch the layer is plain BF16 (on any device).
        self.assertTrue(torch.equal(
            layer(x), torch.nn.functional.linear(x, layer.weight,
                                                 layer.bias)))
        with self.assertRaisesRegex(ValueError, "bf16_after_fraction"):
            nt.Recipe(bf16_after_fraction=1.5)
        with self.assertRaisesRegex(ValueError, "keep_first"):
            nt.Recipe(keep_first=-1)

    def test_recipe_knobs(self):
        recipe = nt.Recipe(rht=False, stochastic_rounding=False,
                           weight_2d=False)
        self.assertEqual(recipe.options.pass_options(),
                         "rht=0 stochastic-rounding=0 weight-2d=0 "
                         "seed-argument=4")
        self.assertEqual(nt.Recipe().options.pass_options(),
                         "rht=1 stochastic-rounding=1 weight-2d=1 "
                         "seed-argument=4")

    def test_backward_quantizes_the_weight_of_its_forward(self):
        # The dgrad operand W^T is the weight the step's forward saw, however
        # it was written: an in-place update that bumps the version counter
        # (torch.no_grad() add_), and one that does not (a write through
        # .data, as some optimizers do). A W^T cached across steps and keyed
        # on the version counter trained the H200 run's NVFP4 arms with a
        # stale dgrad weight. The GPU launch is stubbed (CPU PyTorch).
        seen = []

        class Kernels:
            def workspace_bytes(self, phase):
                return 1

            def forward(self, x, w, y, stream, workspace):
                y.copy_(x @ w.t())

            def backward(self, dy, wt, dyt, xt, seed, dx, dw, stream,
                         workspace):
                seen.append(wt.clone())
                dx.copy_(dy @ wt.t())
                dw.copy_(dyt @ xt.t())

        saved = nt._stream, nt._workspace
        nt._stream = lambda device: 0
        nt._workspace = lambda kernels, phase, device, layer: None
        try:
            for dtype in (torch.float32, torch.bfloat16):
                layer = nt.Linear(32, 16, bias=False, dtype=dtype)
                layer._kernels_for = lambda tokens, device: Kernels()
                x = torch.randn(16, 32, dtype=torch.bfloat16)

                def bump():
                    with torch.no_grad():
                        layer.weight.mul_(0.5)

                def quiet():
                    layer.weight.data.add_(0.25)

                for update in (None, bump, quiet, quiet, bump):
                    if update:
                        update()
                    w = layer.weight.to(torch.bfloat16)
                    nt._nvfp4_linear(x, w, layer._id).sum().backward()
                    self.assertTrue(torch.equal(seen[-1], w.t()),
                                    (dtype, update and update.__name__))
        finally:
            nt._stream, nt._workspace = saved

    def test_seeds_differ_per_layer_and_step(self):
        a, b = nt.Linear(32, 16), nt.Linear(32, 16)
        a.layer_name, b.layer_name = "blocks.0.fc1", "blocks.0.fc2"
        seeds = [a._next_seed(), a._next_seed(), b._next_seed()]
        self.assertEqual(len(set(seeds)), 3)


class ConvertTest(unittest.TestCase):
    def test_policy(self):
        model = Model(depth=4)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        before = {n: p for n, p in model.named_parameters()}
        nt.convert(model, nt.Recipe(keep_first=1, keep_last=1))
        # Blocks 1 and 2 of 4 become NVFP4, attention projections included;
        # the first and last blocks, the head and the layer whose out
        # features are not a multiple of 16 stay nn.Linear.
        for b in range(4):
            for name in ("attn_qkv", "attn_proj", "fc1", "fc2"):
                module = model.blocks[b].get_submodule(name)
                self.assertEqual(isinstance(module, nt.Linear), b in (1, 2),
                                 (b, name))
            self.assertNotIsInstance(model.blocks[b].odd, nt.Linear)
        self.assertNotIsInstance(model.head, nt.Linear)
        # The parameters are the same objects (the optimizer still has them).
        after = {n: p for n, p in model.named_parameters()}
        self.assertEqual(set(before), set(after))
        for name in before:
            self.assertIs(before[name], after[name])
        self.assertIs(optimizer.param_groups[0]["params"][1],
                      model.blocks[0].attn_qkv.weight)
        self.assertEqual(model.blocks[1].fc1.layer_name, "blocks.1.fc1")

    def test_formats(self):
        # The mixed recipe: attention projections MXFP8, the FFN NVFP4, the
        # first and last blocks BF16; one recipe, each layer its format.
        recipe = nt.Recipe(keep_first=1, keep_last=1,
                           formats={"attention": "mxfp8", "ffn": "nvfp4"})
        model = nt.convert(Model(depth=4), recipe)
        for b in range(4):
            for name, fmt in (("attn_qkv", "mxfp8"), ("attn_proj", "mxfp8"),
                              ("fc1", "nvfp4"), ("fc2", "nvfp4")):
                module = model.blocks[b].get_submodule(name)
                self.assertEqual(isinstance(module, nt.Linear), b in (1, 2))
                if b in (1, 2):
                    self.assertEqual(module.format, fmt, (b, name))
                    self.assertEqual(module.options.format, fmt)
        qkv = model.blocks[1].attn_qkv
        self.assertEqual(qkv.options.key()[:3], recipe.options.key()[:3])
        self.assertIn("format='mxfp8'", repr(qkv))
        self.assertIn("formats='attention=mxfp8,ffn=nvfp4'", repr(recipe))
        # MXFP4 everywhere; a kind set to bf16 stays nn.Linear.
        model = nt.convert(Model(depth=2), nt.Recipe(
            keep_first=0, keep_last=0, formats={"": "mxfp4",
                                                "attention": "bf16"}))
        converted = {n: m.format for n, m in model.named_modules()
                     if isinstance(m, nt.Linear)}
        self.assertEqual(converted, {f"blocks.{b}.{n}": "mxfp4"
                                     for b in range(2)
                                     for n in ("fc1", "fc2")})
        # An MX layer's blocks are 32 wide.
        with self.assertRaisesRegex(ValueError, r"in_features = 48; MXFP4 "
                                    r"needs a positive multiple of 32"):
            nt.Linear(48, 32, format="mxfp4")
        layer = nt.Linear(32, 32, format="mxfp8")
        with self.assertRaisesRegex(ValueError, r"16 tokens .*MXFP8 needs "
                                    r"a positive multiple of 32"):
            layer(torch.zeros(16, 32, dtype=torch.bfloat16))
        with self.assertRaisesRegex(ValueError, "format 'e2m1'"):
            nt.Linear(32, 32, format="e2m1")

    def test_every_block(self):
        model = nt.convert(Model(depth=3), nt.Recipe(keep_first=0,
                                                     keep_last=0))
        self.assertEqual(sum(isinstance(m, nt.Linear)
                             for m in model.modules()), 12)
        model = nt.convert(Model(depth=3), nt.Recipe(
            keep_first=0, keep_last=0, keep_kinds=["attention", "head"]))
        converted = [n for n, m in model.named_modules()
                     if isinstance(m, nt.Linear)]
        self.assertEqual(len(converted), 6)
        self.assertTrue(all("attn" not in n for n in converted))


if __name__ == "__main__":
    unittest.main()
