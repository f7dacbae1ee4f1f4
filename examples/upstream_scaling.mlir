// MX quantization and dequantization as a frontend writes them in upstream
// MLIR 22 ops: arith.scaling_truncf / arith.scaling_extf with the block amax,
// the scale rule and the broadcast around them (docs/Embedding.md section 8,
// docs/Numerics.md 11.6).
//
//   nvfp4-opt examples/upstream_scaling.mlir --nvfp4-raise-upstream-scaling=emit-remarks
//
// raises @mxfp8_quantize (nvfp4's scale rule, 2^ceil(log2(bamax / 448)),
// non-finite inputs excluded by fastmath<nnan,ninf>) to nvfp4.quantize and
// @mxfp8_dequantize to nvfp4.dequantize, and leaves @mxfp4_quantize_ocp
// alone with a remark: its scale is the OCP spec's floor(log2(bamax)) - 2,
// which is not nvfp4's MXFP4.

func.func @mxfp8_quantize(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.00223214296 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [128, 8, 32] : tensor<128x256xbf16> into tensor<128x8x32xbf16>
  %e0 = tensor.empty() : tensor<128x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<128x8xf32>) -> tensor<128x8xf32>
  %amax = linalg.reduce ins(%xe : tensor<128x8x32xbf16>) outs(%init : tensor<128x8xf32>) dimensions = [2]
      (%in: bf16, %acc: f32) {
        %w = arith.extf %in : bf16 to f32
        %m = math.absf %w : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<128x8xf8E8M0FNU>
  %s = linalg.map ins(%amax : tensor<128x8xf32>) outs(%e1 : tensor<128x8xf8E8M0FNU>)
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
  %e2 = tensor.empty() : tensor<128x8x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<128x8xf8E8M0FNU>) outs(%e2 : tensor<128x8x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<128x8x32xf8E8M0FNU> into tensor<128x256xf8E8M0FNU>
  %q0 = arith.scaling_truncf %x, %sf fastmath<nnan,ninf> : tensor<128x256xbf16>, tensor<128x256xf8E8M0FNU> to tensor<128x256xf8E4M3FN>
  return %q0, %s : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
}

func.func @mxfp4_quantize_ocp(%x: tensor<128x256xbf16>) -> (tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %rcp = arith.constant 0.25 : f32
  %c0 = arith.constant 0 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c4194304 = arith.constant 4194304 : i32
  %c8388607 = arith.constant 8388607 : i32
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [128, 8, 32] : tensor<128x256xbf16> into tensor<128x8x32xbf16>
  %e0 = tensor.empty() : tensor<128x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<128x8xf32>) -> tensor<128x8xf32>
  %amax = linalg.reduce ins(%xe : tensor<128x8x32xbf16>) outs(%init : tensor<128x8xf32>) dimensions = [2]
      (%in: bf16, %acc: f32) {
        %w = arith.extf %in : bf16 to f32
        %m = math.absf %w : f32
        %n = arith.maxnumf %acc, %m : f32
        linalg.yield %n : f32
      }
  %e1 = tensor.empty() : tensor<128x8xf8E8M0FNU>
  // OCP MX v1.0: shared exponent floor(log2(bamax)) - emax(E2M1 = 2), by
  // keeping the exponent bits of bamax * 2^-2 (arith.truncf to E8M0).
  %s = linalg.map ins(%amax : tensor<128x8xf32>) outs(%e1 : tensor<128x8xf8E8M0FNU>)
      (%a: f32, %unused: f8E8M0FNU) {
        %v = arith.mulf %a, %rcp : f32
        %sc = arith.truncf %v : f32 to f8E8M0FNU
        linalg.yield %sc : f8E8M0FNU
      }
  %e2 = tensor.empty() : tensor<128x8x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%s : tensor<128x8xf8E8M0FNU>) outs(%e2 : tensor<128x8x32xf8E8M0FNU>) dimensions = [2]
  %sf = tensor.collapse_shape %sb [[0], [1, 2]] : tensor<128x8x32xf8E8M0FNU> into tensor<128x256xf8E8M0FNU>
  %q0 = arith.scaling_truncf %x, %sf : tensor<128x256xbf16>, tensor<128x256xf8E8M0FNU> to tensor<128x256xf4E2M1FN>
  %e3 = tensor.empty() : tensor<128x256xf4E2M1FN>
  %q = linalg.map ins(%x, %q0 : tensor<128x256xbf16>, tensor<128x256xf4E2M1FN>) outs(%e3 : tensor<128x256xf4E2M1FN>)
      (%xi: bf16, %qi: f4E2M1FN, %unused: f4E2M1FN) {
        %fin = math.isfinite %xi : bf16
        %isnan = math.isnan %xi : bf16
        %bits = arith.bitcast %xi : bf16 to i16
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
  return %q, %s : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>
}

func.func @mxfp8_dequantize(%codes: tensor<128x256xf8E4M3FN>, %scales: tensor<128x8xf8E8M0FNU>) -> tensor<128x256xbf16> {
  %e = tensor.empty() : tensor<128x8x32xf8E8M0FNU>
  %b = linalg.broadcast ins(%scales : tensor<128x8xf8E8M0FNU>) outs(%e : tensor<128x8x32xf8E8M0FNU>) dimensions = [2]
  %s = tensor.collapse_shape %b [[0], [1, 2]] : tensor<128x8x32xf8E8M0FNU> into tensor<128x256xf8E8M0FNU>
  %x = arith.scaling_extf %codes, %s : tensor<128x256xf8E4M3FN>, tensor<128x256xf8E8M0FNU> to tensor<128x256xbf16>
  return %x : tensor<128x256xbf16>
}
