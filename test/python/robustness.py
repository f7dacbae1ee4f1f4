# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
#
# Issue 16's Python classes: a broadcast view whose contiguous copy cannot
# be allocated raises MemoryError (pybind11's ensure() returned null and the
# interpreter crashed); block scales with the sign bit or NaN are rejected;
# float32 is FP32 input (no rounding to bfloat16), float16 and uint16 (and
# ml_dtypes.bfloat16 where installed) are accepted; swizzle_scales replicates
# 16x16 tile scales; __version__; nvfp4.compile of an empty amax is a
# ValueError, not a SIGFPE of the interpreter.

import unittest
import warnings

import numpy as np

import nvfp4


def bf16_round(x):
    """Rounds float32 values to bfloat16 (nearest even) as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


class RobustnessTest(unittest.TestCase):
    def test_broadcast_view_too_large_to_copy(self):
        huge = np.broadcast_to(np.uint8(1), (2**40,))
        for function in (nvfp4.pack, nvfp4.unpack):
            with self.assertRaises(MemoryError):
                function(huge)
        with self.assertRaises(MemoryError):
            nvfp4.swizzle_scales(np.broadcast_to(np.uint8(1), (2**20, 2**20)))
        with self.assertRaises(MemoryError):
            nvfp4.QuantizedTensor(np.broadcast_to(np.uint8(1), (2**24, 2**16)),
                                  np.zeros((2**24, 2**12), np.uint8), 1.0)

    def test_scales_sign_and_nan(self):
        q = nvfp4.quantize(np.ones((1, 16), np.float32))
        for bits, text in ((0x80, "0x80"), (0xB8, "0xB8"), (0x7F, "0x7F"),
                           (0xFF, "0xFF")):
            with self.assertRaises(ValueError) as context:
                nvfp4.QuantizedTensor(q.codes, np.full_like(q.scales, bits), 1.0)
            self.assertIn("is " + text + ": block scales must be non-negative "
                          "and not NaN", str(context.exception))
        nvfp4.QuantizedTensor(q.codes, np.full_like(q.scales, 0x7E), 1.0)

    def test_float32_is_fp32_input(self):
        # amax 6 makes every scale factor 1 (S_enc = 448, s_b = 448), so the
        # codes are E2M1 of x itself. 1.25 + 2^-12 is above the tie between
        # 1.0 and 1.5 in FP32 (code 3, 1.5), but rounds to the tie 1.25 in
        # bfloat16, whose even neighbour is 1.0 (code 2).
        x = np.zeros((1, 16), np.float32)
        x[0, 0] = 6.0
        x[0, 1] = 1.25 + 2.0**-12
        self.assertEqual(bf16_round(x)[0, 1], 1.25)
        self.assertEqual(nvfp4.quantize(x).codes[0, 1], 3)
        self.assertEqual(nvfp4.quantize(bf16_round(x)).codes[0, 1], 2)

    def test_float16_and_bits_agree(self):
        rng = np.random.default_rng(7)
        x = bf16_round(rng.standard_normal((4, 32)).astype(np.float32) * 3)
        x16 = x.astype(np.float16)
        ref = nvfp4.quantize(x16.astype(np.float32))
        got = nvfp4.quantize(x16)
        self.assertEqual(got.codes.tolist(), ref.codes.tolist())
        self.assertEqual(got.scales.tolist(), ref.scales.tolist())
        bits = (x.view(np.uint32) >> 16).astype(np.uint16)
        self.assertEqual(nvfp4.quantize(bits).codes.tolist(),
                         nvfp4.quantize(x).codes.tolist())
        self.assertEqual(nvfp4.hadamard(x16.astype(np.float32)).tolist(),
                         nvfp4.hadamard(bf16_round(x16.astype(np.float32))).tolist())

    def test_ml_dtypes_bfloat16(self):
        try:
            import ml_dtypes
        except ImportError:
            self.skipTest("ml_dtypes is not installed")
        x = bf16_round(np.linspace(-4, 4, 64, dtype=np.float32).reshape(2, 32))
        b = x.astype(ml_dtypes.bfloat16)
        self.assertEqual(nvfp4.quantize(b).codes.tolist(),
                         nvfp4.quantize(x).codes.tolist())
        h = nvfp4.hadamard(b)
        self.assertEqual(h.dtype, b.dtype)
        self.assertEqual(h.astype(np.float32).tolist(), nvfp4.hadamard(x).tolist())

    def test_bad_dtype_names_the_choices(self):
        with self.assertRaises(ValueError) as context:
            nvfp4.quantize(np.ones((1, 16), np.float64))
        self.assertIn("float32, float16, ml_dtypes.bfloat16 or uint16",
                      str(context.exception))

    def test_swizzle_tile_scales(self):
        # A 32x32 tensor in 16x16 tiles has a 2x2 tile-scale matrix; tensor
        # cores read one scale per row, so each tile row covers 16 rows.
        tiles = np.array([[1, 2], [3, 4]], np.uint8)
        per_row = np.repeat(tiles, 16, axis=0)
        self.assertEqual(nvfp4.swizzle_scales(tiles, block=(16, 16)).tolist(),
                         nvfp4.swizzle_scales(per_row).tolist())
        with self.assertRaises(ValueError):
            nvfp4.swizzle_scales(tiles, block=(16, 8))

    def test_version(self):
        self.assertRegex(nvfp4.__version__, r"^\d+\.\d+\.\d+$")

    def test_compile_empty_amax(self):
        with self.assertRaises(ValueError) as context:
            nvfp4.compile("""
func.func @f(%x: tensor<0x16xbf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<0x16xbf16>
  return %a : f32
}""", chip="sm_90a")
        self.assertIn("nothing to compile for the GPU: the nvfp4 operations "
                      "need no kernel", str(context.exception))

    def test_compile_warns_about_host_computation(self):
        # An RHT kernel, then an elementwise tanh the GPU path leaves on the
        # host (math.tanh has no kernel lowering: it would need libdevice).
        text = """
func.func @f(%x: tensor<16x32xbf16>) -> tensor<16x32xf32> {
  %h = nvfp4.hadamard %x : tensor<16x32xbf16>
  %e = tensor.empty() : tensor<16x32xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<16x32xbf16>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %w = arith.extf %in : bf16 to f32
    %r = math.tanh %w : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  return %t : tensor<16x32xf32>
}"""
        with self.assertWarnsRegex(RuntimeWarning, "leaves .* on the host"):
            _, report = nvfp4.compile(text, chip="sm_90a", report=True)
        self.assertTrue(report["host_computation"])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nvfp4.compile("""
func.func @f(%x: tensor<16x32xbf16>) -> tensor<16x32xbf16> {
  %h = nvfp4.hadamard %x : tensor<16x32xbf16>
  return %h : tensor<16x32xbf16>
}""", chip="sm_90a")

    def test_compile_keep_defaults(self):
        with self.assertRaises(ValueError):
            nvfp4.compile("module {}", keep_first=-1)


if __name__ == "__main__":
    unittest.main()
