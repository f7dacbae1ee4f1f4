func.func @gemm(%a: !nvfp4.tensor<2048x2048xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, %b: !nvfp4.tensor<2048x2048xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<2048x2048xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<2048x2048xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, !nvfp4.tensor<2048x2048xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> -> tensor<2048x2048xbf16>
  return %c : tensor<2048x2048xbf16>
}
