// keep-kinds and the late-training switches, with no blocks kept.
//
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0' \
// RUN:   | FileCheck %s --check-prefix=DEFAULT
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0 keep-kinds=attention' \
// RUN:   | FileCheck %s --check-prefix=ATTENTION
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0 keep-kinds=none' \
// RUN:   | FileCheck %s --check-prefix=NONE
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0 all-bf16=true' \
// RUN:   | FileCheck %s --check-prefix=ALL-BF16
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=0 keep-last=0 forward-bf16=true' \
// RUN:   | FileCheck %s --check-prefix=FORWARD-BF16
// keep-first=2 keep-last=8 given explicitly keep all three blocks; left at
// their defaults, they scale to the depth (floor(2*3/62) = floor(8*3/62) =
// 0: no block is kept, as with 0 and 0; assign-precision-depth.test).
// RUN: nvfp4-opt %s --nvfp4-assign-precision='keep-first=2 keep-last=8' | FileCheck %s --check-prefix=KEPT
// RUN: nvfp4-opt %s --nvfp4-assign-precision | FileCheck %s --check-prefix=DEFAULT

#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
#bq = affine_map<(b, m, n, k) -> (b, m, k)>
#bk = affine_map<(b, m, n, k) -> (b, n, k)>
#bs = affine_map<(b, m, n, k) -> (b, m, n)>

// DEFAULT-LABEL:  func.func @kinds
// DEFAULT:        linalg.matmul {{.*}}nvfp4.kind = "embedding", nvfp4.layer = 0 : i64, nvfp4.precision = "bf16"
// DEFAULT:        linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "nvfp4"
// DEFAULT:        linalg.batch_matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// DEFAULT:        linalg.matmul {{.*}}nvfp4.kind = "head", nvfp4.layer = 2 : i64, nvfp4.precision = "bf16"
// ATTENTION-LABEL: func.func @kinds
// ATTENTION:      linalg.matmul {{.*}}nvfp4.kind = "embedding", nvfp4.layer = 0 : i64, nvfp4.precision = "nvfp4"
// ATTENTION:      linalg.matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// ATTENTION:      linalg.batch_matmul {{.*}}nvfp4.kind = "attention", nvfp4.layer = 1 : i64, nvfp4.precision = "bf16"
// ATTENTION:      linalg.matmul {{.*}}nvfp4.kind = "head", nvfp4.layer = 2 : i64, nvfp4.precision = "nvfp4"
// NONE-LABEL:     func.func @kinds
// NONE-NOT:       "bf16"
// NONE:           return
// ALL-BF16-LABEL: func.func @kinds
// ALL-BF16-NOT:   "nvfp4"
// ALL-BF16:       return
// FORWARD-BF16-LABEL: func.func @kinds
// FORWARD-BF16-NOT:   "nvfp4"
// FORWARD-BF16:       return
// KEPT-LABEL:     func.func @kinds
// KEPT-NOT:       "nvfp4"
// KEPT:           return
func.func @kinds(%tokens: tensor<16x64xbf16>, %emb: tensor<32x64xbf16> {nvfp4.weight},
                 %wq: tensor<32x32xbf16> {nvfp4.weight}, %q: tensor<2x16x16xbf16>,
                 %k: tensor<2x16x16xbf16>, %s0: tensor<2x16x16xbf16>,
                 %head: tensor<64x32xbf16> {nvfp4.weight}, %init: tensor<16x32xbf16>,
                 %logits0: tensor<16x64xbf16>)
    -> (tensor<16x32xbf16>, tensor<2x16x16xbf16>, tensor<16x64xbf16>) {
  %h = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 0 : i64, nvfp4.kind = "embedding"}
      ins(%tokens, %emb : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %p = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64, nvfp4.kind = "attention"}
      ins(%h, %wq : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%init : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %s = linalg.batch_matmul indexing_maps = [#bq, #bk, #bs] {nvfp4.layer = 1 : i64, nvfp4.kind = "attention"}
      ins(%q, %k : tensor<2x16x16xbf16>, tensor<2x16x16xbf16>) outs(%s0 : tensor<2x16x16xbf16>) -> tensor<2x16x16xbf16>
  %l = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 2 : i64, nvfp4.kind = "head"}
      ins(%p, %head : tensor<16x32xbf16>, tensor<64x32xbf16>) outs(%logits0 : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  return %p, %s, %l : tensor<16x32xbf16>, tensor<2x16x16xbf16>, tensor<16x64xbf16>
}

// The late-training switches on a training step: all-bf16 keeps every GEMM
// in bf16, forward-bf16 only fprop.
// DEFAULT-LABEL:      func.func @training_step
// DEFAULT-COUNT-3:    nvfp4.precision = "nvfp4"
// ALL-BF16-LABEL:     func.func @training_step
// ALL-BF16-COUNT-3:   nvfp4.precision = "bf16"
// FORWARD-BF16-LABEL: func.func @training_step
// FORWARD-BF16:       nvfp4.precision = "bf16", nvfp4.role = "fprop"
// FORWARD-BF16:       nvfp4.precision = "nvfp4", nvfp4.role = "dgrad"
// FORWARD-BF16:       nvfp4.precision = "nvfp4", nvfp4.role = "wgrad"
#wg_a = affine_map<(o, i, t) -> (t, o)>
#wg_b = affine_map<(o, i, t) -> (t, i)>
#wg_c = affine_map<(o, i, t) -> (o, i)>
func.func @training_step(%x: tensor<32x64xbf16>, %w: tensor<48x64xbf16> {nvfp4.weight},
                         %dy: tensor<32x48xbf16>, %y0: tensor<32x48xbf16>,
                         %dx0: tensor<32x64xbf16>, %dw0: tensor<48x64xbf16>)
    -> (tensor<32x48xbf16>, tensor<32x64xbf16>, tensor<48x64xbf16>) {
  %y = linalg.matmul indexing_maps = [#x, #w, #y] {nvfp4.layer = 1 : i64, nvfp4.role = "fprop"}
      ins(%x, %w : tensor<32x64xbf16>, tensor<48x64xbf16>) outs(%y0 : tensor<32x48xbf16>) -> tensor<32x48xbf16>
  %dx = linalg.matmul {nvfp4.layer = 1 : i64, nvfp4.role = "dgrad"}
      ins(%dy, %w : tensor<32x48xbf16>, tensor<48x64xbf16>) outs(%dx0 : tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %dw = linalg.matmul indexing_maps = [#wg_a, #wg_b, #wg_c] {nvfp4.layer = 1 : i64, nvfp4.role = "wgrad"}
      ins(%dy, %x : tensor<32x48xbf16>, tensor<32x64xbf16>) outs(%dw0 : tensor<48x64xbf16>) -> tensor<48x64xbf16>
  return %y, %dx, %dw : tensor<32x48xbf16>, tensor<32x64xbf16>, tensor<48x64xbf16>
}
