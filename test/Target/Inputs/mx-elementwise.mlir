// The MX quantize and dequantize kernels of every format and input type:
// MXFP8 (E4M3, E5M2) and MXFP4, linear and swizzled scales, bf16/f16/f32
// inputs, and their dequantization.
!e4m3 = !nvfp4.tensor<256x512xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
!e5m2 = !nvfp4.tensor<256x512xf8E5M2, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
!fp4 = !nvfp4.tensor<256x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>

func.func @mx(%x: tensor<256x512xbf16>, %h: tensor<256x512xf16>, %f: tensor<256x512xf32>)
    -> (!e4m3, !e5m2, !fp4, tensor<256x512xbf16>, tensor<256x512xf32>, tensor<256x512xf16>) {
  %a = nvfp4.quantize %x : tensor<256x512xbf16> -> !e4m3
  %b = nvfp4.quantize %h : tensor<256x512xf16> -> !e5m2
  %c = nvfp4.quantize %f : tensor<256x512xf32> -> !fp4
  %da = nvfp4.dequantize %a : !e4m3 -> tensor<256x512xbf16>
  %db = nvfp4.dequantize %b : !e5m2 -> tensor<256x512xf32>
  %dc = nvfp4.dequantize %c : !fp4 -> tensor<256x512xf16>
  return %a, %b, %c, %da, %db, %dc : !e4m3, !e5m2, !fp4, tensor<256x512xbf16>, tensor<256x512xf32>, tensor<256x512xf16>
}
