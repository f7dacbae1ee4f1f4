# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
#
# Every kind of bad input to the nvfp4 Python API raises ValueError with a
# message naming the problem; none crashes the interpreter.

import unittest

import numpy as np

import nvfp4

GOOD = np.ones((2, 32), dtype=np.float32)


class ErrorTest(unittest.TestCase):
    def expect_error(self, fragment, function, *args, **kwargs):
        with self.assertRaises(ValueError) as context:
            function(*args, **kwargs)
        self.assertIn(fragment, str(context.exception))

    def test_wrong_dtype(self):
        self.expect_error("dtype", nvfp4.quantize, GOOD.astype(np.float64))
        self.expect_error("dtype", nvfp4.quantize, GOOD.astype(np.int32))
        self.expect_error("dtype", nvfp4.hadamard, GOOD.astype(np.float64))
        self.expect_error("numpy array", nvfp4.quantize, [1.0] * 16)
        self.expect_error("numpy array", nvfp4.quantize, None)

    def test_not_bf16_representable(self):
        # The RHT is defined on bfloat16; quantize takes FP32 input as it is
        # (test/python/robustness.py).
        x = GOOD.copy()
        x[1, 3] = np.float32(1.0) + np.float32(2.0 ** -20)
        self.expect_error("element 35", nvfp4.hadamard, x)
        self.expect_error("bfloat16", nvfp4.hadamard, x)
        x[1, 3] = np.float32(1.0) + np.float32(2.0 ** -10)  # a float16, not a bfloat16
        self.expect_error("element 35", nvfp4.hadamard, x.astype(np.float16))

    def test_bad_shapes(self):
        self.expect_error("multiple of 16", nvfp4.quantize,
                          np.ones((2, 24), np.float32))
        self.expect_error("multiple of 16", nvfp4.quantize, GOOD,
                          block=(16, 16))
        self.expect_error("at least 2 dimensions", nvfp4.quantize,
                          np.ones(32, np.float32), block=(16, 16))
        self.expect_error("at least one dimension", nvfp4.quantize,
                          np.array(1.0, dtype=np.float32))
        self.expect_error("non-empty", nvfp4.quantize,
                          np.ones((0, 16), np.float32))
        self.expect_error("multiple of 16", nvfp4.hadamard,
                          np.ones((4, 8), np.float32))

    def test_bad_options(self):
        self.expect_error("rounding", nvfp4.quantize, GOOD, rounding="RNE")
        self.expect_error("rounding", nvfp4.quantize, GOOD, rounding=1)
        for block in [(2, 16), (16,), (1, 32), "ab", 16, (1.0, 16)]:
            self.expect_error("block", nvfp4.quantize, GOOD, block=block)
        self.expect_error("seed", nvfp4.quantize, GOOD, seed=-1)
        self.expect_error("seed", nvfp4.quantize, GOOD, seed=2 ** 64)
        self.expect_error("seed", nvfp4.quantize, GOOD, seed=1.5)
        self.expect_error("amax", nvfp4.quantize, GOOD, amax=-1.0)
        self.expect_error("amax", nvfp4.quantize, GOOD, amax=float("nan"))
        self.expect_error("amax", nvfp4.quantize, GOOD, amax="big")
        self.expect_error("sign_mask", nvfp4.hadamard, GOOD, sign_mask=1 << 16)
        self.expect_error("sign_mask", nvfp4.hadamard, GOOD, sign_mask=-1)

    def test_bad_quantized_parts(self):
        q = nvfp4.quantize(GOOD)
        self.expect_error("QuantizedTensor", nvfp4.dequantize, GOOD)
        self.expect_error("shape", nvfp4.QuantizedTensor, q.codes,
                          q.scales.reshape(-1), q.amax)
        bad_codes = q.codes.copy()
        bad_codes[0, 0] = 16
        self.expect_error("4 bits", nvfp4.QuantizedTensor, bad_codes,
                          q.scales, q.amax)
        self.expect_error("dtype", nvfp4.QuantizedTensor,
                          q.codes.astype(np.int8), q.scales, q.amax)
        self.expect_error("amax", nvfp4.QuantizedTensor, q.codes, q.scales,
                          -1.0)
        self.expect_error("block", nvfp4.QuantizedTensor, q.codes, q.scales,
                          q.amax, (16, 16))

    def test_bad_layout_and_gemm_inputs(self):
        self.expect_error("2-D", nvfp4.swizzle_scales,
                          np.zeros((2, 2, 2), np.uint8))
        self.expect_error("dtype", nvfp4.swizzle_scales,
                          np.zeros((2, 2), np.float32))
        self.expect_error("bytes", nvfp4.unswizzle_scales,
                          np.zeros(100, np.uint8), 2, 2)
        self.expect_error("even", nvfp4.pack, np.zeros((2, 3), np.uint8))
        self.expect_error("4-bit", nvfp4.pack, np.full((2, 2), 17, np.uint8))
        a = nvfp4.quantize(GOOD)
        b = nvfp4.quantize(np.ones((3, 48), np.float32))
        self.expect_error("contraction", nvfp4.scaled_matmul, a, b)
        c = nvfp4.quantize(np.ones((2, 2, 32), np.float32))
        self.expect_error("2-D", nvfp4.scaled_matmul, a, c)
        self.expect_error("alpha", nvfp4.scaled_matmul, a, a, alpha="x")


if __name__ == "__main__":
    unittest.main()
