// RUN: nvfp4-opt %s --nvfp4-raise-upstream-scaling --split-input-file | FileCheck %s
// RUN: nvfp4-opt %s --canonicalize --cse --split-input-file | nvfp4-opt --nvfp4-raise-upstream-scaling --split-input-file | FileCheck %s

// The forms of docs/Numerics.md 11.6, written by hand (not by
// nvfp4-lower-to-upstream-scaling), become nvfp4 ops; the scales the
// function returns are read from the quantized value. Canonicalization and
// CSE first (constants hoisted, operands reordered) change nothing.

// CHECK-LABEL: func.func @mxfp4_f32
// CHECK-NEXT:    %[[Q:.*]] = nvfp4.quantize %arg0 : tensor<2x64xf32> -> !nvfp4.tensor<2x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// CHECK-NEXT:    %[[C:.*]], %[[S:.*]], %{{.*}} = nvfp4.unpack %[[Q]]
// CHECK-NEXT:    return %[[C]], %[[S]] : tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>
func.func @mxfp4_f32(%x: tensor<2x64xf32>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) {
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

// CHECK-LABEL: func.func @mxfp8_e4m3_bf16
// CHECK-NEXT:    %[[Q:.*]] = nvfp4.quantize %arg0 : tensor<3x96xbf16> -> !nvfp4.tensor<3x96xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK-NEXT:    %[[C:.*]], %[[S:.*]], %{{.*}} = nvfp4.unpack %[[Q]]
// CHECK-NEXT:    return %[[C]], %[[S]]
func.func @mxfp8_e4m3_bf16(%x: tensor<3x96xbf16>) -> (tensor<3x96xf8E4M3FN>, tensor<3x3xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.00223214296 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [3, 3, 32] : tensor<3x96xbf16> into tensor<3x3x32xbf16>
  %e0 = tensor.empty() : tensor<3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<3x3xf32>) -> tensor<3x3xf32>
  %amax = linalg.reduce ins(%xe : tensor<3x3x32xbf16>) outs(%init : tensor<3x3xf32>) dimensions = [2]
      (%in: bf16, %acc: f32) {
        %w = arith.extf %in : bf16 to f32
        %m = math.absf %w : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<3x3xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<3x3xf32>) outs(%e1 : tensor<3x3xf8E8M0FNU>)
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
  %e2 = tensor.empty() : tensor<3x3x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<3x3xf8E8M0FNU>) outs(%e2 : tensor<3x3x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<3x3x32xf8E8M0FNU> into tensor<3x96xf8E8M0FNU>
  %q0 = arith.scaling_truncf %x, %sf : tensor<3x96xbf16>, tensor<3x96xf8E8M0FNU> to tensor<3x96xf8E4M3FN>
  %e3 = tensor.empty() : tensor<3x96xf8E4M3FN>
  %q = linalg.map ins(%x, %q0 : tensor<3x96xbf16>, tensor<3x96xf8E4M3FN>) outs(%e3 : tensor<3x96xf8E4M3FN>)
      (%xi: bf16, %qi: f8E4M3FN, %unused: f8E4M3FN) {
        %fin = math.isfinite %xi : bf16
        %isnan = math.isnan %xi : bf16
        %bits = arith.bitcast %xi : bf16 to i16
        %z = arith.constant 0 : i16
        %neg = arith.cmpi slt, %bits, %z : i16
        %maxp = arith.constant 448.0 : f8E4M3FN
        %maxn = arith.constant -448.0 : f8E4M3FN
        %nanp = arith.constant 0x7F : f8E4M3FN
        %nann = arith.constant 0xFF : f8E4M3FN
        %sat = arith.select %neg, %maxn, %maxp : f8E4M3FN
        %nanv = arith.select %neg, %nann, %nanp : f8E4M3FN
        %special = arith.select %isnan, %nanv, %sat : f8E4M3FN
        %r = arith.select %fin, %qi, %special : f8E4M3FN
        linalg.yield %r : f8E4M3FN
      }
  return %q, %s : tensor<3x96xf8E4M3FN>, tensor<3x3xf8E8M0FNU>
}

// -----

// fastmath<nnan,ninf>: +-Inf and NaN inputs are poison, so no fix-up is
// needed for nvfp4.quantize to refine the op.
// CHECK-LABEL: func.func @mxfp8_e5m2_fastmath
// CHECK-NEXT:    %[[Q:.*]] = nvfp4.quantize %arg0 : tensor<2x64xf32> -> !nvfp4.tensor<2x64xf8E5M2, scale = f8E8M0FNU, block = 1x32>
// CHECK-NEXT:    %[[C:.*]], %[[S:.*]], %{{.*}} = nvfp4.unpack %[[Q]]
// CHECK-NEXT:    return %[[C]], %[[S]]
func.func @mxfp8_e5m2_fastmath(%x: tensor<2x64xf32>) -> (tensor<2x64xf8E5M2>, tensor<2x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 1.74386169e-05 : f32
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
  %q0 = arith.scaling_truncf %x, %sf fastmath<nnan,ninf> : tensor<2x64xf32>, tensor<2x64xf8E8M0FNU> to tensor<2x64xf8E5M2>
  return %q0, %s : tensor<2x64xf8E5M2>, tensor<2x2xf8E8M0FNU>
}

// -----

// One E8M0 scale per 1x32 block, broadcast along the last dimension, and
// arith.scaling_extf: nvfp4.pack + nvfp4.dequantize (amax part 0).
// CHECK-LABEL: func.func @dequantize_bf16
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[P:.*]] = nvfp4.pack %arg0, %arg1, %[[Z]] : !nvfp4.tensor<2x3x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK-NEXT:    %[[D:.*]] = nvfp4.dequantize %[[P]] : !nvfp4.tensor<2x3x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> -> tensor<2x3x64xbf16>
// CHECK-NEXT:    return %[[D]]
// CHECK-NOT:     scaling_extf
func.func @dequantize_bf16(%codes: tensor<2x3x64xf8E4M3FN>, %scales: tensor<2x3x2xf8E8M0FNU>) -> tensor<2x3x64xbf16> {
  %e = tensor.empty() : tensor<2x3x2x32xf8E8M0FNU>
  %b = linalg.broadcast ins(%scales : tensor<2x3x2xf8E8M0FNU>) outs(%e : tensor<2x3x2x32xf8E8M0FNU>) dimensions = [3]
  %s = tensor.collapse_shape %b [[0], [1], [2, 3]] : tensor<2x3x2x32xf8E8M0FNU> into tensor<2x3x64xf8E8M0FNU>
  %d = arith.scaling_extf %codes, %s : tensor<2x3x64xf8E4M3FN>, tensor<2x3x64xf8E8M0FNU> to tensor<2x3x64xbf16>
  return %d : tensor<2x3x64xbf16>
}
