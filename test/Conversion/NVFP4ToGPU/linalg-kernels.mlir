// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s
// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_100a | FileCheck %s --check-prefix=SM100

// The linalg ops around the nvfp4 ops become kernels (LinalgKernels.cpp).

// An elementwise generic (a residual add in f32, rounded to BF16): one
// thread per 8 consecutive elements (16 bytes of BF16), the body cloned for
// each between one vector load per operand and one vector store.
// CHECK-LABEL: func.func @residual_add
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<16x64xbf16>
// CHECK: gpu.launch_func @nvfp4_kernels::@[[ADD:nvfp4_linalg_generic_16x64_[0-9A-F]+]] blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in
// CHECK-SAME: args(%{{.*}} : memref<1024xbf16>, %{{.*}} : memref<1024xbf16>, %{{.*}} : memref<1024xbf16>)
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[OUT]]
// CHECK: return %[[T]]
// CHECK: gpu.func @[[ADD]](
// CHECK: %[[TID:.*]] = arith.addi
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: arith.cmpi ult, %[[TID]], %[[C128]]
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1024xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1024xbf16>, vector<8xbf16>
// CHECK-COUNT-8: arith.truncf
// CHECK-NOT: memref.load
// CHECK: vector.from_elements
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1024xbf16>, vector<8xbf16>
// CHECK-NOT: memref.store
// SM100-LABEL: func.func @residual_add
// SM100: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_generic_16x64_
func.func @residual_add(%x: tensor<16x64xbf16>, %y: tensor<16x64xbf16>) -> tensor<16x64xbf16> {
  %e = tensor.empty() : tensor<16x64xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<16x64xbf16>, tensor<16x64xbf16>) outs(%e : tensor<16x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %fa = arith.extf %a : bf16 to f32
    %fb = arith.extf %b : bf16 to f32
    %s = arith.addf %fa, %fb : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x64xbf16>
  return %r : tensor<16x64xbf16>
}

// -----

// A row reduction (RMSNorm's sum of squares): a warp per row, every 32nd
// element per lane, an xor butterfly, lane 0 adds the init and stores. The
// zero init is a gpu.memset.
// CHECK-LABEL: func.func @row_sum_of_squares
// CHECK: %[[INIT:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: gpu.memset %[[INIT]], %{{.*}} : memref<8xf32>, f32
// CHECK: gpu.launch_func @nvfp4_kernels::@[[SUM:nvfp4_linalg_generic_8x4096_r1_[0-9A-F]+]]
// CHECK: gpu.func @[[SUM]](
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[ROW:.*]] = arith.divui %{{.*}}, %[[C32]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
func.func @row_sum_of_squares(%x: tensor<8x4096xbf16>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xbf16>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// Softmax's masked max and the exp that reads it: one row kernel
// (RowKernels.cpp; row-kernels.mlir has the details) that takes the -inf
// init as a constant (no memset), exp written as ex2.approx (no libdevice),
// linalg.index the loop index.
// CHECK-LABEL: func.func @masked_max_exp
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch_func @nvfp4_kernels::@[[ROWS:nvfp4_linalg_rows_4x32x32_2op_[0-9A-F]+]]
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @[[ROWS]](
// CHECK: arith.cmpi ule
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: llvm.intr.exp2
func.func @masked_max_exp(%s: tensor<4x32x32xf32>) -> tensor<4x32x32xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<4x32x32xf32>) outs(%f : tensor<4x32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %visible = arith.cmpi ule, %j, %i : index
    %x = arith.select %visible, %in, %ninf : f32
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<4x32x32xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<4x32x32xf32>, tensor<4x32xf32>) outs(%e2 : tensor<4x32x32xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x32x32xf32>
  return %p : tensor<4x32x32xf32>
}

// -----

// Head split (a view, then a transpose kernel), RoPE's partner element
// (tensor.extract of a tensor from outside: a load from its buffer, passed
// as one more argument) and repeat_kv (a broadcast kernel, then a view).
// CHECK-LABEL: func.func @heads_rope_repeat
// CHECK: memref.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 2, 16]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_transpose_2x8x16_
// CHECK: gpu.launch_func @nvfp4_kernels::@[[ROPE:nvfp4_linalg_generic_2x8x16_[0-9A-F]+]]
// CHECK-SAME: args(%{{.*}} : memref<256xbf16>, %{{.*}} : memref<256xbf16>, %{{.*}} : memref<256xbf16>)
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_broadcast_2x2x8x16_
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]]
// CHECK-NOT: linalg.
// CHECK: gpu.func @[[ROPE]](
// CHECK: arith.select
// CHECK: memref.load %arg2
func.func @heads_rope_repeat(%x: tensor<8x32xbf16>) -> tensor<4x8x16xbf16> {
  %ex = tensor.expand_shape %x [[0], [1, 2]] output_shape [8, 2, 16] : tensor<8x32xbf16> into tensor<8x2x16xbf16>
  %e = tensor.empty() : tensor<2x8x16xbf16>
  %h = linalg.transpose ins(%ex : tensor<8x2x16xbf16>) outs(%e : tensor<2x8x16xbf16>) permutation = [1, 0, 2]
  %e2 = tensor.empty() : tensor<2x8x16xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (h, t, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<2x8x16xbf16>) outs(%e2 : tensor<2x8x16xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %hh = linalg.index 0 : index
    %t = linalg.index 1 : index
    %j = linalg.index 2 : index
    %half = arith.constant 8 : index
    %low = arith.cmpi ult, %j, %half : index
    %up = arith.addi %j, %half : index
    %down = arith.subi %j, %half : index
    %pj = arith.select %low, %up, %down : index
    %p = tensor.extract %h[%hh, %t, %pj] : tensor<2x8x16xbf16>
    linalg.yield %p : bf16
  } -> tensor<2x8x16xbf16>
  %e3 = tensor.empty() : tensor<2x2x8x16xbf16>
  %b = linalg.broadcast ins(%r : tensor<2x8x16xbf16>) outs(%e3 : tensor<2x2x8x16xbf16>) dimensions = [1]
  %c = tensor.collapse_shape %b [[0, 1], [2], [3]] : tensor<2x2x8x16xbf16> into tensor<4x8x16xbf16>
  return %c : tensor<4x8x16xbf16>
}

// -----

// The attention GEMMs in BF16 on sm_90a: the route's wgmma kernel with BF16
// operands read by TMA (K = 128 padded to the 256 of a K step by the
// tensor maps' zero fill). P x V (B stored [b, k, n]) transposes V first.
// The zero fill of C is not needed: the GEMM writes every element. C
// leaves through the TMA-store epilogue (_ts): its map has boxes of 16 rows
// x 128 bytes.
// CHECK-LABEL: func.func @attention_bmms
// CHECK-NOT: gpu.memset %{{.*}} : memref<4x128x128xbf16>
// CHECK: nvgpu.tma.create.descriptor %{{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}] : memref<*xbf16> -> <tensor = memref<1x128x64xbf16, 3>, swizzle = swizzle_128b
// CHECK: nvgpu.tma.create.descriptor %{{.*}} : memref<*xbf16> -> <tensor = memref<1x16x64xbf16, 3>, swizzle = swizzle_128b
// CHECK: gpu.launch_func @nvfp4_kernels::@[[QK:nvfp4_bf16_matmul_4x128x128x128_to_bf16_wgmma_128x128x256_s0_d4w0_p16_ts]]
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_transpose_4x128x128_
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_bf16_matmul_4x128x128x128_to_f32_wgmma_
// CHECK-NOT: linalg.
// CHECK: gpu.func @[[QK]](
// CHECK: nvvm.wgmma.mma_async
// CHECK-SAME: bf16
// On sm_100a the same GEMMs are the tcgen05 .kind::f16 kernel
// (bf16-gemm-blackwell.mlir has the details).
// SM100-LABEL: func.func @attention_bmms
// SM100: gpu.launch_func @nvfp4_kernels::@nvfp4_bf16_matmul_4x128x128x128_to_bf16_tcgen05_128x128x64_s6_ts
// SM100: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_transpose_4x128x128_
// SM100: gpu.launch_func @nvfp4_kernels::@nvfp4_bf16_matmul_4x128x128x128_to_f32_tcgen05_128x128x64_s6_ts
// SM100-NOT: linalg.batch_matmul
func.func @attention_bmms(%q: tensor<4x128x128xbf16>, %k: tensor<4x128x128xbf16>, %v: tensor<4x128x128xbf16>)
    -> (tensor<4x128x128xbf16>, tensor<4x128x128xf32>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x128x128xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x128x128xbf16>, tensor<4x128x128xbf16>) outs(%z : tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  %e2 = tensor.empty() : tensor<4x128x128xf32>
  %c = linalg.batch_matmul ins(%s, %v : tensor<4x128x128xbf16>, tensor<4x128x128xbf16>) outs(%e2 : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  return %s, %c : tensor<4x128x128xbf16>, tensor<4x128x128xf32>
}

// -----

// What the patterns do not take stays on the host: two reduction loops,
// and a body op without a kernel lowering (math.tanh would need libdevice).
// CHECK-LABEL: func.func @stays_on_host
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: math.tanh
func.func @stays_on_host(%x: tensor<8x64xf32>, %z: tensor<f32>) -> (tensor<f32>, tensor<8x64xf32>) {
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%z : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<8x64xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  return %s, %t : tensor<f32>, tensor<8x64xf32>
}

// -----

// Fused amax: the residual add's kernel also computes the amax of what it
// stores (grid-stride, warp max, one atomic per warp), for the explicit
// nvfp4.amax of its result and for the quantization of a reshape of it that
// computes its own amax; no nvfp4_amax kernel reads the sum again. Both
// quantizations take the fused amax buffer.
// CHECK-LABEL: func.func @fused_amax
// CHECK: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memset %[[AMAX]]
// CHECK: gpu.launch_func @nvfp4_kernels::@[[ADD:nvfp4_linalg_generic_32x64_[0-9A-F]+_amax]]
// CHECK-SAME: %[[AMAX]] : memref<1xi32>)
// CHECK-NOT: @nvfp4_amax_
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_32x64xbf16_1x16_rn
// CHECK-SAME: %[[AMAX]] : memref<1xi32>
// CHECK-NOT: @nvfp4_amax_
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_2x16x64xbf16_1x16_rn
// CHECK-SAME: %[[AMAX]] : memref<1xi32>
// CHECK: gpu.func @[[ADD]](
// CHECK: scf.for
// CHECK: vector.load
// CHECK: arith.addf
// CHECK: vector.store
// CHECK: math.absf
// CHECK: arith.maxnumf
// CHECK: gpu.shuffle xor
// CHECK: memref.atomic_rmw maxs
func.func @fused_amax(%x: tensor<32x64xbf16>, %y: tensor<32x64xbf16>)
    -> (!nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
        !nvfp4.tensor<2x16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>) {
  %e = tensor.empty() : tensor<32x64xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<32x64xbf16>, tensor<32x64xbf16>) outs(%e : tensor<32x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %fa = arith.extf %a : bf16 to f32
    %fb = arith.extf %b : bf16 to f32
    %s = arith.addf %fa, %fb : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<32x64xbf16>
  %a = nvfp4.amax %r : tensor<32x64xbf16>
  %q = nvfp4.quantize %r amax(%a) : tensor<32x64xbf16>
      -> !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  %v = tensor.expand_shape %r [[0, 1], [2]] output_shape [2, 16, 64]
      : tensor<32x64xbf16> into tensor<2x16x64xbf16>
  %q2 = nvfp4.quantize %v : tensor<2x16x64xbf16>
      -> !nvfp4.tensor<2x16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q, %q2 : !nvfp4.tensor<32x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>,
      !nvfp4.tensor<2x16x64xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
