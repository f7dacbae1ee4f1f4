// The precision report of a module with a BF16 GEMM, an NVFP4 GEMM whose
// recipe is planned (linalg, before nvfp4-apply-recipe), an applied NVFP4
// wgrad (nvfp4 ops), a GEMM without nvfp4.precision and a head without a
// layer.
//
// RUN: nvfp4-opt %s --nvfp4-print-precision-report=svg-file=%t.svg -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TABLE
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// RUN: nvfp4-opt %s --nvfp4-print-precision-report="json=true output-file=-" -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=JSON
// The module itself is unchanged, and the report (on stderr by default)
// never interleaves with the IR on stdout:
// RUN: nvfp4-opt %s --nvfp4-print-precision-report=json=true 2>/dev/null | FileCheck %s --check-prefix=IR
// RUN: nvfp4-opt %s --nvfp4-print-precision-report=json=true 2>/dev/null | FileCheck %s --check-prefix=NO-REPORT
// NO-REPORT-NOT: "summary"
// An unwritable output-file is an error.
// RUN: not nvfp4-opt %s --nvfp4-print-precision-report=output-file=%t.missing/r.txt -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-FILE
// NO-FILE: error: nvfp4-print-precision-report: cannot write '{{.*}}r.txt'

//
// FLOPs: bf16 2*16*32*64 = 65536; planned 2*32*48*64 = 196608; applied
// 2*48*64*32 = 196608; unassigned 2*16*16*32 = 16384; head
// 2*16*128*32 = 131072. NVFP4 = 393216 of 606208 = 64.86 %.

// TABLE:      NVFP4 precision report: 5 GEMMs, 2 in NVFP4
// TABLE-NEXT: GEMM FLOPs: 606208 total, 393216 in NVFP4 (64.86%)
// TABLE:      Per layer:
// TABLE-NEXT: layer  gemms  nvfp4                 flops           nvfp4 flops     share
// TABLE-NEXT:     0      2      0                 81920                     0     0.00%
// TABLE-NEXT:     1      2      2                393216                393216   100.00%
// TABLE-NEXT:     -      1      0                131072                     0     0.00%
// TABLE:      Per GEMM:
// TABLE-NEXT: layer  kind       role   source    precision A              B              batch x M x N x K                     flops  location
// TABLE-NEXT:     0  ffn        fprop  inferred  bf16      -              -              1x16x64x32                          65536  precision-report.mlir:{{[0-9]+}}:8
// TABLE-NEXT:     1  ffn        dgrad  annotated nvfp4*    1x16+sr        16x16          1x32x48x64                         196608  precision-report.mlir:{{[0-9]+}}:8
// TABLE-NEXT:     1  ffn        wgrad  op        nvfp4     1x16+rht+sr    1x16+rht       1x48x64x32                         196608  precision-report.mlir:{{[0-9]+}}:8
// TABLE-NEXT:     0  -          fprop  assumed   unassigned -              -              1x16x16x32                          16384  precision-report.mlir:{{[0-9]+}}:8
// TABLE-NEXT:     -  head       fprop  inferred  bf16      -              -              1x16x128x32                        131072  precision-report.mlir:{{[0-9]+}}:8
// TABLE-NEXT: (nvfp4*: recipe planned, nvfp4-apply-recipe not run yet)

// SVG:      <svg xmlns="http://www.w3.org/2000/svg"
// SVG:      NVFP4 share of GEMM FLOPs per layer (overall 64.86%)
// SVG:      <title>layer 0: 0.00% of 81920 GEMM FLOPs in NVFP4</title>
// SVG:      <title>layer 1: 100.00% of 393216 GEMM FLOPs in NVFP4</title>
// SVG:      <title>layer other: 0.00% of 131072 GEMM FLOPs in NVFP4</title>
// SVG:      </svg>

// JSON:      "m": 48,
// JSON-NEXT: "n": 64,
// JSON-NEXT: "op": "nvfp4.scaled_matmul",
// JSON-NEXT: "operands": [
// JSON-NEXT:   {
// JSON-NEXT:     "block": "1x16",
// JSON-NEXT:     "format": "nvfp4",
// JSON-NEXT:     "rht": true,
// JSON-NEXT:     "rounding": "stochastic"
// JSON-NEXT:   },
// JSON-NEXT:   {
// JSON-NEXT:     "block": "1x16",
// JSON-NEXT:     "format": "nvfp4",
// JSON-NEXT:     "rht": true,
// JSON-NEXT:     "rounding": "nearest_even"
// JSON-NEXT:   }
// JSON-NEXT: ],
// JSON-NEXT: "precision": "nvfp4",
// JSON-NEXT: "recipe_applied": true,
// JSON-NEXT: "rht": true,
// JSON-NEXT: "role": "wgrad",
// JSON-NEXT: "role_source": "op",
// JSON-NEXT: "sr": true
// JSON:      "layers": [
// JSON:      "summary": {
// JSON-NEXT:   "flops": 606208,
// JSON-NEXT:   "flops_by_precision": {
// JSON-NEXT:     "bf16": 196608,
// JSON-NEXT:     "nvfp4": 393216,
// JSON-NEXT:     "unassigned": 16384
// JSON-NEXT:   },
// JSON-NEXT:   "gemms": 5,
// JSON-NEXT:   "nvfp4_flop_share": 0.6486486{{[0-9]*}},
// JSON-NEXT:   "nvfp4_flops": 393216,
// JSON-NEXT:   "nvfp4_gemms": 2

// IR-LABEL: func.func @model
// IR:         linalg.matmul
// IR:         nvfp4.scaled_matmul

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
func.func @model(%x: tensor<16x32xbf16>, %w: tensor<64x32xbf16> {nvfp4.weight},
                 %dy: tensor<32x64xbf16>, %w2: tensor<64x48xbf16> {nvfp4.weight},
                 %a: tensor<48x32xbf16>, %b: tensor<64x32xbf16>, %s: i64,
                 %head: tensor<128x32xbf16> {nvfp4.weight},
                 %i0: tensor<16x64xbf16>, %i1: tensor<32x48xbf16>,
                 %i2: tensor<16x16xbf16>, %i3: tensor<16x128xbf16>)
    -> (tensor<16x64xbf16>, tensor<32x48xbf16>, tensor<48x64xf32>,
        tensor<16x16xbf16>, tensor<16x128xbf16>) {
  %0 = linalg.matmul indexing_maps = [#x, #w, #y]
      {nvfp4.layer = 0 : i64, nvfp4.kind = "ffn", nvfp4.precision = "bf16"}
      ins(%x, %w : tensor<16x32xbf16>, tensor<64x32xbf16>)
      outs(%i0 : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %1 = linalg.matmul
      {nvfp4.layer = 1 : i64, nvfp4.kind = "ffn", nvfp4.role = "dgrad", nvfp4.precision = "nvfp4"}
      ins(%dy, %w2 : tensor<32x64xbf16>, tensor<64x48xbf16>)
      outs(%i1 : tensor<32x48xbf16>) -> tensor<32x48xbf16>
  %ah = nvfp4.hadamard %a : tensor<48x32xbf16>
  %qa = nvfp4.quantize %ah rounding<stochastic> seed(%s) : tensor<48x32xbf16>
      -> !nvfp4.tensor<48x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %bh = nvfp4.hadamard %b : tensor<64x32xbf16>
  %qb = nvfp4.quantize %bh : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %2 = nvfp4.scaled_matmul %qa, %qb role<wgrad>
      {nvfp4.layer = 1 : i64, nvfp4.kind = "ffn", nvfp4.precision = "nvfp4"}
      : !nvfp4.tensor<48x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<48x64xf32>
  %3 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64}
      ins(%x, %x : tensor<16x32xbf16>, tensor<16x32xbf16>)
      outs(%i2 : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  %4 = linalg.matmul indexing_maps = [#x, #w, #y]
      {nvfp4.kind = "head", nvfp4.precision = "bf16"}
      ins(%x, %head : tensor<16x32xbf16>, tensor<128x32xbf16>)
      outs(%i3 : tensor<16x128xbf16>) -> tensor<16x128xbf16>
  return %0, %1, %2, %3, %4 : tensor<16x64xbf16>, tensor<32x48xbf16>, tensor<48x64xf32>,
      tensor<16x16xbf16>, tensor<16x128xbf16>
}
