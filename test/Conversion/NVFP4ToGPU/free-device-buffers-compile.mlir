// On the nvfp4-compile path every device buffer of the host code is freed
// except the one the function returns (the caller's), for every chip; the
// manifest is unchanged by the deallocations (they are launch plumbing).
// RUN: for chip in sm_90a sm_100a sm_103a sm_120a; do \
// RUN:   nvfp4-compile %s --chip=$chip --emit=mlir --no-ptxas-check -o %t.$chip.mlir --report=%t.$chip.json; \
// RUN:   awk -v chip=$chip '/ = gpu.alloc /{a++} /gpu.dealloc /{d++} END{print chip, "allocs", a, "unfreed", a-d}' %t.$chip.mlir; \
// RUN: done | FileCheck %s
// CHECK: sm_90a allocs {{[1-9][0-9]*}} unfreed 1
// CHECK: sm_100a allocs {{[1-9][0-9]*}} unfreed 1
// CHECK: sm_103a allocs {{[1-9][0-9]*}} unfreed 1
// CHECK: sm_120a allocs {{[1-9][0-9]*}} unfreed 1
// RUN: FileCheck %s --check-prefix=HOST < %t.sm_100a.mlir
// HOST-LABEL: func.func @fprop
// HOST:         %[[Y:.*]] = gpu.alloc () : memref<32x48xbf16>
// HOST:         gpu.launch_func @nvfp4_kernels::@nvfp4_scaled_matmul
// HOST-NOT:     gpu.dealloc %[[Y]]
// HOST:         return
!x = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!w = !nvfp4.tensor<48x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @fprop(%x: tensor<32x64xbf16>, %w: tensor<48x64xbf16>) -> tensor<32x48xbf16> {
  %qx = nvfp4.quantize %x : tensor<32x64xbf16> -> !x
  %qw = nvfp4.quantize %w : tensor<48x64xbf16> -> !w
  %y = nvfp4.scaled_matmul %qx, %qw role<fprop> : !x, !w -> tensor<32x48xbf16>
  return %y : tensor<32x48xbf16>
}
