// Regression (issue 7): a block-scaled tensor with INT64_MAX rows used to
// verify, and convert-nvfp4-to-reference then padded its rows to a multiple
// of 128, overflowed int64 and crashed building a tensor of negative size.
// Rule T6 now rejects the type when it is parsed.
// RUN: nvfp4-opt %s --convert-nvfp4-to-reference -split-input-file -verify-diagnostics \
// RUN:   | FileCheck %s

// expected-error @+1 {{block-scaled tensor is too large: more than 2^47 elements}}
func.func @swizzle_int64_max_rows(%q: !nvfp4.tensor<9223372036854775807x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %s = nvfp4.swizzle_scales %q : !nvfp4.tensor<9223372036854775807x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<9223372036854775807x16xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
  return
}

// -----

// The largest tensor T6 allows still lowers: 2^47 elements, the rows
// padded to 128 (131072 x 2^30 = 2^47 exactly).
// CHECK-LABEL: func.func @swizzle_largest
// CHECK-NOT:     nvfp4.swizzle_scales
func.func @swizzle_largest(%q: !nvfp4.tensor<131072x1073741824xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %s = nvfp4.swizzle_scales %q : !nvfp4.tensor<131072x1073741824xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
      -> !nvfp4.tensor<131072x1073741824xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
  return
}
