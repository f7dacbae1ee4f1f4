// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s
// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s --check-prefix=SM100

// An elementwise op whose only user is a 1x16 quantization with a given
// amax writes the codes and scales itself (ProducerQuantize.cpp): one
// kernel, no quantize kernel, the op's result never stored. The kernel
// reads the amax from a device buffer (the function argument's bits),
// loads each operand in 16-byte vectors, and stores 8 code bytes and one
// scale a run of 16 points.

!q = !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
#id = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @relu_mul_quantize
// CHECK-NOT: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_
// CHECK: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_linalg_generic_64x128_[0-9A-F]+_quantize_1x16_rn]]
// CHECK-NOT: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_
// CHECK: gpu.func @[[K]](%{{.*}}: memref<4096xi8>, %{{.*}}: memref<512xi8>, %{{.*}}: memref<1xi32>, %{{.*}}: memref<8192xbf16>, %{{.*}}: memref<8192xbf16>)
// CHECK: vector.load {{.*}} : memref<8192xbf16>, vector<8xbf16>
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<1024xi32>, vector<2xi32>
// CHECK: memref.store {{.*}} : memref<512xi8>
// SM100-LABEL: func.func @relu_mul_quantize
// SM100: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_generic_64x128_{{[0-9A-F]+}}_quantize_1x16_rn
// SM100: gpu.func @nvfp4_linalg_generic_64x128_{{[0-9A-F]+}}_quantize_1x16_rn(
// SM100-COUNT-8: nvvm.convert.f32x2.to.f4x2
func.func @relu_mul_quantize(%g: tensor<64x128xbf16>, %u: tensor<64x128xbf16>,
                             %a: f32) -> !q {
  %e = tensor.empty() : tensor<64x128xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<64x128xbf16>, tensor<64x128xbf16>)
      outs(%e : tensor<64x128xbf16>) {
  ^bb0(%gv: bf16, %uv: bf16, %out: bf16):
    %zero = arith.constant 0.0 : f32
    %gf = arith.extf %gv : bf16 to f32
    %uf = arith.extf %uv : bf16 to f32
    %r = arith.maximumf %gf, %zero : f32
    %p = arith.mulf %r, %uf : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  } -> tensor<64x128xbf16>
  %q = nvfp4.quantize %y amax(%a) : tensor<64x128xbf16> -> !q
  return %q : !q
}

// -----

// Not fused: the result has another user (it must be stored), the
// quantization rounds stochastically, or it computes its own amax (the
// producer's kernel computes that amax instead, ProducerAmaxToGPU, and the
// quantize kernel reads the stored result).

!q = !nvfp4.tensor<64x128xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
#id = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: _quantize_1x16_rn blocks
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_generic_64x128_{{[0-9A-F]+}} blocks
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x128xbf16_1x16_rn_amaxarg
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_generic_64x128_{{[0-9A-F]+}} blocks
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x128xbf16_1x16_sr_amaxarg
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_generic_64x128_{{[0-9A-F]+}}_amax blocks
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_64x128xbf16_1x16_rn blocks
// CHECK-NOT: _quantize_1x16_rn blocks
// CHECK: return
func.func @not_fused(%g: tensor<64x128xbf16>, %u: tensor<64x128xbf16>, %a: f32,
                     %seed: i64) -> (!q, tensor<64x128xbf16>, !q, !q) {
  %e = tensor.empty() : tensor<64x128xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<64x128xbf16>, tensor<64x128xbf16>)
      outs(%e : tensor<64x128xbf16>) {
  ^bb0(%gv: bf16, %uv: bf16, %out: bf16):
    %gf = arith.extf %gv : bf16 to f32
    %uf = arith.extf %uv : bf16 to f32
    %p = arith.addf %gf, %uf : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  } -> tensor<64x128xbf16>
  %q = nvfp4.quantize %y amax(%a) : tensor<64x128xbf16> -> !q
  %z = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<64x128xbf16>, tensor<64x128xbf16>)
      outs(%e : tensor<64x128xbf16>) {
  ^bb0(%gv: bf16, %uv: bf16, %out: bf16):
    %gf = arith.extf %gv : bf16 to f32
    %uf = arith.extf %uv : bf16 to f32
    %p = arith.mulf %gf, %uf : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  } -> tensor<64x128xbf16>
  %r = nvfp4.quantize %z amax(%a) rounding<stochastic> seed(%seed) : tensor<64x128xbf16> -> !q
  %w = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<64x128xbf16>, tensor<64x128xbf16>)
      outs(%e : tensor<64x128xbf16>) {
  ^bb0(%gv: bf16, %uv: bf16, %out: bf16):
    %gf = arith.extf %gv : bf16 to f32
    %uf = arith.extf %uv : bf16 to f32
    %p = arith.subf %gf, %uf : f32
    %o = arith.truncf %p : f32 to bf16
    linalg.yield %o : bf16
  } -> tensor<64x128xbf16>
  %s = nvfp4.quantize %w : tensor<64x128xbf16> -> !q
  return %q, %y, %r, %s : !q, tensor<64x128xbf16>, !q, !q
}
