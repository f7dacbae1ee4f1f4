func.func @gemm(%a: !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>, %b: !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>) -> tensor<512x512xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32>, !nvfp4.tensor<512x512xf4E2M1FN, scale = f8E8M0FNU, block = 1x32> -> tensor<512x512xbf16>
  return %c : tensor<512x512xbf16>
}
