// GEMMs whose M and N are not multiples of the 128 x 128 tile, batched, with
// linear scales on both sides (the tcgen05 producer re-lays them into 128x4
// atoms), and one whose K is not a multiple of 256 (the SIMT kernel).
!a = !nvfp4.tensor<2x200x512xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!b = !nvfp4.tensor<2x272x512xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!c = !nvfp4.tensor<128x384xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @ragged(%x: tensor<2x200x512xbf16>, %w: tensor<2x272x512xbf16>,
                  %u: tensor<128x384xbf16>) -> (tensor<2x200x272xf32>, tensor<128x128xbf16>) {
  %xq = nvfp4.quantize %x : tensor<2x200x512xbf16> -> !a
  %wq = nvfp4.quantize %w : tensor<2x272x512xbf16> -> !b
  %y = nvfp4.scaled_matmul %xq, %wq : !a, !b -> tensor<2x200x272xf32>
  %uq = nvfp4.quantize %u : tensor<128x384xbf16> -> !c
  %z = nvfp4.scaled_matmul %uq, %uq : !c, !c -> tensor<128x128xbf16>
  return %y, %z : tensor<2x200x272xf32>, tensor<128x128xbf16>
}
