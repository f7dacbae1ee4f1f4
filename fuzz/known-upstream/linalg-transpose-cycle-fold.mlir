// MLIR 22.1.8: a use-def cycle of linalg.transpose ops in a graph region
// (here the module body) crashes the canonicalizer in
// linalg::TransposeOp::fold (Debian's mlir-opt-22 -canonicalize crashes the
// same way). nvfp4's own passes handle it (GemmAnalysis stops at graph-region
// ops; the lowerings reject nvfp4 ops there); the fuzz target skips upstream
// folders on such inputs (hasUpstreamOpsInGraphRegion). Found while writing
// the issue-16 seeds, 2026-12-01.
%e = tensor.empty() : tensor<32x32xbf16>
%t = linalg.transpose ins(%u : tensor<32x32xbf16>) outs(%e : tensor<32x32xbf16>) permutation = [1, 0]
%u = linalg.transpose ins(%t : tensor<32x32xbf16>) outs(%e : tensor<32x32xbf16>) permutation = [1, 0]
%m = linalg.matmul {nvfp4.precision = "nvfp4"} ins(%t, %u : tensor<32x32xbf16>, tensor<32x32xbf16>) outs(%e : tensor<32x32xbf16>) -> tensor<32x32xbf16>
