# RUN: rm -rf %t && mkdir -p %t
# RUN: env NVFP4_CACHE_DIR=%t/cache %PYTHON %s %t
# REQUIRES: python-nvfp4, ptxas
"""nvfp4.layer_kernels without PyTorch and without a GPU: the annotated IR
written for a linear layer, the roles and quantizations the recipe passes
give it with each knob, the kernels nvfp4-compile makes of it (the
manifest's launches), the disk cache, the shape errors and the per-layer
policy of nvfp4-assign-precision."""
import json
import os
import subprocess
import sys
import unittest

from nvfp4 import layer_kernels as lk

WORK = sys.argv.pop(1)
SHAPE = lk.LayerShape(256, 128, 64)


def passes(ir, options):
    """The IR after the layer's recipe passes."""
    opt = lk.find_tool("nvfp4-opt")
    arguments = lk._recipe_pipeline(options).split("\t")
    return subprocess.run([opt, "-"] + arguments, input=ir, text=True,
                          capture_output=True, check=True).stdout


def quantizations(text):
    """(operand, block, stochastic, hadamard) of every nvfp4.quantize."""
    found = []
    for line in text.splitlines():
        if "nvfp4.quantize" not in line:
            continue
        operand = line.split("nvfp4.quantize")[1].split()[0]
        block = next(b for b in ("16x16", "1x32", "1x16")
                     if f"block = {b}" in line)
        found.append((operand, block, "rounding<stochastic>" in line,
                      "hadamard(" in line))
    return found


def kernels(manifest_path):
    with open(manifest_path) as f:
        manifest = json.load(f)
    return [k["name"].split("_")[1] for k in manifest["kernels"]], manifest


class LayerIR(unittest.TestCase):
    def test_ir_annotations(self):
        forward = lk.forward_ir(SHAPE)
        self.assertIn("func.func @forward(%x: tensor<256x128xbf16>, "
                      "%w: tensor<64x128xbf16> {nvfp4.weight})", forward)
        self.assertIn('nvfp4.role = "fprop"', forward)
        backward = lk.backward_ir(SHAPE)
        self.assertIn("%dy: tensor<256x64xbf16>, %wt: tensor<128x64xbf16> "
                      "{nvfp4.weight}, %dyt: tensor<64x256xbf16>, "
                      "%xt: tensor<128x256xbf16>, %seed: i64", backward)
        for role in ("dgrad", "wgrad"):
            self.assertIn(f'nvfp4.role = "{role}"', backward)
        self.assertEqual(lk.layer_ir(SHAPE), forward + "\n" + backward)

    def test_full_recipe(self):
        options = lk.RecipeOptions()
        forward = passes(lk.forward_ir(SHAPE), options)
        self.assertEqual(quantizations(forward),
                         [("%arg0", "1x16", False, False),
                          ("%arg1", "16x16", False, False)])
        self.assertIn("role<fprop>", forward)
        backward = passes(lk.backward_ir(SHAPE), options)
        # dgrad: dY stochastic 1x16, W^T 16x16; wgrad: RHT on both, SR on
        # dY^T; the seeds come from argument 4.
        self.assertEqual(quantizations(backward),
                         [("%arg0", "1x16", True, False),
                          ("%arg1", "16x16", False, False),
                          ("%arg2", "1x16", True, True),
                          ("%arg3", "1x16", False, True)])
        self.assertIn("role<dgrad>", backward)
        self.assertIn("role<wgrad>", backward)
        self.assertIn("arith.addi %arg4", backward)
        self.assertNotIn("linalg.matmul", forward + backward)

    def test_knobs(self):
        no_rht = passes(lk.backward_ir(SHAPE), lk.RecipeOptions(rht=False))
        self.assertEqual([q[3] for q in quantizations(no_rht)],
                         [False] * 4)
        no_sr = passes(lk.backward_ir(SHAPE),
                       lk.RecipeOptions(stochastic_rounding=False))
        self.assertEqual([q[2] for q in quantizations(no_sr)], [False] * 4)
        self.assertNotIn("arith.addi", no_sr)
        no_2d = passes(lk.forward_ir(SHAPE), lk.RecipeOptions(weight_2d=False))
        self.assertEqual([q[1] for q in quantizations(no_2d)],
                         ["1x16", "1x16"])


    def test_mx_formats(self):
        # An MX layer: both operands of all three GEMMs in that format,
        # 1x32, round to nearest, no RHT whatever the knobs say.
        for name, element in (("mxfp8", "f8E4M3FN"), ("mxfp4", "f4E2M1FN")):
            options = lk.RecipeOptions(format=name)
            forward = passes(lk.forward_ir(SHAPE), options)
            backward = passes(lk.backward_ir(SHAPE), options)
            for text, count in ((forward, 2), (backward, 4)):
                self.assertEqual([q[1:] for q in quantizations(text)],
                                 [("1x32", False, False)] * count, name)
                mx_type = f"x{element}, scale = f8E8M0FNU, block = 1x32>"
                self.assertTrue(all(mx_type in line for line in
                                    text.splitlines()
                                    if "nvfp4.quantize" in line), name)
                self.assertNotIn("linalg.matmul", text)
            self.assertIn(f'nvfp4.precision = "{name}"', backward)
            self.assertEqual(options, lk.RecipeOptions().with_format(name))
            self.assertNotEqual(options, lk.RecipeOptions())
            self.assertIn(f"format='{name}'", repr(options))
        # TE's HYBRID MXFP8: the gradient operands (dY of dgrad, dY^T of
        # wgrad: arguments 0 and 2) in E5M2, W^T and X^T in E4M3; the
        # forward is all E4M3.
        hybrid = lk.RecipeOptions(format="mxfp8", mxfp8_gradients="e5m2")
        elements = {}
        for line in passes(lk.backward_ir(SHAPE), hybrid).splitlines():
            if "nvfp4.quantize" in line:
                operand = line.split("nvfp4.quantize")[1].split()[0]
                elements[operand] = ("f8E5M2" if "xf8E5M2," in line else
                                     "f8E4M3FN" if "xf8E4M3FN," in line
                                     else "?")
        self.assertEqual(elements, {"%arg0": "f8E5M2", "%arg1": "f8E4M3FN",
                                    "%arg2": "f8E5M2", "%arg3": "f8E4M3FN"})
        self.assertNotIn("f8E5M2", passes(lk.forward_ir(SHAPE), hybrid))
        self.assertNotEqual(hybrid, lk.RecipeOptions(format="mxfp8"))
        # The knob means nothing to other formats: same options, same keys.
        for name in ("nvfp4", "mxfp4"):
            self.assertEqual(
                lk.RecipeOptions(format=name, mxfp8_gradients="e5m2"),
                lk.RecipeOptions(format=name))
            self.assertEqual(
                lk._recipe_pipeline(lk.RecipeOptions(
                    format=name, mxfp8_gradients="e5m2")),
                lk._recipe_pipeline(lk.RecipeOptions(format=name)))
        with self.assertRaisesRegex(ValueError, "mxfp8_gradients 'e3m4'"):
            lk.RecipeOptions(mxfp8_gradients="e3m4")
        # NVFP4 layers keep the pipeline (and cache keys) they had.
        self.assertNotIn("formats", lk._recipe_pipeline(lk.RecipeOptions()))
        with self.assertRaisesRegex(ValueError, "format 'fp8': a layer "
                                    "format is one of nvfp4, mxfp8, mxfp4"):
            lk.RecipeOptions(format="fp8")


class LayerKernelsCompiled(unittest.TestCase):
    def test_kernels_and_cache(self):
        cache = lk.KernelCache(os.path.join(WORK, "k"))
        paths = lk.compile_layer(SHAPE, lk.RecipeOptions(), "sm_90a", cache)
        self.assertEqual(cache.compiles, 2)
        names, forward = kernels(paths["forward"][1])
        self.assertEqual(names, ["amax", "quantize", "amax", "quantize",
                                 "scaled"])
        self.assertEqual([a.get("argument") for a in forward["buffers"]
                          if "argument" in a], [0, 1])
        names, backward = kernels(paths["backward"][1])
        self.assertEqual(names, ["amax", "quantize", "amax", "quantize",
                                 "scaled", "rht", "rht", "rht", "rht",
                                 "scaled"])
        seeds = [p for k in backward["kernels"] for p in k["params"]
                 if "seed_stream" in p]
        self.assertEqual([(p["argument"], p["seed_stream"]) for p in seeds],
                         [(4, 0), (4, 1)])
        self.assertFalse(backward.get("host_computation"))
        self.assertTrue(paths["forward"][0].endswith("kernels.cubin"))
        # Compiled once: a second lookup (another cache object, as a new
        # process would have) finds both.
        again = lk.KernelCache(cache.directory)
        self.assertEqual(lk.compile_layer(SHAPE, lk.RecipeOptions(),
                                          "sm_90a", again), paths)
        self.assertEqual(again.compiles, 0)
        # Other knobs, chips or shapes are other entries.
        keys = {lk.KernelCache.key(lk.forward_ir(s), lk._recipe_pipeline(o),
                                   c)
                for s, o, c in ((SHAPE, lk.RecipeOptions(), "sm_90a"),
                                (SHAPE, lk.RecipeOptions(rht=False),
                                 "sm_90a"),
                                (SHAPE, lk.RecipeOptions(), "sm_100a"),
                                (lk.LayerShape(512, 128, 64),
                                 lk.RecipeOptions(), "sm_90a"))}
        self.assertEqual(len(keys), 4)
        # A damaged entry is compiled again.
        os.unlink(paths["backward"][1])
        lk.compile_layer(SHAPE, lk.RecipeOptions(), "sm_90a", again)
        self.assertEqual(again.compiles, 1)

    def test_without_compiler(self):
        cache = lk.KernelCache(os.path.join(WORK, "k"))
        lk.compile_layer(SHAPE, lk.RecipeOptions(), "sm_90a", cache)
        os.environ["NVFP4_TOOLS_DIR"] = os.path.join(WORK, "no-tools")
        try:
            # A prepared cache is used as it is ...
            lk.compile_layer(SHAPE, lk.RecipeOptions(), "sm_90a", cache)
            # ... a miss says what to do.
            with self.assertRaisesRegex(lk.CompilerUnavailable,
                                        "no compiled kernels for forward of "
                                        "LayerShape.tokens=512.*set "
                                        "NVFP4_TOOLS_DIR"):
                lk.compile_layer(lk.LayerShape(512, 128, 64),
                                 lk.RecipeOptions(), "sm_90a", cache)
        finally:
            del os.environ["NVFP4_TOOLS_DIR"]

    def test_shape_errors(self):
        for args, fragment in (
                ((250, 128, 64), "tokens = 250: NVFP4 needs a positive "
                                 "multiple of 16 .it is K, the contracted "
                                 "dimension, of the wgrad GEMM"),
                ((256, 120, 64), "in_features = 120.*fprop"),
                ((256, 128, 0), "out_features = 0.*dgrad"),
                ((256.0, 128, 64), "tokens must be an int")):
            with self.assertRaisesRegex(ValueError, fragment):
                lk.LayerShape(*args)
        # 16 is enough for NVFP4, an MX layer needs 32 in every extent.
        for shape, name in (((256, 128, 48), "out_features = 48"),
                            ((272, 128, 64), "tokens = 272")):
            with self.assertRaisesRegex(ValueError, name + ": MXFP4 "
                                        "quantizes in blocks of 32"):
                lk.compile_layer(lk.LayerShape(*shape),
                                 lk.RecipeOptions(format="mxfp4"), "sm_90a",
                                 lk.KernelCache(os.path.join(WORK, "k")))
        with self.assertRaisesRegex(ValueError, "compute capability 8.0"):
            lk.chip_of_capability(8, 0)
        self.assertEqual(lk.chip_of_capability(9, 0), "sm_90a")


class Policy(unittest.TestCase):
    def test_keep_first_last(self):
        cache = lk.KernelCache(os.path.join(WORK, "policy"))
        layers = [(b, kind, 64, 64) for b in range(4)
                  for kind in ("attention", "ffn")] + [(None, "head", 64, 256)]
        self.assertEqual(lk.layer_policy(layers, 1, 1, cache=cache),
                         [False, False, True, True, True, True, False, False,
                          False])
        self.assertEqual(lk.layer_policy(layers, 0, 0, cache=cache),
                         [True] * 8 + [False])
        self.assertEqual(lk.layer_policy(layers, 0, 0, ["attention"],
                                         cache=cache),
                         [False, True] * 4 + [False])
        # Cached: answered without nvfp4-opt.
        os.environ["NVFP4_TOOLS_DIR"] = os.path.join(WORK, "no-tools")
        try:
            self.assertEqual(lk.layer_policy(layers, 1, 1, cache=cache)[2],
                             True)
            with self.assertRaises(lk.CompilerUnavailable):
                lk.layer_policy(layers, 2, 1, cache=cache)
        finally:
            del os.environ["NVFP4_TOOLS_DIR"]

    def test_formats(self):
        cache = lk.KernelCache(os.path.join(WORK, "policy"))
        layers = [(b, kind, 64, 64) for b in range(4)
                  for kind in ("attention", "ffn")] + [(None, "head", 64, 256)]
        self.assertEqual(
            lk.layer_formats(layers, 1, 1, formats={"attention": "mxfp8",
                                                    "ffn": "nvfp4"},
                             cache=cache),
            [None, None, "mxfp8", "nvfp4", "mxfp8", "nvfp4", None, None,
             None])
        self.assertEqual(lk.layer_formats(layers, 0, 0, formats="mxfp4",
                                          cache=cache),
                         ["mxfp4"] * 8 + [None])
        self.assertEqual(lk.layer_formats(layers, 0, 0, cache=cache),
                         ["nvfp4"] * 8 + [None])
        # The MX block is 32: a 48-feature layer stays BF16 in MXFP4 (the
        # pass leaves a remark), NVFP4 takes it.
        odd = [(0, "ffn", 48, 64), (0, "ffn", 64, 64)]
        self.assertEqual(lk.layer_formats(odd, 0, 0, formats="mxfp4",
                                          cache=cache), [None, "mxfp4"])
        self.assertEqual(lk.layer_formats(odd, 0, 0, cache=cache),
                         ["nvfp4", "nvfp4"])
        self.assertEqual(lk.format_entries({None: "mxfp4", "attention":
                                            "mxfp8"}),
                         ["mxfp4", "attention=mxfp8"])
        with self.assertRaisesRegex(RuntimeError, "nvfp4-assign-precision "
                                    "failed"):
            lk.layer_formats(layers, 0, 0, formats="attention=fp9",
                             cache=cache)

    def test_stream_seeds(self):
        # SplitMix64's published outputs for seed 0.
        self.assertEqual([lk.derive_stream_seed(0, i) for i in range(2)],
                         [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4])


if __name__ == "__main__":
    unittest.main()
