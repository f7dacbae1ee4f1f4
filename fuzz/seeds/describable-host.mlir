// Issue 16, W2/W4/P5: host code the manifest must describe or reject
// (loops, branches, duplicate results), constant amaxes, a pack of parts.
!q = !nvfp4.tensor<16x32xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
func.func @f(%x: tensor<16x32xbf16>, %n: index, %c: i1, %codes: tensor<16x32xf4E2M1FN>, %s: tensor<16x2xf8E4M3FN>) -> (tensor<16x32xbf16>, tensor<16x32xbf16>, !q) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<16x32xbf16> {
    %d = nvfp4.hadamard %acc : tensor<16x32xbf16>
    scf.yield %d : tensor<16x32xbf16>
  }
  %a = arith.constant 6.0 : f32
  %q = nvfp4.quantize %r amax(%a) : tensor<16x32xbf16> -> !q
  %p = nvfp4.pack %codes, %s, %a : !q
  %v = scf.if %c -> !q {
    scf.yield %q : !q
  } else {
    scf.yield %p : !q
  }
  return %r, %r, %v : tensor<16x32xbf16>, tensor<16x32xbf16>, !q
}
