// RUN: not nvfp4-compile %s --chip=sm_90a -o %t.ptx 2>&1 | FileCheck %s
// RUN: not nvfp4-compile %s --chip=sm_103a -o %t.ptx 2>&1 | FileCheck %s

// An op inside a linalg op's kernel that nothing lowers for the GPU (here
// arith.truncf to f8E8M0FNU, the OCP E8M0 rounding of
// examples/upstream_scaling.mlir's @mxfp4_quantize_ocp) is one diagnostic
// at the op, naming the kernel -- not LLVM's "missing
// LLVMTranslationDialectInterface registration".

// CHECK: error: 'arith.truncf' op has no GPU lowering (in kernel 'nvfp4_linalg_
// CHECK-SAME: write it with integer ops, arith.scaling_truncf / scaling_extf or the nvfp4 ops
// CHECK-NOT: LLVMTranslationDialectInterface
func.func @e8m0(%x: tensor<128x8xf32>) -> tensor<128x8xf8E8M0FNU> {
  %e = tensor.empty() : tensor<128x8xf8E8M0FNU>
  %y = linalg.map ins(%x : tensor<128x8xf32>) outs(%e : tensor<128x8xf8E8M0FNU>)
    (%v: f32, %unused: f8E8M0FNU) {
      %s = arith.truncf %v : f32 to f8E8M0FNU
      linalg.yield %s : f8E8M0FNU
    }
  return %y : tensor<128x8xf8E8M0FNU>
}
