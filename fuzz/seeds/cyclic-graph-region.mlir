// Issue 16, H1: use-def cycles in a graph region (the module body) through
// every nvfp4 op with a folder that looks through its producer.
!a = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!t = !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!l = !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!s = !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
%x = nvfp4.transpose %y : !a -> !t
%y = nvfp4.transpose %x : !t -> !a
%p = nvfp4.swizzle_scales %q : !l -> !s
%q = nvfp4.swizzle_scales %p : !s -> !l
%k = nvfp4.pack %c, %sc, %m : !l
%c, %sc, %m = nvfp4.unpack %k : !l
%g = nvfp4.scaled_matmul %q, %q : !l, !l -> tensor<128x128xbf16>
%h = nvfp4.quantize %g : tensor<128x128xbf16> -> !nvfp4.tensor<128x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
