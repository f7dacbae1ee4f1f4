// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a -split-input-file -verify-diagnostics
// RUN: nvfp4-opt %s --convert-nvfp4-to-reference -split-input-file -verify-diagnostics
// RUN: not nvfp4-compile %s --chip=sm_100a --no-ptxas-check -o /dev/null 2>&1 | FileCheck %s

// The body of builtin.module is a graph region: its ops may form use-def
// cycles. Both lowerings looped forever on these (the folders returned the
// op's own result); now the folders refuse such a fold and the lowerings
// reject nvfp4 ops outside program order with one error.

// CHECK: error: 'nvfp4.transpose' op is in a graph region (the body of 'builtin.module')
!a = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!t = !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
// expected-error @+1 {{'nvfp4.transpose' op is in a graph region (the body of 'builtin.module'), where operands need not be defined before their uses; the lowerings need program order: put nvfp4 operations in a function}}
%x = nvfp4.transpose %y : !a -> !t
%y = nvfp4.transpose %x : !t -> !a

// -----

!l = !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!s = !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
// expected-error @+1 {{'nvfp4.swizzle_scales' op is in a graph region}}
%a = nvfp4.swizzle_scales %b : !l -> !s
%b = nvfp4.swizzle_scales %a : !s -> !l
