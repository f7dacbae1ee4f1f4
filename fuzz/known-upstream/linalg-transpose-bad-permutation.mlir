// Found by scripts/fuzz.sh on 2026-11-30. Debian MLIR 22.1.8 crashes (SIGSEGV in
// linalg::TransposeOp::parse, Attribute::getContext on a null attribute) when
// the `permutation` array of linalg.transpose is malformed: upstream
// mlir-opt crashes on this file too, so the bug is in the parser we link,
// not in nvfp4 code. nvfp4-opt cannot intercept it; kept here until the
// MLIR package is fixed (then turn it into a test/ regression test).
func.func @f(%x: tensor<32x64xbf16>, %e: tensor<64x32xbf16>) {
  %t = linalg.transpose ins(%x : tensor<32x64xbf16>) outs(%e : tensor<64x32xbf16>) permutation = [1, @
  return
}
