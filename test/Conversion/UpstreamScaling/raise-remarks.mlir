// RUN: nvfp4-opt %s --nvfp4-raise-upstream-scaling=emit-remarks --split-input-file -verify-diagnostics | FileCheck %s
// RUN: nvfp4-opt %s --nvfp4-raise-upstream-scaling --split-input-file 2>&1 | FileCheck %s --check-prefix=QUIET

// Upstream forms that differ from nvfp4's MX semantics somewhere are left
// exactly as they are; with emit-remarks each says why. Without it the pass
// is silent.
// QUIET-NOT: remark: left unchanged
// QUIET-NOT: = nvfp4.

// CHECK-LABEL: func.func @ocp_floor
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @ocp_floor(%x: tensor<2x64xf32>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.25 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf32> into tensor<2x2x32xf32>
  %e0 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x2x32xf32>) outs(%init : tensor<2x2xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %m = math.absf %in : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x2xf32>) outs(%e1 : tensor<2x2xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %sc = arith.truncf %v : f32 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e2 : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: the scale exponent is rounded down (arith.truncf to f8E8M0FNU keeps the exponent bits: floor(log2 v), the OCP MX rule); nvfp4 rounds it up}}
  %q0 = arith.scaling_truncf %x, %sf : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf4E2M1FN>
  %e3 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %q = linalg.map ins(%x, %q0 : tensor<2x64xf32>, tensor<2x64xf4E2M1FN>) outs(%e3 : tensor<2x64xf4E2M1FN>)
      (%xi: f32, %qi: f4E2M1FN, %unused: f4E2M1FN) {
        %fin = math.isfinite %xi : f32
        %isnan = math.isnan %xi : f32
        %bits = arith.bitcast %xi : f32 to i32
        %z = arith.constant 0 : i32
        %neg = arith.cmpi slt, %bits, %z : i32
        %maxp = arith.constant 6.0 : f4E2M1FN
        %maxn = arith.constant -6.0 : f4E2M1FN
        %nanp = arith.constant 6.0 : f4E2M1FN
        %nann = arith.constant 6.0 : f4E2M1FN
        %sat = arith.select %neg, %maxn, %maxp : f4E2M1FN
        %nanv = arith.select %neg, %nann, %nanp : f4E2M1FN
        %special = arith.select %isnan, %nanv, %sat : f4E2M1FN
        %r = arith.select %fin, %qi, %special : f4E2M1FN
        linalg.yield %r : f4E2M1FN
      }
  return %q, %s : tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @wrong_divisor
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @wrong_divisor(%x: tensor<2x64xf32>) -> (tensor<2x64xf8E5M2>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.00223214296 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf32> into tensor<2x2x32xf32>
  %e0 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x2x32xf32>) outs(%init : tensor<2x2xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %m = math.absf %in : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x2xf32>) outs(%e1 : tensor<2x2xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %b = arith.bitcast %v : f32 to i32
        %r = arith.addi %b, %c8388607 : i32
        %sh = arith.shrui %r, %c23 : i32
        %cl = arith.minui %sh, %c254 : i32
        %tiny = arith.cmpi ule, %b, %c4194304 : i32
        %eb = arith.select %tiny, %c0, %cl : i32
        %t = arith.trunci %eb : i32 to i8
        %sc = arith.bitcast %t : i8 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e2 : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: the block amax is multiplied by 0.002232, not fp32(1/57344) for this element type}}
  %q0 = arith.scaling_truncf %x, %sf : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf8E5M2>
  %e3 = tensor.empty() : tensor<2x64xf8E5M2>
  %q = linalg.map ins(%x, %q0 : tensor<2x64xf32>, tensor<2x64xf8E5M2>) outs(%e3 : tensor<2x64xf8E5M2>)
      (%xi: f32, %qi: f8E5M2, %unused: f8E5M2) {
        %fin = math.isfinite %xi : f32
        %isnan = math.isnan %xi : f32
        %bits = arith.bitcast %xi : f32 to i32
        %z = arith.constant 0 : i32
        %neg = arith.cmpi slt, %bits, %z : i32
        %maxp = arith.constant 57344.0 : f8E5M2
        %maxn = arith.constant -57344.0 : f8E5M2
        %nanp = arith.constant 0x7F : f8E5M2
        %nann = arith.constant 0xFF : f8E5M2
        %sat = arith.select %neg, %maxn, %maxp : f8E5M2
        %nanv = arith.select %neg, %nann, %nanp : f8E5M2
        %special = arith.select %isnan, %nanv, %sat : f8E5M2
        %r = arith.select %fin, %qi, %special : f8E5M2
        linalg.yield %r : f8E5M2
      }
  return %q, %s : tensor<2x64xf8E5M2>, tensor<2x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @maximumf
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @maximumf(%x: tensor<2x64xf32>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.166666672 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf32> into tensor<2x2x32xf32>
  %e0 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x2x32xf32>) outs(%init : tensor<2x2xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %m = math.absf %in : f32
        %n = arith.maximumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x2xf32>) outs(%e1 : tensor<2x2xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %b = arith.bitcast %v : f32 to i32
        %r = arith.addi %b, %c8388607 : i32
        %sh = arith.shrui %r, %c23 : i32
        %cl = arith.minui %sh, %c254 : i32
        %tiny = arith.cmpi ule, %b, %c4194304 : i32
        %eb = arith.select %tiny, %c0, %cl : i32
        %t = arith.trunci %eb : i32 to i8
        %sc = arith.bitcast %t : i8 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e2 : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: the block amax uses arith.maximumf, which propagates NaN; nvfp4 skips NaN elements (arith.maxnumf)}}
  %q0 = arith.scaling_truncf %x, %sf : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf4E2M1FN>
  %e3 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %q = linalg.map ins(%x, %q0 : tensor<2x64xf32>, tensor<2x64xf4E2M1FN>) outs(%e3 : tensor<2x64xf4E2M1FN>)
      (%xi: f32, %qi: f4E2M1FN, %unused: f4E2M1FN) {
        %fin = math.isfinite %xi : f32
        %isnan = math.isnan %xi : f32
        %bits = arith.bitcast %xi : f32 to i32
        %z = arith.constant 0 : i32
        %neg = arith.cmpi slt, %bits, %z : i32
        %maxp = arith.constant 6.0 : f4E2M1FN
        %maxn = arith.constant -6.0 : f4E2M1FN
        %nanp = arith.constant 6.0 : f4E2M1FN
        %nann = arith.constant 6.0 : f4E2M1FN
        %sat = arith.select %neg, %maxn, %maxp : f4E2M1FN
        %nanv = arith.select %neg, %nann, %nanp : f4E2M1FN
        %special = arith.select %isnan, %nanv, %sat : f4E2M1FN
        %r = arith.select %fin, %qi, %special : f4E2M1FN
        linalg.yield %r : f4E2M1FN
      }
  return %q, %s : tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @block16
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @block16(%x: tensor<2x64xf32>) -> (tensor<2x64xf4E2M1FN>, tensor<2x4xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.166666672 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 4, 16] : tensor<2x64xf32> into tensor<2x4x16xf32>
  %e0 = tensor.empty() : tensor<2x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x4x16xf32>) outs(%init : tensor<2x4xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %m = math.absf %in : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x4xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %b = arith.bitcast %v : f32 to i32
        %r = arith.addi %b, %c8388607 : i32
        %sh = arith.shrui %r, %c23 : i32
        %cl = arith.minui %sh, %c254 : i32
        %tiny = arith.cmpi ule, %b, %c4194304 : i32
        %eb = arith.select %tiny, %c0, %cl : i32
        %t = arith.trunci %eb : i32 to i8
        %sc = arith.bitcast %t : i8 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x4x16xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x4xf8E8M0FNU>) outs(%e2 : tensor<2x4x16xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x4x16xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: blocks of 16 elements: the MX formats scale blocks of 1x32}}
  %q0 = arith.scaling_truncf %x, %sf : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf4E2M1FN>
  %e3 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %q = linalg.map ins(%x, %q0 : tensor<2x64xf32>, tensor<2x64xf4E2M1FN>) outs(%e3 : tensor<2x64xf4E2M1FN>)
      (%xi: f32, %qi: f4E2M1FN, %unused: f4E2M1FN) {
        %fin = math.isfinite %xi : f32
        %isnan = math.isnan %xi : f32
        %bits = arith.bitcast %xi : f32 to i32
        %z = arith.constant 0 : i32
        %neg = arith.cmpi slt, %bits, %z : i32
        %maxp = arith.constant 6.0 : f4E2M1FN
        %maxn = arith.constant -6.0 : f4E2M1FN
        %nanp = arith.constant 6.0 : f4E2M1FN
        %nann = arith.constant 6.0 : f4E2M1FN
        %sat = arith.select %neg, %maxn, %maxp : f4E2M1FN
        %nanv = arith.select %neg, %nann, %nanp : f4E2M1FN
        %special = arith.select %isnan, %nanv, %sat : f4E2M1FN
        %r = arith.select %fin, %qi, %special : f4E2M1FN
        linalg.yield %r : f4E2M1FN
      }
  return %q, %s : tensor<2x64xf4E2M1FN>, tensor<2x4xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @f16_input
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @f16_input(%x: tensor<2x64xf16>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.166666672 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf16> into tensor<2x2x32xf16>
  %e0 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x2x32xf16>) outs(%init : tensor<2x2xf32>) dimensions = [2]
      (%in: f16, %acc: f32) {
        %w = arith.extf %in : f16 to f32
        %m = math.absf %w : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x2xf32>) outs(%e1 : tensor<2x2xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %b = arith.bitcast %v : f32 to i32
        %r = arith.addi %b, %c8388607 : i32
        %sh = arith.shrui %r, %c23 : i32
        %cl = arith.minui %sh, %c254 : i32
        %tiny = arith.cmpi ule, %b, %c4194304 : i32
        %eb = arith.select %tiny, %c0, %cl : i32
        %t = arith.trunci %eb : i32 to i8
        %sc = arith.bitcast %t : i8 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e2 : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: f16 input: arith.scaling_truncf divides in f16}}
  %q0 = arith.scaling_truncf %x, %sf : tensor<2x64xf16>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf4E2M1FN>
  %e3 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %q = linalg.map ins(%x, %q0 : tensor<2x64xf16>, tensor<2x64xf4E2M1FN>) outs(%e3 : tensor<2x64xf4E2M1FN>)
      (%xi: f16, %qi: f4E2M1FN, %unused: f4E2M1FN) {
        %fin = math.isfinite %xi : f16
        %isnan = math.isnan %xi : f16
        %bits = arith.bitcast %xi : f16 to i16
        %z = arith.constant 0 : i16
        %neg = arith.cmpi slt, %bits, %z : i16
        %maxp = arith.constant 6.0 : f4E2M1FN
        %maxn = arith.constant -6.0 : f4E2M1FN
        %nanp = arith.constant 6.0 : f4E2M1FN
        %nann = arith.constant 6.0 : f4E2M1FN
        %sat = arith.select %neg, %maxn, %maxp : f4E2M1FN
        %nanv = arith.select %neg, %nann, %nanp : f4E2M1FN
        %special = arith.select %isnan, %nanv, %sat : f4E2M1FN
        %r = arith.select %fin, %qi, %special : f4E2M1FN
        linalg.yield %r : f4E2M1FN
      }
  return %q, %s : tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @rounding
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @rounding(%x: tensor<2x64xf32>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.166666672 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf32> into tensor<2x2x32xf32>
  %e0 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x2x32xf32>) outs(%init : tensor<2x2xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %m = math.absf %in : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x2xf32>) outs(%e1 : tensor<2x2xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %b = arith.bitcast %v : f32 to i32
        %r = arith.addi %b, %c8388607 : i32
        %sh = arith.shrui %r, %c23 : i32
        %cl = arith.minui %sh, %c254 : i32
        %tiny = arith.cmpi ule, %b, %c4194304 : i32
        %eb = arith.select %tiny, %c0, %cl : i32
        %t = arith.trunci %eb : i32 to i8
        %sc = arith.bitcast %t : i8 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e2 : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: rounding mode toward_zero: the MX quantization rounds to nearest even}}
  %q0 = arith.scaling_truncf %x, %sf toward_zero : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf4E2M1FN>
  %e3 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %q = linalg.map ins(%x, %q0 : tensor<2x64xf32>, tensor<2x64xf4E2M1FN>) outs(%e3 : tensor<2x64xf4E2M1FN>)
      (%xi: f32, %qi: f4E2M1FN, %unused: f4E2M1FN) {
        %fin = math.isfinite %xi : f32
        %isnan = math.isnan %xi : f32
        %bits = arith.bitcast %xi : f32 to i32
        %z = arith.constant 0 : i32
        %neg = arith.cmpi slt, %bits, %z : i32
        %maxp = arith.constant 6.0 : f4E2M1FN
        %maxn = arith.constant -6.0 : f4E2M1FN
        %nanp = arith.constant 6.0 : f4E2M1FN
        %nann = arith.constant 6.0 : f4E2M1FN
        %sat = arith.select %neg, %maxn, %maxp : f4E2M1FN
        %nanv = arith.select %neg, %nann, %nanp : f4E2M1FN
        %special = arith.select %isnan, %nanv, %sat : f4E2M1FN
        %r = arith.select %fin, %qi, %special : f4E2M1FN
        linalg.yield %r : f4E2M1FN
      }
  return %q, %s : tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @no_fixup
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @no_fixup(%x: tensor<2x64xf32>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.00223214296 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf32> into tensor<2x2x32xf32>
  %e0 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x2x32xf32>) outs(%init : tensor<2x2xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %m = math.absf %in : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x2xf32>) outs(%e1 : tensor<2x2xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %b = arith.bitcast %v : f32 to i32
        %r = arith.addi %b, %c8388607 : i32
        %sh = arith.shrui %r, %c23 : i32
        %cl = arith.minui %sh, %c254 : i32
        %tiny = arith.cmpi ule, %b, %c4194304 : i32
        %eb = arith.select %tiny, %c0, %cl : i32
        %t = arith.trunci %eb : i32 to i8
        %sc = arith.bitcast %t : i8 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e2 : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: non-finite elements: arith.truncf to f8E4M3FN leaves +-Inf and NaN to the target}}
  %q0 = arith.scaling_truncf %x, %sf : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf8E4M3FN>
  return %q0, %s : tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @nnan_only
// CHECK-NOT: nvfp4.quantize
// CHECK: arith.scaling_truncf
func.func @nnan_only(%x: tensor<2x64xf32>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.00223214296 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 32] : tensor<2x64xf32> into tensor<2x2x32xf32>
  %e0 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.reduce ins(%xe : tensor<2x2x32xf32>) outs(%init : tensor<2x2xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %m = math.absf %in : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<2x2xf32>) outs(%e1 : tensor<2x2xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %b = arith.bitcast %v : f32 to i32
        %r = arith.addi %b, %c8388607 : i32
        %sh = arith.shrui %r, %c23 : i32
        %cl = arith.minui %sh, %c254 : i32
        %tiny = arith.cmpi ule, %b, %c4194304 : i32
        %eb = arith.select %tiny, %c0, %cl : i32
        %t = arith.trunci %eb : i32 to i8
        %sc = arith.bitcast %t : i8 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e2 : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: non-finite elements}}
  %q0 = arith.scaling_truncf %x, %sf fastmath<nnan> : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf8E4M3FN>
  return %q0, %s : tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @scales_from_outside
// CHECK: arith.scaling_truncf
func.func @scales_from_outside(%x: tensor<2x64xf32>, %s: tensor<2x2xf8E8M0FNU>) -> tensor<2x64xf4E2M1FN> {
  %e = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %b = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %b [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: the block scales are not computed here from the block amax (nvfp4.quantize computes its own)}}
  %q = arith.scaling_truncf %x, %sf fastmath<nnan,ninf> : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf4E2M1FN>
  return %q : tensor<2x64xf4E2M1FN>
}

// -----

// CHECK-LABEL: func.func @f32_scales
// CHECK: arith.scaling_truncf
func.func @f32_scales(%x: tensor<2x64xf32>, %s: tensor<2x64xf32>) -> tensor<2x64xf4E2M1FN> {
  // expected-remark @below {{left unchanged: scales of type f32: the MX formats' scales are f8E8M0FNU}}
  %q = arith.scaling_truncf %x, %s : tensor<2x64xf32>, tensor<2x64xf32> to tensor<2x64xf4E2M1FN>
  return %q : tensor<2x64xf4E2M1FN>
}

// -----

// CHECK-LABEL: func.func @rank1
// CHECK: arith.scaling_extf
func.func @rank1(%c: tensor<64xf4E2M1FN>, %s: tensor<64xf8E8M0FNU>) -> tensor<64xf32> {
  // expected-remark @below {{left unchanged: rank-1 tensor: !nvfp4.tensor is at least 2-D}}
  %d = arith.scaling_extf %c, %s : tensor<64xf4E2M1FN>, tensor<64xf8E8M0FNU> to tensor<64xf32>
  return %d : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @per_element_scales
// CHECK: arith.scaling_extf
func.func @per_element_scales(%c: tensor<2x64xf4E2M1FN>, %s: tensor<2x64xf8E8M0FNU>) -> tensor<2x64xf32> {
  // expected-remark @below {{left unchanged: the scale operand is not one scale per block broadcast along the last dimension}}
  %d = arith.scaling_extf %c, %s : tensor<2x64xf4E2M1FN>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf32>
  return %d : tensor<2x64xf32>
}

// -----

// CHECK-LABEL: func.func @f16_result
// CHECK: arith.scaling_extf
func.func @f16_result(%c: tensor<2x64xf8E5M2>, %s: tensor<2x2xf8E8M0FNU>) -> tensor<2x64xf16> {
  %e = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %b = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %b [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: f16 result: arith.scaling_extf multiplies in f16}}
  %d = arith.scaling_extf %c, %sf : tensor<2x64xf8E5M2>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf16>
  return %d : tensor<2x64xf16>
}

// -----

// CHECK-LABEL: func.func @nan_scale_constant
// CHECK: arith.scaling_extf
func.func @nan_scale_constant(%c: tensor<2x64xf4E2M1FN>) -> tensor<2x64xf32> {
  %s = arith.constant dense<0xFF> : tensor<2x2xf8E8M0FNU>
  %e = tensor.empty() : tensor<2x2x32xf8E8M0FNU>
  %b = linalg.broadcast ins(%s : tensor<2x2xf8E8M0FNU>) outs(%e : tensor<2x2x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %b [[0], [1, 2]] : tensor<2x2x32xf8E8M0FNU> into tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{left unchanged: a constant NaN scale (0xFF), which nvfp4.pack rejects (C4)}}
  %d = arith.scaling_extf %c, %sf : tensor<2x64xf4E2M1FN>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf32>
  return %d : tensor<2x64xf32>
}

// -----

// CHECK-LABEL: func.func @not_mx_element
// CHECK: arith.scaling_extf
func.func @not_mx_element(%c: tensor<2x64xf6E3M2FN>, %s: tensor<2x64xf8E8M0FNU>) -> tensor<2x64xf32> {
  // expected-remark @below {{left unchanged: element type f6E3M2FN is not an MX element type (f8E4M3FN, f8E5M2, f4E2M1FN)}}
  %d = arith.scaling_extf %c, %s : tensor<2x64xf6E3M2FN>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf32>
  return %d : tensor<2x64xf32>
}
