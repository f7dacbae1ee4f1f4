func.func @gemm(%a: !nvfp4.tensor<4096x4096xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, %b: !nvfp4.tensor<4096x4096xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<4096x4096xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<4096x4096xf8E4M3FN, scale = f8E8M0FNU, block = 1x32>, !nvfp4.tensor<4096x4096xf8E4M3FN, scale = f8E8M0FNU, block = 1x32> -> tensor<4096x4096xbf16>
  return %c : tensor<4096x4096xbf16>
}
