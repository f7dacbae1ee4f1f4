// Debian's mlir-opt runs our conversion and pipeline once the plugin is
// loaded as both a dialect and a pass plugin. Plugin passes are registered
// after mlir-opt parses its flags, so they are named in --pass-pipeline.
// RUN: mlir-opt %s --load-dialect-plugin=%nvfp4_lib_dir/NVFP4Plugin.so \
// RUN:   --load-pass-plugin=%nvfp4_lib_dir/NVFP4Plugin.so \
// RUN:   --pass-pipeline='builtin.module(convert-nvfp4-to-reference)' | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%nvfp4_lib_dir/NVFP4Plugin.so \
// RUN:   --load-pass-plugin=%nvfp4_lib_dir/NVFP4Plugin.so \
// RUN:   --pass-pipeline='builtin.module(nvfp4-reference-pipeline)' | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func @amax
// CHECK: linalg.reduce
// CHECK-NOT: nvfp4.
// LLVM: llvm.func @amax
func.func @amax(%x: tensor<16x32xbf16>) -> f32 {
  %a = nvfp4.amax %x : tensor<16x32xbf16>
  return %a : f32
}
