// MX GEMMs for sm_90a-mx-gemm.test: MXFP8 E4M3 x E5M2 with a 256-column
// tile and MXFP4 batched with a 128-column tile, both from BF16 inputs.
func.func @main(%a: tensor<256x1024xbf16>, %b: tensor<384x1024xbf16>,
                %x: tensor<2x128x512xbf16>, %y: tensor<2x96x512xbf16>,
                %alpha: f32) -> (tensor<256x384xbf16>, tensor<2x128x96xf32>) {
  %qa = nvfp4.quantize %a : tensor<256x1024xbf16> -> !nvfp4.tensor<256x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>
  %qb = nvfp4.quantize %b : tensor<384x1024xbf16> -> !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32>
  %c = nvfp4.scaled_matmul %qa, %qb alpha(%alpha)
      : !nvfp4.tensor<256x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<256x384xbf16>
  %qx = nvfp4.quantize %x : tensor<2x128x512xbf16> -> !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  %qy = nvfp4.quantize %y : tensor<2x96x512xbf16> -> !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
  %d = nvfp4.scaled_matmul %qx, %qy
      : !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<2x128x96xf32>
  return %c, %d : tensor<256x384xbf16>, tensor<2x128x96xf32>
}
