// Debian's unmodified mlir-opt parses, verifies and prints nvfp4 IR once the
// plugin is loaded, and rejects it without the plugin.
// RUN: mlir-opt %s --load-dialect-plugin=%nvfp4_lib_dir/NVFP4Plugin.so | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%nvfp4_lib_dir/NVFP4Plugin.so -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

!act = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// CHECK-LABEL: func @f
// CHECK: nvfp4.quantize %{{.*}} : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK: nvfp4.unpack
// CANON-LABEL: func @f
// CANON-NOT: nvfp4.pack
// NOPLUGIN: error: {{.*}} type created with unregistered dialect
func.func @f(%x: tensor<32x64xbf16>) -> tensor<32x64xf4E2M1FN> {
  %q = nvfp4.quantize %x : tensor<32x64xbf16> -> !act
  %c, %s, %a = nvfp4.unpack %q : !act
  %p = nvfp4.pack %c, %s, %a : !act
  %c2, %s2, %a2 = nvfp4.unpack %p : !act
  return %c2 : tensor<32x64xf4E2M1FN>
}
