// RUN: nvfp4-opt %s --nvfp4-lower-to-upstream-scaling | FileCheck %s
// Raised back, the round trip gives the original ops.
// RUN: nvfp4-opt %s --nvfp4-lower-to-upstream-scaling --canonicalize --cse \
// RUN:   | nvfp4-opt --nvfp4-raise-upstream-scaling --canonicalize | FileCheck %s --check-prefix=BACK

// MX quantize in upstream ops (docs/Numerics.md 11.6): block amax, the
// E8M0 rule on the bits of bamax * fp32(1/max), the broadcast,
// arith.scaling_truncf and the non-finite fix-up.
// CHECK-LABEL: func.func @quantize_e4m3
// CHECK-DAG:     %[[NAN_N:.*]] = arith.constant 0xFF : f8E4M3FN
// CHECK-DAG:     %[[NAN_P:.*]] = arith.constant 0x7F : f8E4M3FN
// CHECK-DAG:     %[[MAX_N:.*]] = arith.constant -4.480000e+02 : f8E4M3FN
// CHECK-DAG:     %[[MAX_P:.*]] = arith.constant 4.480000e+02 : f8E4M3FN
// CHECK-DAG:     %[[RCP:.*]] = arith.constant 0.00223214296 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[X3:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xbf16> into tensor<4x2x32xbf16>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK:         %[[AMAX:.*]] = linalg.reduce ins(%[[X3]] : tensor<4x2x32xbf16>) outs(%[[INIT]] : tensor<4x2xf32>) dimensions = [2]
// CHECK:           arith.extf
// CHECK-NEXT:      math.absf
// CHECK-NEXT:      arith.maxnumf
// CHECK:         %[[S:.*]] = linalg.map ins(%[[AMAX]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xf8E8M0FNU>)
// CHECK:           %[[V:.*]] = arith.mulf %{{.*}}, %[[RCP]] : f32
// CHECK-NEXT:      %[[B:.*]] = arith.bitcast %[[V]] : f32 to i32
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[B]], %{{.*}} : i32
// CHECK-NEXT:      %[[SH:.*]] = arith.shrui %[[UP]], %{{.*}} : i32
// CHECK-NEXT:      %[[CL:.*]] = arith.minui %[[SH]], %{{.*}} : i32
// CHECK-NEXT:      %[[TINY:.*]] = arith.cmpi ule, %[[B]], %{{.*}} : i32
// CHECK-NEXT:      %[[BYTE:.*]] = arith.select %[[TINY]], %{{.*}}, %[[CL]] : i32
// CHECK-NEXT:      %[[I8:.*]] = arith.trunci %[[BYTE]] : i32 to i8
// CHECK-NEXT:      arith.bitcast %[[I8]] : i8 to f8E8M0FNU
// CHECK:         %[[SB:.*]] = linalg.broadcast ins(%[[S]] : tensor<4x2xf8E8M0FNU>) outs(%{{.*}} : tensor<4x2x32xf8E8M0FNU>) dimensions = [2]
// CHECK-NEXT:    %[[SF:.*]] = tensor.collapse_shape %[[SB]] {{\[\[}}0], [1, 2]] : tensor<4x2x32xf8E8M0FNU> into tensor<4x64xf8E8M0FNU>
// CHECK-NEXT:    %[[Q0:.*]] = arith.scaling_truncf %arg0, %[[SF]] : tensor<4x64xbf16>, tensor<4x64xf8E8M0FNU> to tensor<4x64xf8E4M3FN>
// CHECK:         %[[Q:.*]] = linalg.map ins(%arg0, %[[Q0]] : tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>)
// CHECK:           math.isfinite
// CHECK:           math.isnan
// CHECK:           arith.select %{{.*}}, %[[MAX_N]], %[[MAX_P]] : f8E4M3FN
// CHECK:           arith.select %{{.*}}, %[[NAN_N]], %[[NAN_P]] : f8E4M3FN
// CHECK:         %[[P:.*]] = nvfp4.pack %[[Q]], %[[S]], %[[ZERO]] : !nvfp4.tensor<4x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// CHECK-NEXT:    return %[[P]]
// BACK-LABEL: func.func @quantize_e4m3
// BACK-NEXT:    %[[Q:.*]] = nvfp4.quantize %arg0 : tensor<4x64xbf16> -> !nvfp4.tensor<4x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
// BACK-NEXT:    return %[[Q]]
func.func @quantize_e4m3(%x: tensor<4x64xbf16>) -> !nvfp4.tensor<4x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> {
  %q = nvfp4.quantize %x : tensor<4x64xbf16> -> !nvfp4.tensor<4x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  return %q : !nvfp4.tensor<4x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
}

// E2M1 from f32, with a batch dimension: NaN is +6 whatever its sign.
// CHECK-LABEL: func.func @quantize_e2m1_batch
// CHECK-DAG:     arith.constant 0.166666672 : f32
// CHECK:         tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 2, 32] : tensor<2x3x64xf32> into tensor<2x3x2x32xf32>
// CHECK:         linalg.reduce {{.*}} dimensions = [3]
// CHECK-NOT:       arith.extf
// CHECK:         linalg.broadcast {{.*}} dimensions = [3]
// CHECK:         arith.scaling_truncf %arg0, %{{.*}} : tensor<2x3x64xf32>, tensor<2x3x64xf8E8M0FNU> to tensor<2x3x64xf4E2M1FN>
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK:         nvfp4.pack
// BACK-LABEL: func.func @quantize_e2m1_batch
// BACK-NEXT:    %[[Q:.*]] = nvfp4.quantize %arg0 : tensor<2x3x64xf32> -> !nvfp4.tensor<2x3x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// BACK-NEXT:    return %[[Q]]
func.func @quantize_e2m1_batch(%x: tensor<2x3x64xf32>) -> !nvfp4.tensor<2x3x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32> {
  %q = nvfp4.quantize %x : tensor<2x3x64xf32> -> !nvfp4.tensor<2x3x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  return %q : !nvfp4.tensor<2x3x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
}

// CHECK-LABEL: func.func @dequantize_e5m2
// CHECK:         %[[C:.*]], %[[S:.*]], %{{.*}} = nvfp4.unpack %arg0
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8x2x32xf8E8M0FNU>
// CHECK-NEXT:    %[[SB:.*]] = linalg.broadcast ins(%[[S]] : tensor<8x2xf8E8M0FNU>) outs(%[[E]] : tensor<8x2x32xf8E8M0FNU>) dimensions = [2]
// CHECK-NEXT:    %[[SF:.*]] = tensor.collapse_shape %[[SB]]
// CHECK-NEXT:    %[[D:.*]] = arith.scaling_extf %[[C]], %[[SF]] : tensor<8x64xf8E5M2>, tensor<8x64xf8E8M0FNU> to tensor<8x64xbf16>
// CHECK-NEXT:    return %[[D]]
// BACK-LABEL: func.func @dequantize_e5m2
// BACK-NEXT:    %[[D:.*]] = nvfp4.dequantize %arg0 : !nvfp4.tensor<8x64xf8E5M2, scale = f8E8M0FNU, block = 1x32> -> tensor<8x64xbf16>
// BACK-NEXT:    return %[[D]]
func.func @dequantize_e5m2(%q: !nvfp4.tensor<8x64xf8E5M2, scale = f8E8M0FNU, block = 1x32>) -> tensor<8x64xbf16> {
  %d = nvfp4.dequantize %q : !nvfp4.tensor<8x64xf8E5M2, scale = f8E8M0FNU, block = 1x32> -> tensor<8x64xbf16>
  return %d : tensor<8x64xbf16>
}

// Left alone: NVFP4 (E4M3 scales per 16 and a tensor scale: no E8M0
// scale expresses them), swizzled scales (one per element is the upstream
// operand) and f16 (upstream scales in f16).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     arith.scaling
// CHECK:         nvfp4.quantize %arg0 : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
// CHECK:         nvfp4.quantize %arg0 : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
// CHECK:         nvfp4.quantize %arg1 : tensor<32x64xf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
// CHECK:         nvfp4.dequantize %arg2 : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32> -> tensor<32x64xf16>
// CHECK:         nvfp4.dequantize %arg3 : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<32x64xf32>
// CHECK-NOT:     arith.scaling
func.func @untouched(%x: tensor<32x64xbf16>, %h: tensor<32x64xf16>,
                     %m: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                     %n: !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>)
    -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        tensor<32x64xf16>, tensor<32x64xf32>) {
  %a = nvfp4.quantize %x : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %b = nvfp4.quantize %x : tensor<32x64xbf16> -> !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
  %c = nvfp4.quantize %h : tensor<32x64xf16> -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  %d = nvfp4.dequantize %m : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32> -> tensor<32x64xf16>
  %e = nvfp4.dequantize %n : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16> -> tensor<32x64xf32>
  return %a, %b, %c, %d, %e : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<32x64xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
        !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        tensor<32x64xf16>, tensor<32x64xf32>
}
