// MX GEMMs for tcgen05-mx-gemm.test, one per MX schedule of the tcgen05
// kernel: MXFP8 E4M3 x E5M2 and E5M2 x E5M2 with linear scales (re-laid as
// 128x4 atoms by the producer), MXFP8 E4M3 x E4M3 with swizzled scales on a
// persistent grid (more tiles than SMs), MXFP4 batched and ragged with
// linear scales, MXFP4 with swizzled scales on a persistent grid.
func.func @main(%a: !nvfp4.tensor<256x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
                %b: !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32>,
                %c: !nvfp4.tensor<128x512xf8E5M2, scale = f8E8M0FNU, block = 1x32>,
                %d: !nvfp4.tensor<2048x512xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
                %e: !nvfp4.tensor<2560x512xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
                %x: !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                %y: !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
                %u: !nvfp4.tensor<2048x1024xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
                %v: !nvfp4.tensor<2560x1024xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
                %alpha: f32)
    -> (tensor<256x384xbf16>, tensor<128x128xf32>, tensor<2048x2560xbf16>,
        tensor<2x128x96xf32>, tensor<2048x2560xbf16>) {
  %r0 = nvfp4.scaled_matmul %a, %b alpha(%alpha)
      : !nvfp4.tensor<256x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<384x1024xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<256x384xbf16>
  %r1 = nvfp4.scaled_matmul %c, %c
      : !nvfp4.tensor<128x512xf8E5M2, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<128x512xf8E5M2, scale = f8E8M0FNU, block = 1x32>
      -> tensor<128x128xf32>
  %r2 = nvfp4.scaled_matmul %d, %e alpha(%alpha)
      : !nvfp4.tensor<2048x512xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
        !nvfp4.tensor<2560x512xf8E4M3FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
      -> tensor<2048x2560xbf16>
  %r3 = nvfp4.scaled_matmul %x, %y
      : !nvfp4.tensor<2x128x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>,
        !nvfp4.tensor<2x96x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>
      -> tensor<2x128x96xf32>
  %r4 = nvfp4.scaled_matmul %u, %v alpha(%alpha)
      : !nvfp4.tensor<2048x1024xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>,
        !nvfp4.tensor<2560x1024xf4E2M1FN, scale = f8E8M0FNU, block = 1x32, layout = swizzled_128x4>
      -> tensor<2048x2560xbf16>
  return %r0, %r1, %r2, %r3, %r4
      : tensor<256x384xbf16>, tensor<128x128xf32>, tensor<2048x2560xbf16>,
        tensor<2x128x96xf32>, tensor<2048x2560xbf16>
}
