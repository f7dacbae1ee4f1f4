// RUN: nvfp4-opt %s -canonicalize -split-input-file | FileCheck %s

// Constant inputs are evaluated at compile time by the numerics library.

// CHECK-LABEL: func @amax
// CHECK-NEXT: %[[A:.*]] = arith.constant 7.000000e+00 : f32
// CHECK-NEXT: return %[[A]]
func.func @amax() -> f32 {
  %x = arith.constant dense<[[1.0, -7.0, 0x7FC0, 2.0], [0.5, -0.0, 3.0, -6.5]]> : tensor<2x4xbf16>
  %a = nvfp4.amax %x : tensor<2x4xbf16>
  return %a : f32
}

// -----

// Block 0 has amax 6 (S_enc = 448, scale code 0x7E = 448): x / 1 is rounded
// to E2M1 directly. Ties go to even (0.25 -> 0, 0.75 -> 1, 2.5 -> 2,
// 5 -> 4), -0.0 keeps its sign.
// CHECK-LABEL: func @quantize
// CHECK-DAG: %[[C:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 4.000000e+00, 6.000000e+00, -0.000000e+00, 1.500000e+00, -6.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<1x16xf4E2M1FN>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<4.480000e+02> : tensor<1x1xf8E4M3FN>
// CHECK-DAG: %[[A:.*]] = arith.constant 6.000000e+00 : f32
// CHECK: %[[Q:.*]] = nvfp4.pack %[[C]], %[[S]], %[[A]]
// CHECK-NOT: nvfp4.quantize
func.func @quantize() -> !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %x = arith.constant dense<[[0.25, 0.75, 2.5, 5.0, 6.0, -0.0, 1.5, -6.0,
                              0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x16xbf16>
  %q = nvfp4.quantize %x : tensor<1x16xbf16>
      -> !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// A non-constant seed keeps stochastic rounding at run time; a constant one
// folds.
// CHECK-LABEL: func @stochastic
// CHECK: nvfp4.quantize {{.*}} rounding<stochastic> seed(%arg0)
// CHECK: nvfp4.pack
func.func @stochastic(%s: i64) -> (!nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                                   !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %x = arith.constant dense<1.3> : tensor<1x16xbf16>
  %c = arith.constant 42 : i64
  %q = nvfp4.quantize %x rounding<stochastic> seed(%s) : tensor<1x16xbf16>
      -> !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %r = nvfp4.quantize %x rounding<stochastic> seed(%c) : tensor<1x16xbf16>
      -> !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q, %r : !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
                  !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// The size limit: a 2^21-element constant is left to run time (and this
// test stays fast), a 2^20-element one folds.
// CHECK-LABEL: func @size_limit
// CHECK-DAG: %[[B:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-DAG: %[[A:.*]] = nvfp4.amax %{{.*}} : tensor<2048x1024xbf16>
// CHECK-NOT: nvfp4.amax
// CHECK: return %[[A]], %[[B]]
func.func @size_limit() -> (f32, f32) {
  %big = arith.constant dense<1.5> : tensor<2048x1024xbf16>
  %small = arith.constant dense<1.5> : tensor<1024x1024xbf16>
  %a = nvfp4.amax %big : tensor<2048x1024xbf16>
  %b = nvfp4.amax %small : tensor<1024x1024xbf16>
  return %a, %b : f32, f32
}

// -----

// CHECK-LABEL: func @hadamard
// The first row is all ones: v * R puts 16 * 0.25 * sign into column 0.
// CHECK: arith.constant dense<{{\[\[}}4.000000e+00, 0.000000e+00
func.func @hadamard() -> tensor<1x16xbf16> {
  %x = arith.constant dense<1.0> : tensor<1x16xbf16>
  %h = nvfp4.hadamard %x {sign_mask = 0 : i32} : tensor<1x16xbf16>
  return %h : tensor<1x16xbf16>
}

// -----

// With `hadamard`, the fold applies the library's RHT first: a run holding
// only x0 = 4 transforms to 4 * 0.25 = 1 in all 16 outputs (row 0 of H16 is
// all ones, bit 0 of 0xD7E8 is clear), so the post-RHT amax is 1, not 4, and
// every element quantizes to 6 with the block scale 448 / 6 * 6 / 448 = 1.
// CHECK-LABEL: func @fused_hadamard
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[C:.*]] = arith.constant dense<6.000000e+00> : tensor<1x16xf4E2M1FN>
// CHECK: %[[Q:.*]] = nvfp4.pack %[[C]], %{{.*}}, %[[ONE]]
// CHECK: return %[[ONE]], %[[Q]]
func.func @fused_hadamard()
    -> (f32, !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %x = arith.constant dense<[[4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                              0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x16xbf16>
  %a = nvfp4.amax %x hadamard(55272) : tensor<1x16xbf16>
  %q = nvfp4.quantize %x hadamard(55272) : tensor<1x16xbf16>
      -> !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %a, %q : f32, !nvfp4.tensor<1x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
