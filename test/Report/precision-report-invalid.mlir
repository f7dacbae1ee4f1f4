// A GEMM with a dynamic shape has unknown FLOPs: the report is an error,
// not a guess.
// RUN: nvfp4-opt %s --nvfp4-print-precision-report -verify-diagnostics -o /dev/null

func.func @dynamic(%a: tensor<?x32xbf16>, %b: tensor<32x16xbf16>, %c: tensor<?x16xbf16>)
    -> tensor<?x16xbf16> {
  // expected-error @+1 {{precision report: the GEMM shape is dynamic, so its FLOPs are unknown}}
  %r = linalg.matmul {nvfp4.precision = "bf16"}
      ins(%a, %b : tensor<?x32xbf16>, tensor<32x16xbf16>)
      outs(%c : tensor<?x16xbf16>) -> tensor<?x16xbf16>
  return %r : tensor<?x16xbf16>
}
