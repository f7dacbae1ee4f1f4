// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_90a | FileCheck %s

// Row kernels (RowKernels.cpp): reductions over the last loop and the
// elementwise op that reads their results along the same rows become one
// kernel in which W threads own a row.

// Softmax over rows of 16384 BF16: one kernel (no memset for the -inf and
// zero inits: the kernel takes the constants), a block of 512 threads a
// row, each thread 4 chunks of 8 elements (16-byte loads) kept in registers
// for the three phases: the max and the sum each reduce by shuffles within
// the warps and the 16 warps' partials through shared memory, and the
// normalized row leaves in 4 16-byte stores. The row is read once.
// CHECK-LABEL: func.func @softmax_long_rows
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_linalg_rows_2x4x16384_3op_[0-9A-F]+]] blocks in
// CHECK-SAME: args(%{{.*}} : memref<131072xbf16>, %{{.*}} : memref<131072xbf16>)
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @[[K]](%[[OUT:.*]]: memref<131072xbf16>, %[[IN:.*]]: memref<131072xbf16>) workgroup(%[[MAXS:.*]] : memref<16xf32, #gpu.address_space<workgroup>>, %[[SUMS:.*]] : memref<16xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK-COUNT-4: vector.load %[[IN]][%{{.*}}] {alignment = 16 : i64} : memref<131072xbf16>, vector<8xbf16>
// CHECK-NOT: vector.load
// CHECK-NOT: memref.load %[[IN]]
// CHECK: gpu.shuffle xor
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[MAXS]]
// CHECK: gpu.barrier
// CHECK-COUNT-16: memref.load %[[MAXS]]
// CHECK: llvm.intr.exp2
// CHECK: gpu.shuffle xor
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[SUMS]]
// CHECK: gpu.barrier
// The division by the row's sum: one reciprocal, then per element a
// multiply and two fmas (correctly rounded: nvfp4/Numerics/RowDivision.h);
// per chunk of 8 one branch to IEEE divisions where some element lies
// outside that path's ranges.
// CHECK: llvm.intr.exp2
// CHECK: %[[R:.*]] = arith.divf %[[ONE:.*]], %[[SUM:.*]] : f32
// CHECK: %[[Q0:.*]] = arith.mulf %{{.*}}, %[[R]] : f32
// CHECK: %[[E:.*]] = llvm.intr.fma(%[[Q0]], %[[SUM]], %{{.*}})
// CHECK: %[[NE:.*]] = arith.negf %[[E]] : f32
// CHECK: llvm.intr.fma(%[[NE]], %[[R]], %[[Q0]])
// CHECK: %[[CHUNK:.*]]:8 = scf.if %{{.*}} -> (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16) {
// CHECK: } else {
// CHECK-COUNT-8: arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK: }
// CHECK-COUNT-4: vector.store %{{.*}}, %[[OUT]][%{{.*}}] {alignment = 16 : i64} : memref<131072xbf16>, vector<8xbf16>
// CHECK-NOT: vector.load
// CHECK: gpu.return
func.func @softmax_long_rows(%s: tensor<2x4x16384xbf16>) -> tensor<2x4x16384xbf16> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x4x16384xbf16>) outs(%mf : tensor<2x4xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %max : tensor<2x4x16384xbf16>, tensor<2x4xf32>) outs(%sf : tensor<2x4xf32>) {
  ^bb0(%in: bf16, %mx: f32, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %d = arith.subf %v, %mx : f32
    %p = math.exp %d : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %o = tensor.empty() : tensor<2x4x16384xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max, %sum : tensor<2x4x16384xbf16>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%o : tensor<2x4x16384xbf16>) {
  ^bb0(%in: bf16, %mx: f32, %total: f32, %out: bf16):
    %v = arith.extf %in : bf16 to f32
    %d = arith.subf %v, %mx : f32
    %p = math.exp %d : f32
    %q = arith.divf %p, %total : f32
    %t = arith.truncf %q : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x16384xbf16>
  return %y : tensor<2x4x16384xbf16>
}

// -----

// RMSNorm over rows of 4096: one kernel, 128 threads a row; the weight,
// contiguous along the row, is read in 16-byte vectors too, and x is read
// once (its vectors are kept from the sum of squares to the scaling).
// CHECK-LABEL: func.func @rms_norm
// CHECK: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_linalg_rows_16x4096_2op_[0-9A-F]+]]
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @[[K]](%[[OUT:.*]]: memref<65536xbf16>, %[[X:.*]]: memref<65536xbf16>, %[[W:.*]]: memref<4096xbf16>) workgroup(%{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-COUNT-4: vector.load %[[X]]
// CHECK-NOT: vector.load %[[X]]
// CHECK: gpu.barrier
// CHECK: llvm.intr.sqrt
// CHECK: vector.load %[[W]][%{{.*}}] {alignment = 16 : i64} : memref<4096xbf16>, vector<8xbf16>
// CHECK-NOT: vector.load %[[X]]
// CHECK: vector.store %{{.*}}, %[[OUT]]
func.func @rms_norm(%x: tensor<16x4096xbf16>, %w: tensor<4096xbf16>) -> tensor<16x4096xbf16> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 4096.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x4096xbf16>) outs(%z : tensor<16xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %o = tensor.empty() : tensor<16x4096xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>,
                                        affine_map<(t, c) -> (c)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %w : tensor<16x4096xbf16>, tensor<16xf32>, tensor<4096xbf16>) outs(%o : tensor<16x4096xbf16>) {
  ^bb0(%in: bf16, %s: f32, %g: bf16, %out: bf16):
    %mean = arith.divf %s, %n : f32
    %var = arith.addf %mean, %eps : f32
    %r = math.rsqrt %var : f32
    %v = arith.extf %in : bf16 to f32
    %gv = arith.extf %g : bf16 to f32
    %a = arith.mulf %v, %r : f32
    %b = arith.mulf %a, %gv : f32
    %t = arith.truncf %b : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x4096xbf16>
  return %y : tensor<16x4096xbf16>
}

// -----

// Short rows (96 f32: 24 chunks of 4): a warp a row, 8 rows a block, the
// rows guarded (20 is not a multiple of 8), no barrier. The 8 lanes past
// the last chunk read the last chunk, drop it from the sum and store
// nothing. The init comes from its buffer and is added last.
// CHECK-LABEL: func.func @short_rows
// CHECK: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_linalg_rows_20x96_2op_[0-9A-F]+]]
// CHECK: gpu.func @[[K]](%[[OUT:.*]]: memref<1920xf32>, %[[X:.*]]: memref<1920xf32>, %[[INIT:.*]]: memref<20xf32>)
// CHECK-NOT: workgroup
// CHECK: %[[ROW:.*]] = arith.addi
// CHECK: scf.if
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: arith.select %[[VALID]]
// CHECK: vector.load %[[X]]{{.*}}vector<4xf32>
// CHECK: arith.select %[[VALID]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: %[[I:.*]] = memref.load %[[INIT]][%[[ROW]]]
// CHECK: %[[TOTAL:.*]] = arith.addf %[[I]], %{{.*}} : f32
// CHECK-NOT: gpu.barrier
// CHECK: arith.divf %{{.*}}, %[[TOTAL]]
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[OUT]]
func.func @short_rows(%x: tensor<20x96xf32>, %init: tensor<20xf32>) -> tensor<20x96xf32> {
  %sum = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<20x96xf32>) outs(%init : tensor<20xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<20xf32>
  %o = tensor.empty() : tensor<20x96xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<20x96xf32>, tensor<20xf32>) outs(%o : tensor<20x96xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<20x96xf32>
  return %y : tensor<20x96xf32>
}

// -----

// Rows too long for the registers (65536 f32: 16 chunks of 16 bytes a
// thread of 1024): each phase reads the row again (from L2), in a loop.
// CHECK-LABEL: func.func @long_rows
// CHECK: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_linalg_rows_4x65536_2op_[0-9A-F]+]]
// CHECK: gpu.func @[[K]](
// CHECK-SAME: known_block_size = array<i32: 1024, 1, 1>
// CHECK: scf.for
// CHECK: vector.load
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: vector.load
// CHECK: vector.store
func.func @long_rows(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x65536xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %o = tensor.empty() : tensor<4x65536xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<4x65536xf32>, tensor<4xf32>) outs(%o : tensor<4x65536xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = math.rsqrt %s : f32
    %q = arith.mulf %in, %r : f32
    linalg.yield %q : f32
  } -> tensor<4x65536xf32>
  return %y : tensor<4x65536xf32>
}

// -----

// A reduction whose result is also used elsewhere (here: returned) is not
// part of a row kernel: the one-op kernels, as before.
// CHECK-LABEL: func.func @sum_also_returned
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_generic_8x256_r1_
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_linalg_generic_8x256_
// CHECK-NOT: nvfp4_linalg_rows
func.func @sum_also_returned(%x: tensor<8x256xf32>) -> (tensor<8x256xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %o = tensor.empty() : tensor<8x256xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<8x256xf32>, tensor<8xf32>) outs(%o : tensor<8x256xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<8x256xf32>
  return %y, %sum : tensor<8x256xf32>, tensor<8xf32>
}

// -----

// RMSNorm whose result an NVFP4 quantization reads with its amax: the row
// kernel also computes max |y| of what it stores (each thread's, the
// block's through shared memory, one atomic max per block), and the
// quantization takes that buffer; no amax kernel reads the result again.
// CHECK-LABEL: func.func @rms_norm_amax
// CHECK: %[[AMAX:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memset %[[AMAX]]
// CHECK: gpu.launch_func @nvfp4_kernels::@[[K:nvfp4_linalg_rows_16x4096_2op_[0-9A-F]+_amax]]
// CHECK-SAME: %[[AMAX]] : memref<1xi32>)
// CHECK-NOT: @nvfp4_amax_
// CHECK: gpu.launch_func @nvfp4_kernels::@nvfp4_quantize_16x4096xbf16_1x16_rn
// CHECK-SAME: %[[AMAX]] : memref<1xi32>
// CHECK: gpu.func @[[K]](
// CHECK-SAME: workgroup(%{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>, %[[BLOCKMAX:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.barrier
// CHECK: math.absf
// CHECK: arith.maxnumf
// CHECK: vector.store
// CHECK: memref.store %{{.*}}, %[[BLOCKMAX]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[BLOCKMAX]]
// CHECK: memref.atomic_rmw maxs
func.func @rms_norm_amax(%x: tensor<16x4096xbf16>, %w: tensor<4096xbf16>)
    -> !nvfp4.tensor<16x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 4096.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %e = tensor.empty() : tensor<16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x4096xbf16>) outs(%z : tensor<16xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %o = tensor.empty() : tensor<16x4096xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>,
                                        affine_map<(t, c) -> (c)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %w : tensor<16x4096xbf16>, tensor<16xf32>, tensor<4096xbf16>) outs(%o : tensor<16x4096xbf16>) {
  ^bb0(%in: bf16, %s: f32, %g: bf16, %out: bf16):
    %mean = arith.divf %s, %n : f32
    %var = arith.addf %mean, %eps : f32
    %r = math.rsqrt %var : f32
    %v = arith.extf %in : bf16 to f32
    %gv = arith.extf %g : bf16 to f32
    %a = arith.mulf %v, %r : f32
    %b = arith.mulf %a, %gv : f32
    %t = arith.truncf %b : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x4096xbf16>
  %a = nvfp4.amax %y : tensor<16x4096xbf16>
  %q = nvfp4.quantize %y amax(%a) : tensor<16x4096xbf16>
      -> !nvfp4.tensor<16x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
  return %q : !nvfp4.tensor<16x4096xf4E2M1FN, scale = f8E4M3FN, block = 1x16>
}
