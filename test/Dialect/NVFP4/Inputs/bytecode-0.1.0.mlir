// The source of bytecode-0.1.0.mlirbc, which nvfp4 0.1.0 (before the
// dialect had a bytecode version) wrote with
//   nvfp4-opt bytecode-0.1.0.mlir --emit-bytecode -o bytecode-0.1.0.mlirbc
// Kept so that every later build proves it still reads it.
!act = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!wt  = !nvfp4.tensor<64x256xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!sw  = !nvfp4.tensor<128x256xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
!wtt = !nvfp4.tensor<256x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @tour(%x: tensor<128x256xbf16>, %w: tensor<64x256xbf16>, %g: tensor<128x256xbf16>, %s: i64)
    -> (tensor<128x64xbf16>, !sw, !wtt, tensor<128x256xbf16>, tensor<128x256xbf16>) {
  %a = nvfp4.amax %x : tensor<128x256xbf16>
  %xq = nvfp4.quantize %x amax(%a) : tensor<128x256xbf16> -> !act
  %gq = nvfp4.quantize %g rounding<stochastic> seed(%s) : tensor<128x256xbf16> -> !act
  %h = nvfp4.hadamard %x : tensor<128x256xbf16>
  %wq = nvfp4.quantize %w : tensor<64x256xbf16> -> !wt
  %y = nvfp4.scaled_matmul %xq, %wq role<fprop> : !act, !wt -> tensor<128x64xbf16>
  %sw = nvfp4.swizzle_scales %xq : !act -> !sw
  %wqt = nvfp4.transpose %wq : !wt -> !wtt
  %d = nvfp4.dequantize %gq : !act -> tensor<128x256xbf16>
  return %y, %sw, %wqt, %d, %h : tensor<128x64xbf16>, !sw, !wtt, tensor<128x256xbf16>, tensor<128x256xbf16>
}
