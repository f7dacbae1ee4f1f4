// RUN: nvfp4-opt %s -canonicalize -split-input-file -allow-unregistered-dialect | FileCheck %s

// In a graph region (here the module body) a fold through a producer of the
// same family can reach the op itself: transpose(transpose(x)) with x the
// outer op. Such folds are refused, so canonicalization terminates (it used
// to loop forever); the dead cycles are then erased.

// CHECK-LABEL: module
// CHECK-NOT:     nvfp4.transpose
!a = !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
!t = !nvfp4.tensor<64x32xf4E2M1FN, scale = f8E4M3FN, block = 16x16>
%x = nvfp4.transpose %y : !a -> !t
%y = nvfp4.transpose %x : !t -> !a

// -----

// A cycle with a use outside it stays (nothing can be folded), and the
// pass ends.
// CHECK-LABEL: module
// CHECK:         %[[A:.*]] = nvfp4.swizzle_scales %[[B:.*]] :
// CHECK:         %[[B]] = nvfp4.swizzle_scales %[[A]] :
// CHECK:         "test.keep"(%[[A]])
!l = !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
!s = !nvfp4.tensor<128x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16, layout = swizzled_128x4>
%a = nvfp4.swizzle_scales %b : !l -> !s
%b = nvfp4.swizzle_scales %a : !s -> !l
"test.keep"(%a) : (!s) -> ()

// -----

// pack(unpack(p)) where p is the pack itself, and unpack(pack(...)) of the
// unpack's own results.
// CHECK-LABEL: module
// CHECK:         nvfp4.pack
// CHECK:         nvfp4.unpack
// CHECK:         "test.keep"
!q = !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
%p = nvfp4.pack %c, %s, %m : !q
%c, %s, %m = nvfp4.unpack %p : !q
"test.keep"(%p) : (!q) -> ()
