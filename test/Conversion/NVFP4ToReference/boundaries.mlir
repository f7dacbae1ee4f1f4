// RUN: nvfp4-opt %s --convert-nvfp4-to-reference --split-input-file | FileCheck %s

// A block-scaled value becomes (i8 codes, i8 scale bits, f32 amax) across
// function signatures, calls, returns and scf regions.

!act = !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>

// CHECK-LABEL: func.func @callee
// CHECK-SAME: (%[[C:.*]]: tensor<16x32xi8>, %[[S:.*]]: tensor<16x2xi8>, %[[A:.*]]: f32)
// CHECK-SAME: -> (tensor<16x32xi8>, tensor<16x2xi8>, f32)
// CHECK: return %[[C]], %[[S]], %[[A]]
func.func @callee(%q: !act) -> !act {
  return %q : !act
}

// CHECK-LABEL: func.func @caller
// CHECK: %[[R:.*]]:3 = call @callee(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x32xi8>, tensor<16x2xi8>, f32)
// CHECK: scf.if %{{.*}} -> (tensor<16x32xi8>, tensor<16x2xi8>, f32)
// CHECK: scf.yield %[[R]]#0, %[[R]]#1, %[[R]]#2
// CHECK-NOT: nvfp4.
func.func @caller(%x: tensor<16x32xbf16>, %b: i1) -> tensor<16x32xf32> {
  %q = nvfp4.quantize %x : tensor<16x32xbf16> -> !act
  %r = call @callee(%q) : (!act) -> !act
  %s = scf.if %b -> !act {
    scf.yield %r : !act
  } else {
    scf.yield %q : !act
  }
  %d = nvfp4.dequantize %s : !act -> tensor<16x32xf32>
  return %d : tensor<16x32xf32>
}

// -----

// Swizzled scales have the padded 128x4 shape.
// CHECK-LABEL: func.func @swizzled_argument
// CHECK-SAME: (%{{.*}}: tensor<16x32xi8>, %{{.*}}: tensor<128x4xi8>, %{{.*}}: f32)
func.func @swizzled_argument(
    %q: !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>) {
  return
}
