// gemm-decode.mlir with K = 4096: 32 chunks of 128 K, enough for 16 warps.
!a = !nvfp4.tensor<16x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<2304x4096xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
func.func @decode(%a: !a, %b: !b) -> tensor<16x2304xbf16> {
  %c = nvfp4.scaled_matmul %a, %b : !a, !b -> tensor<16x2304xbf16>
  return %c : tensor<16x2304xbf16>
}
