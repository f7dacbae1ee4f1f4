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

# Annotated model IR: one attention projection and one FFN GEMM.
MODEL = """
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @block(%x: tensor<128x256xbf16>, %wq: tensor<256x256xbf16> {nvfp4.weight},
                 %w1: tensor<512x256xbf16> {nvfp4.weight}) -> (tensor<128x256xbf16>, tensor<128x512xbf16>) {
  %cst0 = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<128x256xbf16>
  %z1 = linalg.fill ins(%cst0 : bf16) outs(%e1 : tensor<128x256xbf16>) -> tensor<128x256xbf16>
  %q = linalg.matmul indexing_maps = [#mk, #nk, #mn] {nvfp4.layer = 0 : i64, nvfp4.kind = "attention"} ins(%x, %wq : tensor<128x256xbf16>, tensor<256x256xbf16>) outs(%z1 : tensor<128x256xbf16>) -> tensor<128x256xbf16>
  %e2 = tensor.empty() : tensor<128x512xbf16>
  %z2 = linalg.fill ins(%cst0 : bf16) outs(%e2 : tensor<128x512xbf16>) -> tensor<128x512xbf16>
  %h = linalg.matmul indexing_maps = [#mk, #nk, #mn] {nvfp4.layer = 0 : i64, nvfp4.kind = "ffn"} ins(%x, %w1 : tensor<128x256xbf16>, tensor<512x256xbf16>) outs(%z2 : tensor<128x512xbf16>) -> tensor<128x512xbf16>
  return %q, %h : tensor<128x256xbf16>, tensor<128x512xbf16>
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

    def test_formats_per_layer_kind(self):
        # MXFP8 attention, NVFP4 FFN (docs/Rationale.md, "A format per layer
        # kind"): the report's precision per GEMM and the kernels of each
        # format; on sm_100a the MXFP8 GEMM is the tcgen05 kind::mxf8f6f4
        # kernel (docs/Blackwell.md section 10). The dict, the str and the
        # list spellings are the same policy.
        spellings = [{"attention": "mxfp8", "ffn": "nvfp4"},
                     "attention=mxfp8,ffn=nvfp4",
                     ["attention=mxfp8", "ffn=nvfp4"]]
        for formats in spellings:
            ptx, report = nvfp4.compile(MODEL, chip="sm_100a", keep_first=0,
                                        keep_last=0, formats=formats,
                                        report=True)
            layers = {g["kind"]: g["precision"]
                      for g in report["precision"]["gemms"]}
            self.assertEqual(layers, {"attention": "mxfp8", "ffn": "nvfp4"},
                             formats)
            self.assertIn("_mxfp8_e4m3_mxfp8_e4m3_to_bf16_tcgen05_", ptx)
            self.assertIn("kind::mxf8f6f4.block_scale.block32", ptx)
            self.assertIn("kind::mxf4nvf4.block_scale.block16", ptx)
        # A default format (key None) for the kinds not listed.
        _, report = nvfp4.compile(MODEL, chip="sm_120a", emit="mlir",
                                  keep_first=0, keep_last=0,
                                  formats={None: "mxfp4", "ffn": "nvfp4"},
                                  report=True)
        self.assertEqual({g["kind"]: g["precision"]
                          for g in report["precision"]["gemms"]},
                         {"attention": "mxfp4", "ffn": "nvfp4"})
        # Without formats= every GEMM is NVFP4.
        _, report = nvfp4.compile(MODEL, chip="sm_100a", emit="mlir",
                                  keep_first=0, keep_last=0, report=True)
        self.assertEqual({g["precision"]
                          for g in report["precision"]["gemms"]}, {"nvfp4"})

    def test_formats_errors(self):
        with self.assertRaisesRegex(ValueError, "unknown format 'int4'"):
            nvfp4.compile(MODEL, formats={"ffn": "int4"})
        with self.assertRaisesRegex(ValueError, "fp8 GEMMs have no lowering"):
            nvfp4.compile(MODEL, formats="attention=fp8")
        with self.assertRaisesRegex(ValueError, "kind 'ffn' given twice"):
            nvfp4.compile(MODEL, formats=["ffn=mxfp8", "ffn=nvfp4"])
        with self.assertRaisesRegex(ValueError, "formats must be None"):
            nvfp4.compile(MODEL, formats=3)
        with self.assertRaisesRegex(ValueError, "must be a str"):
            nvfp4.compile(MODEL, formats={"ffn": 4})


if __name__ == "__main__":
    unittest.main()
