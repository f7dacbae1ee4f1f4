// RUN: nvfp4-opt %s -canonicalize -split-input-file | FileCheck %s

// Compile-time evaluation is bounded (issue 7, resource limits): constants
// above 2^20 elements are left to run time, whatever their storage, without
// a diagnostic. These would take minutes and gigabytes to evaluate; the
// test takes a fraction of a second because nothing is expanded.

// A 1 GiB splat (2^29 bf16 elements): the attribute stores one element, but
// evaluating amax, hadamard or quantize on it would expand all 2^29.
// CHECK-LABEL: func @splat_1gib
// CHECK:       %[[X:.*]] = arith.constant dense<1.500000e+00> : tensor<32768x16384xbf16>
// CHECK-DAG:   nvfp4.amax %[[X]]
// CHECK-DAG:   nvfp4.hadamard %[[X]]
// CHECK-DAG:   nvfp4.quantize %[[X]]
func.func @splat_1gib() -> (f32, tensor<32768x16384xbf16>,
    !nvfp4.tensor<32768x16384xf4E2M1FN, scale = f8E4M3FN, block = 16x16>) {
  %x = arith.constant dense<1.5> : tensor<32768x16384xbf16>
  %a = nvfp4.amax %x : tensor<32768x16384xbf16>
  %h = nvfp4.hadamard %x : tensor<32768x16384xbf16>
  %q = nvfp4.quantize %x : tensor<32768x16384xbf16>
      -> !nvfp4.tensor<32768x16384xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
  return %a, %h, %q : f32, tensor<32768x16384xbf16>,
      !nvfp4.tensor<32768x16384xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
}

// -----

// One element over the limit, as an f32 splat with a constant amax.
// CHECK-LABEL: func @splat_over_limit
// CHECK:       nvfp4.quantize
// CHECK-NOT:   nvfp4.pack
func.func @splat_over_limit() -> !nvfp4.tensor<1x1048592xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %x = arith.constant dense<2.0> : tensor<1x1048592xf32>
  %a = arith.constant 2.0 : f32
  %q = nvfp4.quantize %x amax(%a) : tensor<1x1048592xf32>
      -> !nvfp4.tensor<1x1048592xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<1x1048592xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}

// -----

// dense_resource blobs (how a frontend hands over checkpoint-sized weights)
// are not evaluated, whatever their size.
// CHECK-LABEL: func @resource
// CHECK:       nvfp4.amax
// CHECK:       nvfp4.hadamard
func.func @resource() -> (f32, tensor<1x16xbf16>) {
  %x = arith.constant dense_resource<weights> : tensor<1x16xbf16>
  %a = nvfp4.amax %x : tensor<1x16xbf16>
  %h = nvfp4.hadamard %x : tensor<1x16xbf16>
  return %a, %h : f32, tensor<1x16xbf16>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x02000000803F803F803F803F803F803F803F803F803F803F803F803F803F803F803F803F"
    }
  }
#-}
