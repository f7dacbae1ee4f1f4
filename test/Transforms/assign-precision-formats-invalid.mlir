// Malformed formats= entries are one error on the module each, and the pass
// fails.
//
// RUN: not nvfp4-opt %s --nvfp4-assign-precision='formats=attention=fp8' 2>&1 | FileCheck %s --check-prefix=FP8
// FP8-NOT: see current operation
// FP8: error: nvfp4-assign-precision: formats='attention=fp8': fp8 GEMMs have no lowering (use mxfp8, mxfp4, nvfp4 or bf16)
// RUN: not nvfp4-opt %s --nvfp4-assign-precision='formats=ffn=int4' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: nvfp4-assign-precision: formats='ffn=int4': unknown format 'int4' (expected nvfp4, mxfp8, mxfp4 or bf16)
// RUN: not nvfp4-opt %s --nvfp4-assign-precision='formats=ffn=mxfp8,ffn=nvfp4' 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: nvfp4-assign-precision: formats='ffn=nvfp4': kind 'ffn' given twice
// RUN: not nvfp4-opt %s --nvfp4-assign-precision='formats=mxfp8,mxfp4' 2>&1 | FileCheck %s --check-prefix=DEFAULTS
// DEFAULTS: error: nvfp4-assign-precision: formats='mxfp4': a second default format
// RUN: not nvfp4-opt %s --nvfp4-assign-precision='formats==mxfp8' 2>&1 | FileCheck %s --check-prefix=NO-KIND
// NO-KIND: error: nvfp4-assign-precision: formats='=mxfp8': names no kind (expected KIND=FORMAT or FORMAT)

func.func @f(%x: tensor<16x32xbf16>, %w: tensor<16x32xbf16> {nvfp4.weight},
             %init: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
  %0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      {nvfp4.layer = 0 : i64, nvfp4.kind = "ffn"}
      ins(%x, %w : tensor<16x32xbf16>, tensor<16x32xbf16>) outs(%init : tensor<16x16xbf16>) -> tensor<16x16xbf16>
  return %0 : tensor<16x16xbf16>
}
