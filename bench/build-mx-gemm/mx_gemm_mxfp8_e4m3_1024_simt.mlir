func.func @gemm(%a: !nvfp4.tensor<1024x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, %b: !nvfp4.tensor<1024x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<1024x1024xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<1024x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, !nvfp4.tensor<1024x1024xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> -> tensor<1024x1024xbf16>
  return %c : tensor<1024x1024xbf16>
}
