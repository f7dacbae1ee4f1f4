// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_90a -verify-diagnostics

// Block-scaled values cross functions, calls, returns and scf regions on
// the GPU path, not branches to other blocks: one error at the branch, not
// "failed to legalize operation 'func.func'".

!q = !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @f(%x: tensor<16x32xbf16>, %c: i1) -> !q {
  %q0 = nvfp4.quantize %x : tensor<16x32xbf16> -> !q
  // expected-error @+1 {{'cf.cond_br' op passes a block-scaled tensor to another block, which the GPU lowering does not support; use scf.if, or pass the high-precision tensor}}
  cf.cond_br %c, ^a(%q0 : !q), ^b
^a(%v: !q):
  return %v : !q
^b:
  %h = nvfp4.hadamard %x : tensor<16x32xbf16>
  %q1 = nvfp4.quantize %h : tensor<16x32xbf16> -> !q
  cf.br ^a(%q1 : !q)
}
