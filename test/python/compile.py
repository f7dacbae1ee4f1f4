# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
"""nvfp4.compile: the nvfp4-compile path from Python."""
import unittest

import nvfp4

GEMM = """
!a = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @f(%x: tensor<32x64xbf16>, %w: tensor<16x64xbf16>) -> tensor<32x16xf32> {
  %xq = nvfp4.quantize %x : tensor<32x64xbf16> -> !a
  %wq = nvfp4.quantize %w : tensor<16x64xbf16>
      -> !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %y = nvfp4.scaled_matmul %xq, %wq : !a,
      !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16> -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
"""


class CompileTest(unittest.TestCase):
    def test_ptx_for_each_chip(self):
        for chip, version in [("sm_103a", "8.8"), ("sm_100a", "8.8"),
                              ("sm_120a", "8.7"), ("sm_90a", "8.3")]:
            ptx = nvfp4.compile(GEMM, chip=chip)
            self.assertIn(f".target {chip}", ptx)
            self.assertIn(f".version {version}", ptx)
            self.assertIn(".entry nvfp4_scaled_matmul_32x16x64", ptx)

    def test_report(self):
        _, report = nvfp4.compile(GEMM, chip="sm_120a", emit="mlir", report=True)
        names = [k["name"] for k in report["kernels"]]
        self.assertEqual(len(names), 5)
        self.assertTrue(names[-1].startswith("nvfp4_scaled_matmul"))
        # The GEMM writes the function's result buffer.
        results = [b for b in report["buffers"] if "result" in b]
        self.assertEqual(results[0]["elements"], 32 * 16)

    def test_errors_are_value_errors(self):
        with self.assertRaisesRegex(ValueError, "unsupported chip 'sm_80'"):
            nvfp4.compile(GEMM, chip="sm_80")
        with self.assertRaisesRegex(ValueError, "expected"):
            nvfp4.compile("func.func @f(", chip="sm_100a")
        with self.assertRaisesRegex(ValueError, "unknown emit 'sass'"):
            nvfp4.compile(GEMM, emit="sass")
        with self.assertRaisesRegex(ValueError, "must be a str"):
            nvfp4.compile(b"bytes")


if __name__ == "__main__":
    unittest.main()
