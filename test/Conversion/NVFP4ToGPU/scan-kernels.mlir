// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_90a 2>/dev/null | FileCheck %s
// RUN: nvfp4-opt %s --split-input-file --convert-nvfp4-to-gpu=chip=sm_90a -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN

// The ops of a Mamba-2 mixer that are not plain linalg (ScanKernels.cpp):
// slices and pads as copy kernels, the softplus's log, the causal conv,
// and the selective scan as one kernel.

// A strided slice of columns: a kernel that reads source[r + 1, 2 c + 3].
// CHECK-LABEL: func.func @strided_slice
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: gpu.launch_func @nvfp4_kernels::@[[SLICE:nvfp4_linalg_generic_4x8_[0-9A-F]+]]
// CHECK-SAME: args(%{{.*}} : memref<32xf32>, %{{.*}} : memref<512xf32>)
// CHECK: return
// Strided reads cannot be one vector load: four loads of column 2 c + 3,
// then one 16-byte vector store of the four contiguous results (the
// vectorized elementwise kernel, RowKernels.cpp).
// CHECK: gpu.func @[[SLICE]](
// CHECK: %[[COL:.*]] = arith.muli %{{.*}}, %c2_{{[0-9]+}} : index
// CHECK: arith.addi %[[COL]], %c3 : index
// CHECK-COUNT-4: memref.load %{{.*}} : memref<512xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<32xf32>, vector<4xf32>
func.func @strided_slice(%x: tensor<16x32xf32>) -> tensor<4x8xf32> {
  %s = tensor.extract_slice %x[1, 3] [4, 8] [1, 2] : tensor<16x32xf32> to tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// A rank-reducing slice (one row): the dropped dimension is its offset.
// CHECK-LABEL: func.func @row_slice
// CHECK: gpu.launch_func @nvfp4_kernels::@[[ROW:nvfp4_linalg_generic_32_[0-9A-F]+]]
// CHECK: gpu.func @[[ROW]](
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: memref.load
func.func @row_slice(%x: tensor<16x32xbf16>) -> tensor<32xbf16> {
  %s = tensor.extract_slice %x[5, 0] [1, 32] [1, 1] : tensor<16x32xbf16> to tensor<32xbf16>
  return %s : tensor<32xbf16>
}

// -----

// tensor.pad (the causal conv's three leading zero rows): in-bounds rows
// read the source at row - 3, the others select the padding value; the
// load's index is clamped to 0 outside, so it stays in bounds.
// CHECK-LABEL: func.func @pad_rows
// CHECK: gpu.alloc () : memref<11x4xbf16>
// CHECK: gpu.launch_func @nvfp4_kernels::@[[PAD:nvfp4_linalg_generic_11x4_[0-9A-F]+]]
// CHECK: gpu.func @[[PAD]](
// CHECK: arith.cmpi ult
// CHECK: arith.cmpi uge
// CHECK: arith.subi
// CHECK: arith.select
// CHECK: memref.load
// CHECK: arith.select
// CHECK: vector.store
func.func @pad_rows(%x: tensor<8x4xbf16>) -> tensor<11x4xbf16> {
  %zero = arith.constant 0.0 : bf16
  %p = tensor.pad %x low[3, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : bf16
  } : tensor<8x4xbf16> to tensor<11x4xbf16>
  return %p : tensor<11x4xbf16>
}

// -----

// A padding value computed in the region stays on the host.
// CHECK-LABEL: func.func @pad_by_index
// CHECK: tensor.pad
// CHECK-NOT: gpu.launch_func
func.func @pad_by_index(%x: tensor<8x4xi32>) -> tensor<11x4xi32> {
  %p = tensor.pad %x low[3, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    %v = arith.index_cast %i : index to i32
    tensor.yield %v : i32
  } : tensor<8x4xi32> to tensor<11x4xi32>
  return %p : tensor<11x4xi32>
}

// -----

// softplus(dt + bias): math.log is lg2.approx times ln 2.
// CHECK-LABEL: func.func @softplus
// CHECK: gpu.func @nvfp4_linalg_generic_8x4_
// CHECK: llvm.intr.exp2
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: arith.constant 0.693147182 : f32
// CHECK: arith.mulf
func.func @softplus(%dt: tensor<8x4xbf16>, %bias: tensor<4xf32>) -> tensor<8x4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, h) -> (t, h)>, affine_map<(t, h) -> (h)>,
                                        affine_map<(t, h) -> (t, h)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%dt, %bias : tensor<8x4xbf16>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%v: bf16, %b: f32, %o: f32):
    %vf = arith.extf %v : bf16 to f32
    %s = arith.addf %vf, %b : f32
    %ex = math.exp %s : f32
    %p1 = arith.addf %ex, %one : f32
    %sp = math.log %p1 : f32
    linalg.yield %sp : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// The causal depthwise conv over the padded tokens (map t + w): a
// reduction kernel over w that reads row t + w.
// CHECK-LABEL: func.func @causal_conv
// CHECK: gpu.launch_func @nvfp4_kernels::@[[CONV:nvfp4_linalg_generic_8x16x4_r2_[0-9A-F]+]]
// CHECK: gpu.func @[[CONV]](
// CHECK: scf.for
// CHECK: arith.addi
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: gpu.shuffle xor
func.func @causal_conv(%padded: tensor<11x16xbf16>, %w: tensor<16x4xbf16>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %conv = linalg.generic {indexing_maps = [affine_map<(t, c, w) -> (t + w, c)>, affine_map<(t, c, w) -> (c, w)>,
                                           affine_map<(t, c, w) -> (t, c)>],
                          iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%padded, %w : tensor<11x16xbf16>, tensor<16x4xbf16>) outs(%z : tensor<8x16xf32>) {
  ^bb0(%x: bf16, %wv: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %conv : tensor<8x16xf32>
}

// -----

// The selective scan of gen-model.py's Mamba-2 mixer (4 heads of 2
// channels, 2 groups, 40 state indices, 6 tokens): ONE kernel, a warp per
// (head, channel) = 8 warps, lanes over the 40 state indices (2 registers
// each), the tokens walked in order with the state in registers (iter_args
// of the kernel's loop), y reduced over the state by a butterfly and stored
// by lane 0 into row t. The loop's final state is not read: no buffer.
// CHECK-LABEL: func.func @selective_scan
// CHECK-NOT: scf.for
// CHECK: %[[YS:.*]] = gpu.alloc () : memref<6x8xf32>
// CHECK-NOT: gpu.alloc () : memref<4x2x40xf32>
// CHECK: gpu.launch_func @nvfp4_kernels::@[[SCAN:nvfp4_scan_4x2x40_t6_[0-9A-F]+]] blocks in (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) threads in (%{{[a-z0-9_]+}},
// CHECK-SAME: args(%{{.*}} : memref<48xf32>, %{{.*}} : memref<320xf32>, %{{.*}} : memref<48xf32>, %{{.*}} : memref<480xf32>, %{{.*}} : memref<480xf32>, %{{.*}} : memref<24xf32>, %{{.*}} : memref<4xf32>, %{{.*}} : memref<4xf32>)
// CHECK-NOT: scf.for
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[YS]]
// CHECK: return %[[T]]
// CHECK: gpu.func @[[SCAN]](
// CHECK: %[[WARP:.*]] = arith.divui
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: arith.cmpi ult, %[[WARP]], %[[C8]]
// CHECK: arith.minui
// CHECK: arith.minui
// CHECK: %[[S0:.*]] = memref.load
// CHECK: %[[S1:.*]] = memref.load
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[S0]], %{{.*}} = %[[S1]]) -> (f32, f32)
// CHECK: llvm.intr.exp2
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if
// CHECK: memref.store
// CHECK: scf.yield %{{.*}}, %{{.*}} : f32, f32
func.func @selective_scan(%xs: tensor<6x8xf32>, %bs: tensor<6x80xf32>, %cs: tensor<6x80xf32>,
                          %dts: tensor<6x4xf32>, %a_log: tensor<4xf32>, %d_skip: tensor<4xf32>)
    -> tensor<6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant 6 : index
  %state_init = tensor.empty() : tensor<4x2x40xf32>
  %state0 = linalg.fill ins(%zero : f32) outs(%state_init : tensor<4x2x40xf32>) -> tensor<4x2x40xf32>
  %y_init = tensor.empty() : tensor<6x8xf32>
  %scan:2 = scf.for %ti = %c0 to %cT step %c1 iter_args(%st = %state0, %ys = %y_init)
      -> (tensor<4x2x40xf32>, tensor<6x8xf32>) {
    %x_row = tensor.extract_slice %xs[%ti, 0] [1, 8] [1, 1] : tensor<6x8xf32> to tensor<8xf32>
    %x_t = tensor.expand_shape %x_row [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
    %b_row = tensor.extract_slice %bs[%ti, 0] [1, 80] [1, 1] : tensor<6x80xf32> to tensor<80xf32>
    %b_t = tensor.expand_shape %b_row [[0, 1]] output_shape [2, 40] : tensor<80xf32> into tensor<2x40xf32>
    %c_row = tensor.extract_slice %cs[%ti, 0] [1, 80] [1, 1] : tensor<6x80xf32> to tensor<80xf32>
    %c_t = tensor.expand_shape %c_row [[0, 1]] output_shape [2, 40] : tensor<80xf32> into tensor<2x40xf32>
    %dt_t = tensor.extract_slice %dts[%ti, 0] [1, 4] [1, 1] : tensor<6x4xf32> to tensor<4xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(h, p, n) -> (h)>,
                                             affine_map<(h, p, n) -> (h)>, affine_map<(h, p, n) -> (h, p)>,
                                             affine_map<(h, p, n) -> (h floordiv 2, n)>,
                                             affine_map<(h, p, n) -> (h, p, n)>],
                            iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%dt_t, %a_log, %x_t, %b_t : tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>, tensor<2x40xf32>)
        outs(%st : tensor<4x2x40xf32>) {
    ^bb0(%d: f32, %al: f32, %x: f32, %b: f32, %s: f32):
      %ea = math.exp %al : f32
      %a = arith.negf %ea : f32
      %da = arith.mulf %d, %a : f32
      %decay = math.exp %da : f32
      %kept = arith.mulf %decay, %s : f32
      %dx = arith.mulf %d, %x : f32
      %in = arith.mulf %dx, %b : f32
      %r = arith.addf %kept, %in : f32
      linalg.yield %r : f32
    } -> tensor<4x2x40xf32>
    %skip_init = tensor.empty() : tensor<4x2xf32>
    %skip = linalg.generic {indexing_maps = [affine_map<(h, p) -> (h, p)>, affine_map<(h, p) -> (h)>,
                                             affine_map<(h, p) -> (h, p)>],
                            iterator_types = ["parallel", "parallel"]}
        ins(%x_t, %d_skip : tensor<4x2xf32>, tensor<4xf32>) outs(%skip_init : tensor<4x2xf32>) {
    ^bb0(%x: f32, %dd: f32, %out: f32):
      %r = arith.mulf %x, %dd : f32
      linalg.yield %r : f32
    } -> tensor<4x2xf32>
    %y_t = linalg.generic {indexing_maps = [affine_map<(h, p, n) -> (h, p, n)>,
                                            affine_map<(h, p, n) -> (h floordiv 2, n)>,
                                            affine_map<(h, p, n) -> (h, p)>],
                           iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%next, %c_t : tensor<4x2x40xf32>, tensor<2x40xf32>) outs(%skip : tensor<4x2xf32>) {
    ^bb0(%s: f32, %c: f32, %acc: f32):
      %p = arith.mulf %s, %c : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    } -> tensor<4x2xf32>
    %y_row = tensor.collapse_shape %y_t [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
    %ys_next = tensor.insert_slice %y_row into %ys[%ti, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<6x8xf32>
    scf.yield %next, %ys_next : tensor<4x2x40xf32>, tensor<6x8xf32>
  }
  return %scan#1 : tensor<6x8xf32>
}

// -----

// A final state the program reads is stored once, after the last token, by
// the lanes inside the state (40 of 64).
// CHECK-LABEL: func.func @final_state
// CHECK: %[[STATE:.*]] = gpu.alloc () : memref<4x40xf32>
// CHECK: gpu.launch_func @nvfp4_kernels::@[[SCAN:nvfp4_scan_4x40_t6_[0-9A-F]+]]
// CHECK: bufferization.to_tensor %[[STATE]]
// CHECK: gpu.func @[[SCAN]](
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: memref.store
// CHECK: scf.if
// CHECK: memref.store
func.func @final_state(%xs: tensor<6x40xf32>, %init: tensor<4x40xf32>) -> tensor<4x40xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant 6 : index
  %scan = scf.for %ti = %c0 to %cT step %c1 iter_args(%st = %init) -> (tensor<4x40xf32>) {
    %x_t = tensor.extract_slice %xs[%ti, 0] [1, 40] [1, 1] : tensor<6x40xf32> to tensor<40xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(h, n) -> (n)>, affine_map<(h, n) -> (h, n)>],
                            iterator_types = ["parallel", "parallel"]}
        ins(%x_t : tensor<40xf32>) outs(%st : tensor<4x40xf32>) {
    ^bb0(%x: f32, %s: f32):
      %r = arith.addf %s, %x : f32
      linalg.yield %r : f32
    } -> tensor<4x40xf32>
    scf.yield %next : tensor<4x40xf32>
  }
  return %scan : tensor<4x40xf32>
}

// -----

// Loops that do not fit stay on the host (nvfp4-compile reports them), each
// with a warning that says why: a step of 2, a state read at another point,
// and a state whose reduced dimension would not fit in registers.
// WARN: scan-kernels.mlir:[[@LINE+11]]:11: warning: this loop stays on the host: it is not a scan the GPU lowering takes (not a loop from 0 by 1 to a constant)
// WARN: warning: this loop stays on the host: it is not a scan the GPU lowering takes (a state-space value read other than at its own point)
// WARN: warning: this loop stays on the host: it is not a scan the GPU lowering takes (a reduced dimension larger than 256 (the state would not fit in registers))
// WARN-NOT: warning
// CHECK-LABEL: func.func @step_two
// CHECK: scf.for
// CHECK-NOT: nvfp4_scan
func.func @step_two(%xs: tensor<6x40xf32>, %init: tensor<4x40xf32>) -> tensor<4x40xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cT = arith.constant 6 : index
  %scan = scf.for %ti = %c0 to %cT step %c2 iter_args(%st = %init) -> (tensor<4x40xf32>) {
    %x_t = tensor.extract_slice %xs[%ti, 0] [1, 40] [1, 1] : tensor<6x40xf32> to tensor<40xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(h, n) -> (n)>, affine_map<(h, n) -> (h, n)>],
                            iterator_types = ["parallel", "parallel"]}
        ins(%x_t : tensor<40xf32>) outs(%st : tensor<4x40xf32>) {
    ^bb0(%x: f32, %s: f32):
      %r = arith.addf %s, %x : f32
      linalg.yield %r : f32
    } -> tensor<4x40xf32>
    scf.yield %next : tensor<4x40xf32>
  }
  return %scan : tensor<4x40xf32>
}

// -----

// CHECK-LABEL: func.func @shifted_state
// CHECK: scf.for
// CHECK-NOT: nvfp4_scan
func.func @shifted_state(%init: tensor<4x40xf32>) -> tensor<4x40xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant 6 : index
  %scan = scf.for %ti = %c0 to %cT step %c1 iter_args(%st = %init) -> (tensor<4x40xf32>) {
    %e = tensor.empty() : tensor<4x40xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(h, n) -> (h floordiv 2, n)>, affine_map<(h, n) -> (h, n)>],
                            iterator_types = ["parallel", "parallel"]}
        ins(%st : tensor<4x40xf32>) outs(%e : tensor<4x40xf32>) {
    ^bb0(%s: f32, %o: f32):
      linalg.yield %s : f32
    } -> tensor<4x40xf32>
    scf.yield %next : tensor<4x40xf32>
  }
  return %scan : tensor<4x40xf32>
}

// -----

// CHECK-LABEL: func.func @wide_state
// CHECK: scf.for
// CHECK-NOT: nvfp4_scan
func.func @wide_state(%xs: tensor<6x512xf32>, %init: tensor<4x512xf32>) -> tensor<4x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant 6 : index
  %scan = scf.for %ti = %c0 to %cT step %c1 iter_args(%st = %init) -> (tensor<4x512xf32>) {
    %x_t = tensor.extract_slice %xs[%ti, 0] [1, 512] [1, 1] : tensor<6x512xf32> to tensor<512xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(h, n) -> (n)>, affine_map<(h, n) -> (h, n)>],
                            iterator_types = ["parallel", "parallel"]}
        ins(%x_t : tensor<512xf32>) outs(%st : tensor<4x512xf32>) {
    ^bb0(%x: f32, %s: f32):
      %r = arith.addf %s, %x : f32
      linalg.yield %r : f32
    } -> tensor<4x512xf32>
    scf.yield %next : tensor<4x512xf32>
  }
  return %scan : tensor<4x512xf32>
}
