// Each fusion has its own switch; with all of them off nothing changes. (The
// greedy rewrite behind the pattern sets erases dead ops as it goes, so
// only remove-dead counts them.)
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false fold-hadamard=false fuse-output-amax=false fuse-epilogue-quantization=false fuse-dual-quantization=false share-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=true share-weight-quantization=false fold-hadamard=false fuse-output-amax=false fuse-epilogue-quantization=false fuse-dual-quantization=false share-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=AMAX-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=true fold-hadamard=false fuse-output-amax=false fuse-epilogue-quantization=false fuse-dual-quantization=false share-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=WEIGHT-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false fold-hadamard=true fuse-output-amax=false fuse-epilogue-quantization=false fuse-dual-quantization=false share-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=FOLD-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false fold-hadamard=false fuse-output-amax=true fuse-epilogue-quantization=false fuse-dual-quantization=false share-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=OUTPUT-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false fold-hadamard=false fuse-output-amax=false fuse-epilogue-quantization=true fuse-dual-quantization=false share-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=EPILOGUE-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false fold-hadamard=false fuse-output-amax=false fuse-epilogue-quantization=false fuse-dual-quantization=false share-quantization=false remove-dead=true' \
// RUN:   | FileCheck %s --check-prefix=DEAD-ONLY
// RUN: nvfp4-opt %s --nvfp4-fuse-quantization='share-amax=false share-weight-quantization=false fold-hadamard=false fuse-output-amax=false fuse-epilogue-quantization=false fuse-dual-quantization=true share-quantization=false remove-dead=false' \
// RUN:   | FileCheck %s --check-prefix=DUAL-ONLY

// OFF-LABEL:     func.func @fusions
// OFF-NOT:         nvfp4.amax
// OFF-NOT:         nvfp4.transpose
// OFF-NOT:         hadamard(
// OFF-NOT:         , f32
// OFF-COUNT-9:     nvfp4.quantize
// OFF-NOT:         nvfp4.scaled_matmul_quantize
// OFF-NOT:         nvfp4.dual_quantize
// FOLD-ONLY-LABEL: func.func @fusions
// FOLD-ONLY-NOT:   nvfp4.hadamard
// FOLD-ONLY:       hadamard(55272)
// FOLD-ONLY-NOT:   , f32
// EPILOGUE-ONLY-LABEL: func.func @fusions
// EPILOGUE-ONLY:   nvfp4.scaled_matmul_quantize %{{.*}}, %{{.*}} amax(%{{.*}})
// EPILOGUE-ONLY-NOT: , f32
// OUTPUT-ONLY-LABEL: func.func @fusions
// OUTPUT-ONLY:     nvfp4.hadamard
// OUTPUT-ONLY:     -> tensor<64x64xbf16>, f32
// AMAX-ONLY-LABEL: func.func @fusions
// AMAX-ONLY:       nvfp4.amax
// AMAX-ONLY-NOT:   nvfp4.transpose
// WEIGHT-ONLY-LABEL: func.func @fusions
// WEIGHT-ONLY-NOT: nvfp4.amax
// WEIGHT-ONLY:     nvfp4.transpose
// DEAD-ONLY-LABEL: func.func @fusions
// DEAD-ONLY-NOT:   nvfp4.amax
// DEAD-ONLY-NOT:   nvfp4.transpose
// DEAD-ONLY-COUNT-7: nvfp4.quantize
// DEAD-ONLY-NOT:   nvfp4.quantize
// DUAL-ONLY-LABEL: func.func @fusions
// DUAL-ONLY-NOT:   nvfp4.amax
// DUAL-ONLY:       nvfp4.dual_quantize %{{.*}} columnwise : tensor<64x32xbf16>
// DUAL-ONLY-NOT:   nvfp4.dual_quantize
// DUAL-ONLY-NOT:   nvfp4.transpose
func.func @fusions(%w: tensor<64x32xbf16>, %s: i64,
                   %x: !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                   %v: !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
                   %g: f32)
    -> (!nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        tensor<64x16xf32>, tensor<64x16xf32>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %qf = nvfp4.quantize %w : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %e = tensor.empty() : tensor<32x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
  %qd = nvfp4.quantize %wt : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  %qr = nvfp4.quantize %w : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %qt = nvfp4.quantize %wt : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %dead0 = nvfp4.quantize %w : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %dead1 = nvfp4.quantize %w rounding<stochastic> seed(%s) : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %h = nvfp4.hadamard %w : tensor<64x32xbf16>
  %qh = nvfp4.quantize %h : tensor<64x32xbf16>
      -> !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %c = nvfp4.scaled_matmul %qf, %x
      : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<64x64xbf16>
  %qc = nvfp4.quantize %c : tensor<64x64xbf16>
      -> !nvfp4.tensor<64x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d = nvfp4.scaled_matmul %qc, %v
      : !nvfp4.tensor<64x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x16xf32>
  %c2 = nvfp4.scaled_matmul %qf, %x
      : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
        !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> tensor<64x64xbf16>
  %qc2 = nvfp4.quantize %c2 amax(%g) : tensor<64x64xbf16>
      -> !nvfp4.tensor<64x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %d2 = nvfp4.scaled_matmul %qc2, %v
      : !nvfp4.tensor<64x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<16x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
      -> tensor<64x16xf32>
  return %qf, %qd, %qh, %d, %d2, %qr, %qt : !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>,
      !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      tensor<64x16xf32>, tensor<64x16xf32>,
      !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
