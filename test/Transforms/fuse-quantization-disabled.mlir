// Each fusion has its own switch; with all three off nothing changes. (The
// greedy rewrite behind share-amax and share-weight-quantization erases
// dead ops as it goes, so only remove-dead counts them.)
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-weight-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=AMAX-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=WEIGHT-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false' \
// RUN:   | FileCheck %s --check-prefix=DEAD-ONLY

// OFF-LABEL:     func.func @fusions
// OFF-NOT:         nvfp4.amax
// OFF-NOT:         nvfp4.transpose
// OFF-COUNT-4:     nvfp4.quantize
// AMAX-ONLY-LABEL: func.func @fusions
// AMAX-ONLY:       nvfp4.amax
// AMAX-ONLY-NOT:   nvfp4.transpose
// WEIGHT-ONLY-LABEL: func.func @fusions
// WEIGHT-ONLY-NOT: nvfp4.amax
// WEIGHT-ONLY:     nvfp4.transpose
// DEAD-ONLY-LABEL: func.func @fusions
// DEAD-ONLY-NOT:   nvfp4.amax
// DEAD-ONLY-NOT:   nvfp4.transpose
// DEAD-ONLY-COUNT-2: nvfp4.quantize
// DEAD-ONLY-NOT:   nvfp4.quantize
func.func @fusions(%w: tensor<64x32xbf16>, %s: i64)
    -> (!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %qf = nvfp4.quantize %w : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %e = tensor.empty() : tensor<32x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
  %qd = nvfp4.quantize %wt : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %dead0 = nvfp4.quantize %w : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %dead1 = nvfp4.quantize %w rounding<stochastic> seed(%s) : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %qf, %qd : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}
