// A format per layer kind (formats=): the mixed recipe of MXFP8 attention
// projections and NVFP4 FFN GEMMs with the first and last blocks in BF16, a
// default format for the kinds not listed, formats that override keep-kinds,
// and the shapes an MX format cannot represent.
//
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=1 keep-last=1 formats=attention=mxfp8,ffn=nvfp4' \
// RUN:   -split-input-file 2>/dev/null | FileCheck %s --check-prefix=MIXED
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0 formats=mxfp4,ffn=nvfp4' \
// RUN:   -split-input-file 2>/dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0 formats=attention-bmm=mxfp8,attention=mxfp4,head=mxfp8,ffn=bf16' \
// RUN:   -split-input-file 2>/dev/null | FileCheck %s --check-prefix=OVERRIDE
// Without formats= every block-scaled GEMM is NVFP4, as before.
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0' \
// RUN:   -split-input-file | FileCheck %s --check-prefix=NVFP4
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0 formats=mxfp8' \
// RUN:   -verify-diagnostics -split-input-file | FileCheck %s --check-prefix=K48

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
#bq = affine_map<(b, m, n, k) -> (b, m, k)>
#bk = affine_map<(b, m, n, k) -> (b, n, k)>
#bs = affine_map<(b, m, n, k) -> (b, m, n)>

// MIXED-LABEL: func.func @blocks
// MIXED:       linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"
// MIXED:       linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp8"
// MIXED:       linalg.batch_matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// MIXED:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"
// MIXED:       linalg.matmul {{.*}}nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"
// MIXED:       linalg.matmul {{.*}}nvfp4.kind = "head", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// MIXED:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp4"
// MIXED:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 2 : i64, nvfp4.precision = "bf16"

// DEFAULT-LABEL: func.func @blocks
// DEFAULT:       linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 0 : i64, nvfp4.precision = "mxfp4"
// DEFAULT:       linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp4"
// DEFAULT:       linalg.batch_matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// DEFAULT:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"
// DEFAULT:       linalg.matmul {{.*}}nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp4"
// DEFAULT:       linalg.matmul {{.*}}nvfp4.kind = "head", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// DEFAULT:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp4"
// DEFAULT:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 2 : i64, nvfp4.precision = "nvfp4"

// keep-kinds' attention-bmm and head give way to the formats that name
// them; "attention" does not name the BMMs, "attention-bmm" does.
// OVERRIDE-LABEL: func.func @blocks
// OVERRIDE:       linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 0 : i64, nvfp4.precision = "mxfp4"
// OVERRIDE:       linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp4"
// OVERRIDE:       linalg.batch_matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp8"
// OVERRIDE:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// OVERRIDE:       linalg.matmul {{.*}}nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"
// OVERRIDE:       linalg.matmul {{.*}}nvfp4.kind = "head", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp8"
// OVERRIDE:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 1 : i64, nvfp4.precision = "mxfp4"
// OVERRIDE:       linalg.matmul {{.*}}nvfp4.kind = "ffn", nvfp4.layer = 2 : i64, nvfp4.precision = "bf16"

// NVFP4-LABEL: func.func @blocks
// NVFP4:       linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"
// NVFP4:       linalg.matmul {{.*}}nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"

// K48-LABEL: func.func @blocks
func.func @blocks(%h: tensor<16x64xbf16>, %w0: tensor<64x64xbf16> {nvfp4.weight},
    %w1: tensor<64x64xbf16> {nvfp4.weight}, %w2: tensor<64x64xbf16> {nvfp4.weight},
    %w3: tensor<64x64xbf16> {nvfp4.weight}, %w4: tensor<64x64xbf16> {nvfp4.weight},
    %w5: tensor<64x64xbf16> {nvfp4.weight},
    %q: tensor<2x16x64xbf16>, %k: tensor<2x16x64xbf16>, %binit: tensor<2x16x16xbf16>,
    %init: tensor<16x64xbf16>) -> (tensor<16x64xbf16>, tensor<2x16x16xbf16>) {
  %0 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64, nvfp4.kind = "attention"}
      ins(%h, %w0 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %1 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64, nvfp4.kind = "attention"}
      ins(%0, %w1 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %s = linalg.batch_matmul indexing_maps = [#bq, #bk, #bs] {nvfp4.layer = 1 : i64, nvfp4.kind = "attention"}
      ins(%q, %k : tensor<2x16x64xbf16>, tensor<2x16x64xbf16>) outs(%binit : tensor<2x16x16xbf16>) -> tensor<2x16x16xbf16>
  %2 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64, nvfp4.kind = "ffn"}
      ins(%1, %w2 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  // No kind: the default format (NVFP4 when there is no bare entry).
  %3 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64}
      ins(%2, %w3 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %4 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64, nvfp4.kind = "head"}
      ins(%3, %w4 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  // An explicit nvfp4.precision wins over formats.
  %5 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64, nvfp4.kind = "ffn", nvfp4.precision = "mxfp4"}
      ins(%4, %w5 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %6 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 2 : i64, nvfp4.kind = "ffn"}
      ins(%5, %w5 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  return %6, %s : tensor<16x64xbf16>, tensor<2x16x16xbf16>
}

// -----

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>

// K = 48 is a whole number of NVFP4 blocks but not of MX blocks (32): the
// GEMM stays BF16 with a remark; K = 64 takes the format.
// K48-LABEL: func.func @k_not_a_multiple_of_32
// K48:       linalg.matmul {{.*}}nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"
// K48:       linalg.matmul {{.*}}nvfp4.layer = 0 : i64, nvfp4.precision = "mxfp8"
func.func @k_not_a_multiple_of_32(%x: tensor<16x48xbf16>, %w: tensor<64x48xbf16> {nvfp4.weight},
    %w1: tensor<64x64xbf16> {nvfp4.weight}, %init: tensor<16x64xbf16>) -> tensor<16x64xbf16> {
  // expected-remark @+1 {{nvfp4-assign-precision: the contraction dimension 48 is not a multiple of 32 (the MX block); kept in bf16}}
  %0 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64}
      ins(%x, %w : tensor<16x48xbf16>, tensor<64x48xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %1 = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64}
      ins(%0, %w1 : tensor<16x64xbf16>, tensor<64x64xbf16>) outs(%init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  return %1 : tensor<16x64xbf16>
}
