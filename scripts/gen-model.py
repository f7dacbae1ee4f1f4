#!/usr/bin/env python3
# ===- scripts/gen-model.py - model IR for the graph-level passes ----------=== #
#
# Writes the forward pass of a transformer-style model as func + linalg on
# tensors, annotated the way ARCHITECTURE.md pins (nvfp4.layer, nvfp4.kind
# on every contraction, {nvfp4.weight} on parameters). Plain python3, no
# numpy. Two architectures:
#
#   llama   N decoder layers: RMSNorm, GQA attention with RoPE (QKV and O
#           projections, QK^T and SV batch matmuls), SwiGLU FFN (gate, up,
#           down). One decoder layer is one block (nvfp4.layer).
#   hybrid  a Nemotron-H-style stack of single-mixer blocks given by a
#           pattern string: 'M' Mamba-2 mixer (in_proj, out_proj around the
#           selective scan), '*' self-attention (GQA, no RoPE), '-' FFN with
#           squared ReLU (up, down). The default is the 62-block pattern of the
#           paper's 12B model: 28 'M', 6 '*', 28 '-'.
#
# Both end with a final RMSNorm and the output head (nvfp4.kind = "head");
# the embedding is a gather, not a GEMM.
#
#   python3 scripts/gen-model.py llama --layers 1 > examples/llama_block.mlir
#   python3 scripts/gen-model.py hybrid > examples/hybrid_12b.mlir
#   python3 scripts/gen-model.py hybrid --pattern 'M-*-M-' --no-layers
#   python3 scripts/gen-model.py hybrid --tiny --pattern 'M-*-' --block-only \
#       > examples/hybrid_tiny_blocks.mlir   (the hybrid's GPU case)
#
# ===-----------------------------------------------------------------------=== #

import argparse
import sys

# The paper's 12B hybrid (arXiv 2509.25149): 62 blocks, 28 Mamba-2, 28 FFN,
# 6 attention; an attention block sits between a Mamba block and its FFN.
HYBRID_12B_PATTERN = (
    "M-M-M-M*-M-M-M-M*-M-M-M-M-M*-M-M-M-M*-M-M-M-M-M*-M-M-M-M*-M-M-"
)


def bf16(*shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xbf16>"


def f32(*shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


class Emitter:
    """Builds one module: helpers (shape-specialized, emitted once) and the
    forward function."""

    def __init__(self, args):
        self.args = args
        self.helpers = {}
        self.body = []
        self.params = []
        self.counter = 0

    # -- SSA names and parameters ----------------------------------------

    def fresh(self, hint):
        self.counter += 1
        return "%%%s%d" % (hint, self.counter)

    def param(self, name, ty, weight=True):
        self.params.append((name, ty, weight))
        return "%" + name

    def emit(self, line):
        self.body.append("  " + line)

    def annotations(self, layer, kind):
        attrs = []
        if layer is not None and not self.args.no_layers:
            attrs.append("nvfp4.layer = %d : i64" % layer)
        if kind is not None and not self.args.no_kinds:
            attrs.append('nvfp4.kind = "%s"' % kind)
        return (" {" + ", ".join(attrs) + "}") if attrs else ""

    def zeros(self, ty):
        empty = self.fresh("empty")
        fill = self.fresh("zero")
        self.emit("%s = tensor.empty() : %s" % (empty, ty))
        self.emit("%s = linalg.fill ins(%%cst0 : bf16) outs(%s : %s) -> %s"
                  % (fill, empty, ty, ty))
        return fill

    # -- GEMMs -------------------------------------------------------------

    def linear(self, x, w, t, k, n, layer, kind, hint):
        """Y[t, n] = X[t, k] W[n, k]^T (PyTorch's nn.Linear layout)."""
        out = bf16(t, n)
        init = self.zeros(out)
        y = self.fresh(hint)
        self.emit("%s = linalg.matmul indexing_maps = [#mk, #nk, #mn]%s "
                  "ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                  % (y, self.annotations(layer, kind), x, w, bf16(t, k),
                     bf16(n, k), init, out, out))
        return y

    def bmm_nt(self, a, b, batch, m, n, k, layer, hint):
        """C[b, m, n] = A[b, m, k] B[b, n, k]^T (QK^T)."""
        out = bf16(batch, m, n)
        init = self.zeros(out)
        c = self.fresh(hint)
        self.emit("%s = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn]%s "
                  "ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                  % (c, self.annotations(layer, "attention"), a, b,
                     bf16(batch, m, k), bf16(batch, n, k), init, out, out))
        return c

    def bmm_nn(self, a, b, batch, m, n, k, layer, hint):
        """C[b, m, n] = A[b, m, k] B[b, k, n] (SV)."""
        out = bf16(batch, m, n)
        init = self.zeros(out)
        c = self.fresh(hint)
        self.emit("%s = linalg.batch_matmul%s ins(%s, %s : %s, %s) "
                  "outs(%s : %s) -> %s"
                  % (c, self.annotations(layer, "attention"), a, b,
                     bf16(batch, m, k), bf16(batch, k, n), init, out, out))
        return c

    # -- calls to helpers ----------------------------------------------------

    def call(self, helper, args, arg_types, result_type, hint):
        result = self.fresh(hint)
        self.emit("%s = func.call @%s(%s) : (%s) -> %s"
                  % (result, helper, ", ".join(args), ", ".join(arg_types),
                     result_type))
        return result

    def add(self, a, b, ty, hint="h"):
        """The residual connection."""
        result = self.fresh(hint)
        self.emit("%s = arith.addf %s, %s : %s" % (result, a, b, ty))
        return result

    def helper(self, name, text):
        if name not in self.helpers:
            self.helpers[name] = text
        return name


# ===----------------------------------------------------------------------=== #
# Helper functions (element-wise and reduction code, no GEMMs)
# ===----------------------------------------------------------------------=== #


def rms_norm(e, t, d):
    name = "rms_norm_%dx%d" % (t, d)
    return e.helper(name, f"""
func.func private @{name}(%x: {bf16(t, d)}, %w: {bf16(d)}) -> {bf16(t, d)} {{
  %zero = arith.constant 0.0 : f32
  %sum_init = tensor.empty() : {f32(t)}
  %sum_zero = linalg.fill ins(%zero : f32) outs(%sum_init : {f32(t)}) -> {f32(t)}
  %sum = linalg.generic {{indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>],
                         iterator_types = ["parallel", "reduction"]}}
      ins(%x : {bf16(t, d)}) outs(%sum_zero : {f32(t)}) {{
  ^bb0(%in: bf16, %acc: f32):
    %v = arith.extf %in : bf16 to f32
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }} -> {f32(t)}
  %init = tensor.empty() : {bf16(t, d)}
  %y = linalg.generic {{indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t)>,
                                        affine_map<(t, c) -> (c)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%x, %sum, %w : {bf16(t, d)}, {f32(t)}, {bf16(d)}) outs(%init : {bf16(t, d)}) {{
  ^bb0(%in: bf16, %s: f32, %g: bf16, %out: bf16):
    %n = arith.constant {float(d)} : f32
    %eps = arith.constant 1.0e-05 : f32
    %mean = arith.divf %s, %n : f32
    %var = arith.addf %mean, %eps : f32
    %r = math.rsqrt %var : f32
    %v = arith.extf %in : bf16 to f32
    %gv = arith.extf %g : bf16 to f32
    %a = arith.mulf %v, %r : f32
    %b = arith.mulf %a, %gv : f32
    %o = arith.truncf %b : f32 to bf16
    linalg.yield %o : bf16
  }} -> {bf16(t, d)}
  return %y : {bf16(t, d)}
}}""")


def embed(e, t, vocab, d):
    name = "embed_%dx%d" % (t, d)
    return e.helper(name, f"""
func.func private @{name}(%tokens: tensor<{t}xi64>, %table: {bf16(vocab, d)}) -> {bf16(t, d)} {{
  %init = tensor.empty() : {bf16(t, d)}
  %y = linalg.generic {{indexing_maps = [affine_map<(t, c) -> (t)>, affine_map<(t, c) -> (t, c)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%tokens : tensor<{t}xi64>) outs(%init : {bf16(t, d)}) {{
  ^bb0(%token: i64, %out: bf16):
    %c = linalg.index 1 : index
    %row = arith.index_cast %token : i64 to index
    %v = tensor.extract %table[%row, %c] : {bf16(vocab, d)}
    linalg.yield %v : bf16
  }} -> {bf16(t, d)}
  return %y : {bf16(t, d)}
}}""")


def split_heads(e, t, heads, hd):
    name = "split_heads_%dx%dx%d" % (t, heads, hd)
    return e.helper(name, f"""
func.func private @{name}(%x: {bf16(t, heads * hd)}) -> {bf16(heads, t, hd)} {{
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [{t}, {heads}, {hd}]
      : {bf16(t, heads * hd)} into {bf16(t, heads, hd)}
  %init = tensor.empty() : {bf16(heads, t, hd)}
  %y = linalg.transpose ins(%e : {bf16(t, heads, hd)}) outs(%init : {bf16(heads, t, hd)})
      permutation = [1, 0, 2]
  return %y : {bf16(heads, t, hd)}
}}""")


def repeat_kv(e, kv, groups, t, hd):
    name = "repeat_kv_%dx%dx%dx%d" % (kv, groups, t, hd)
    return e.helper(name, f"""
func.func private @{name}(%x: {bf16(kv, t, hd)}) -> {bf16(kv * groups, t, hd)} {{
  %init = tensor.empty() : {bf16(kv, groups, t, hd)}
  %b = linalg.broadcast ins(%x : {bf16(kv, t, hd)}) outs(%init : {bf16(kv, groups, t, hd)})
      dimensions = [1]
  %y = tensor.collapse_shape %b [[0, 1], [2], [3]]
      : {bf16(kv, groups, t, hd)} into {bf16(kv * groups, t, hd)}
  return %y : {bf16(kv * groups, t, hd)}
}}""")


def merge_heads(e, heads, t, hd):
    name = "merge_heads_%dx%dx%d" % (heads, t, hd)
    return e.helper(name, f"""
func.func private @{name}(%x: {bf16(heads, t, hd)}) -> {bf16(t, heads * hd)} {{
  %init = tensor.empty() : {bf16(t, heads, hd)}
  %tr = linalg.transpose ins(%x : {bf16(heads, t, hd)}) outs(%init : {bf16(t, heads, hd)})
      permutation = [1, 0, 2]
  %y = tensor.collapse_shape %tr [[0], [1, 2]] : {bf16(t, heads, hd)} into {bf16(t, heads * hd)}
  return %y : {bf16(t, heads * hd)}
}}""")


def rope(e, heads, t, hd):
    name = "rope_%dx%dx%d" % (heads, t, hd)
    half = hd // 2
    return e.helper(name, f"""
// x * cos + rotate_half(x) * sin, rotate_half(x) = concat(-x[hd/2:], x[:hd/2]).
func.func private @{name}(%x: {bf16(heads, t, hd)}, %cos: {bf16(t, hd)}, %sin: {bf16(t, hd)})
    -> {bf16(heads, t, hd)} {{
  %init = tensor.empty() : {bf16(heads, t, hd)}
  %y = linalg.generic {{indexing_maps = [affine_map<(h, t, j) -> (h, t, j)>, affine_map<(h, t, j) -> (t, j)>,
                                        affine_map<(h, t, j) -> (t, j)>, affine_map<(h, t, j) -> (h, t, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%x, %cos, %sin : {bf16(heads, t, hd)}, {bf16(t, hd)}, {bf16(t, hd)})
      outs(%init : {bf16(heads, t, hd)}) {{
  ^bb0(%v: bf16, %c: bf16, %s: bf16, %out: bf16):
    %h = linalg.index 0 : index
    %ti = linalg.index 1 : index
    %j = linalg.index 2 : index
    %half = arith.constant {half} : index
    %low = arith.cmpi ult, %j, %half : index
    %up = arith.addi %j, %half : index
    %down = arith.subi %j, %half : index
    %pj = arith.select %low, %up, %down : index
    %p = tensor.extract %x[%h, %ti, %pj] : {bf16(heads, t, hd)}
    %pf = arith.extf %p : bf16 to f32
    %neg = arith.negf %pf : f32
    %rot = arith.select %low, %neg, %pf : f32
    %vf = arith.extf %v : bf16 to f32
    %cf = arith.extf %c : bf16 to f32
    %sf = arith.extf %s : bf16 to f32
    %a = arith.mulf %vf, %cf : f32
    %b = arith.mulf %rot, %sf : f32
    %r = arith.addf %a, %b : f32
    %o = arith.truncf %r : f32 to bf16
    linalg.yield %o : bf16
  }} -> {bf16(heads, t, hd)}
  return %y : {bf16(heads, t, hd)}
}}""")


def causal_softmax(e, heads, t, hd):
    name = "causal_softmax_%dx%d" % (heads, t)
    scale = 1.0 / (hd ** 0.5)
    s3 = bf16(heads, t, t)
    s2 = f32(heads, t)
    maps2 = "[affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>]"
    maps3 = ("[affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>, "
             "affine_map<(h, i, j) -> (h, i)>, affine_map<(h, i, j) -> (h, i, j)>]")
    masked = """    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %visible = arith.cmpi ule, %j, %i : index
    %v = arith.extf %in : bf16 to f32
    %scaled = arith.mulf %v, %scale : f32
    %x = arith.select %visible, %scaled, %ninf : f32"""
    return e.helper(name, f"""
// softmax(scale * S) over keys j <= query i, in FP32.
func.func private @{name}(%s: {s3}) -> {s3} {{
  %scale = arith.constant {scale!r} : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max_init = tensor.empty() : {s2}
  %max_fill = linalg.fill ins(%ninf : f32) outs(%max_init : {s2}) -> {s2}
  %max = linalg.generic {{indexing_maps = {maps2},
                         iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%s : {s3}) outs(%max_fill : {s2}) {{
  ^bb0(%in: bf16, %acc: f32):
{masked}
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  }} -> {s2}
  %sum_fill = linalg.fill ins(%zero : f32) outs(%max_init : {s2}) -> {s2}
  %sum = linalg.generic {{indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>,
                                          affine_map<(h, i, j) -> (h, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%s, %max : {s3}, {s2}) outs(%sum_fill : {s2}) {{
  ^bb0(%in: bf16, %mx: f32, %acc: f32):
{masked}
    %d = arith.subf %x, %mx : f32
    %p = math.exp %d : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }} -> {s2}
  %init = tensor.empty() : {s3}
  %y = linalg.generic {{indexing_maps = {maps3},
                       iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%s, %max, %sum : {s3}, {s2}, {s2}) outs(%init : {s3}) {{
  ^bb0(%in: bf16, %mx: f32, %total: f32, %out: bf16):
{masked}
    %d = arith.subf %x, %mx : f32
    %p = math.exp %d : f32
    %q = arith.divf %p, %total : f32
    %o = arith.truncf %q : f32 to bf16
    linalg.yield %o : bf16
  }} -> {s3}
  return %y : {s3}
}}""")


def elementwise(e, name, t, n, nargs, body):
    """An element-wise bf16 helper over [t, n] with `nargs` inputs; `body`
    computes %r (f32) from %a0, %a1, ... (f32)."""
    ins = ", ".join("%%x%d" % i for i in range(nargs))
    types = ", ".join([bf16(t, n)] * nargs)
    block_args = ", ".join("%%v%d: bf16" % i for i in range(nargs))
    maps = ", ".join(["affine_map<(t, c) -> (t, c)>"] * (nargs + 1))
    exts = "\n".join("    %%a%d = arith.extf %%v%d : bf16 to f32" % (i, i)
                     for i in range(nargs))
    sig = ", ".join("%%x%d: %s" % (i, bf16(t, n)) for i in range(nargs))
    return e.helper(name, f"""
func.func private @{name}({sig}) -> {bf16(t, n)} {{
  %init = tensor.empty() : {bf16(t, n)}
  %y = linalg.generic {{indexing_maps = [{maps}],
                       iterator_types = ["parallel", "parallel"]}}
      ins({ins} : {types}) outs(%init : {bf16(t, n)}) {{
  ^bb0({block_args}, %out: bf16):
{exts}
{body}
    %o = arith.truncf %r : f32 to bf16
    linalg.yield %o : bf16
  }} -> {bf16(t, n)}
  return %y : {bf16(t, n)}
}}""")


SILU_MUL = """    %one = arith.constant 1.0 : f32
    %neg = arith.negf %a0 : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %silu = arith.divf %a0, %den : f32
    %r = arith.mulf %silu, %a1 : f32"""

RELU2 = """    %zero = arith.constant 0.0 : f32
    %relu = arith.maximumf %a0, %zero : f32
    %r = arith.mulf %relu, %relu : f32"""


def mamba2_mixer(e, t, cfg):
    """The Mamba-2 mixer between in_proj and out_proj: causal depthwise
    conv1d + SiLU, the selective state-space scan (one state per head,
    channel and state index, updated token by token), the D skip, the SiLU
    gate and the gated RMSNorm."""
    di, nh, hp, ns, ng, kc = (cfg["d_inner"], cfg["heads"], cfg["head_dim"],
                              cfg["state"], cfg["groups"], cfg["conv"])
    conv_dim = di + 2 * ng * ns
    proj = 2 * di + 2 * ng * ns + nh
    hpg = nh // ng
    norm = rms_norm(e, t, di)
    name = "mamba2_mixer_%dx%d" % (t, proj)
    state = f32(nh, hp, ns)
    return e.helper(name, f"""
// Mamba-2 mixer: zxbcdt = [z | x B C | dt] from in_proj; returns the gated,
// normalized scan output that out_proj reads.
func.func private @{name}(%zxbcdt: {bf16(t, proj)}, %conv_w: {bf16(conv_dim, kc)},
    %dt_bias: {f32(nh)}, %a_log: {f32(nh)}, %d_skip: {f32(nh)}, %norm_w: {bf16(di)})
    -> {bf16(t, di)} {{
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant {t} : index
  %z = tensor.extract_slice %zxbcdt[0, 0] [{t}, {di}] [1, 1] : {bf16(t, proj)} to {bf16(t, di)}
  %xbc = tensor.extract_slice %zxbcdt[0, {di}] [{t}, {conv_dim}] [1, 1] : {bf16(t, proj)} to {bf16(t, conv_dim)}
  %dt = tensor.extract_slice %zxbcdt[0, {di + conv_dim}] [{t}, {nh}] [1, 1] : {bf16(t, proj)} to {bf16(t, nh)}

  // Causal depthwise convolution over tokens, then SiLU.
  %padded = tensor.pad %xbc low[{kc - 1}, 0] high[0, 0] {{
  ^bb0(%i: index, %j: index):
    tensor.yield %zero_bf16 : bf16
  }} : {bf16(t, conv_dim)} to {bf16(t + kc - 1, conv_dim)}
  %conv_init = tensor.empty() : {f32(t, conv_dim)}
  %conv_zero = linalg.fill ins(%zero : f32) outs(%conv_init : {f32(t, conv_dim)}) -> {f32(t, conv_dim)}
  %conv = linalg.generic {{indexing_maps = [affine_map<(t, c, w) -> (t + w, c)>, affine_map<(t, c, w) -> (c, w)>,
                                           affine_map<(t, c, w) -> (t, c)>],
                          iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%padded, %conv_w : {bf16(t + kc - 1, conv_dim)}, {bf16(conv_dim, kc)}) outs(%conv_zero : {f32(t, conv_dim)}) {{
  ^bb0(%x: bf16, %w: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> {f32(t, conv_dim)}
  %act = linalg.generic {{indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t, c)>],
                         iterator_types = ["parallel", "parallel"]}}
      ins(%conv : {f32(t, conv_dim)}) outs(%conv_init : {f32(t, conv_dim)}) {{
  ^bb0(%v: f32, %out: f32):
    %neg = arith.negf %v : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %silu = arith.divf %v, %den : f32
    linalg.yield %silu : f32
  }} -> {f32(t, conv_dim)}
  %xs = tensor.extract_slice %act[0, 0] [{t}, {di}] [1, 1] : {f32(t, conv_dim)} to {f32(t, di)}
  %bs = tensor.extract_slice %act[0, {di}] [{t}, {ng * ns}] [1, 1] : {f32(t, conv_dim)} to {f32(t, ng * ns)}
  %cs = tensor.extract_slice %act[0, {di + ng * ns}] [{t}, {ng * ns}] [1, 1] : {f32(t, conv_dim)} to {f32(t, ng * ns)}

  // dt = softplus(dt + dt_bias); per-head decay rate A = -exp(a_log).
  %dt_init = tensor.empty() : {f32(t, nh)}
  %dts = linalg.generic {{indexing_maps = [affine_map<(t, h) -> (t, h)>, affine_map<(t, h) -> (h)>,
                                          affine_map<(t, h) -> (t, h)>],
                         iterator_types = ["parallel", "parallel"]}}
      ins(%dt, %dt_bias : {bf16(t, nh)}, {f32(nh)}) outs(%dt_init : {f32(t, nh)}) {{
  ^bb0(%v: bf16, %b: f32, %out: f32):
    %vf = arith.extf %v : bf16 to f32
    %s = arith.addf %vf, %b : f32
    %ex = math.exp %s : f32
    %p1 = arith.addf %ex, %one : f32
    %sp = math.log %p1 : f32
    linalg.yield %sp : f32
  }} -> {f32(t, nh)}

  // The selective scan, token by token:
  //   state[h, p, n] = exp(dt[h] A[h]) state[h, p, n] + dt[h] x[h, p] B[g(h), n]
  //   y[h, p]        = sum_n C[g(h), n] state[h, p, n] + D[h] x[h, p]
  %state_init = tensor.empty() : {state}
  %state0 = linalg.fill ins(%zero : f32) outs(%state_init : {state}) -> {state}
  %y_init = tensor.empty() : {f32(t, di)}
  %scan:2 = scf.for %ti = %c0 to %cT step %c1 iter_args(%st = %state0, %ys = %y_init)
      -> ({state}, {f32(t, di)}) {{
    %x_row = tensor.extract_slice %xs[%ti, 0] [1, {di}] [1, 1] : {f32(t, di)} to {f32(di)}
    %x_t = tensor.expand_shape %x_row [[0, 1]] output_shape [{nh}, {hp}] : {f32(di)} into {f32(nh, hp)}
    %b_row = tensor.extract_slice %bs[%ti, 0] [1, {ng * ns}] [1, 1] : {f32(t, ng * ns)} to {f32(ng * ns)}
    %b_t = tensor.expand_shape %b_row [[0, 1]] output_shape [{ng}, {ns}] : {f32(ng * ns)} into {f32(ng, ns)}
    %c_row = tensor.extract_slice %cs[%ti, 0] [1, {ng * ns}] [1, 1] : {f32(t, ng * ns)} to {f32(ng * ns)}
    %c_t = tensor.expand_shape %c_row [[0, 1]] output_shape [{ng}, {ns}] : {f32(ng * ns)} into {f32(ng, ns)}
    %dt_t = tensor.extract_slice %dts[%ti, 0] [1, {nh}] [1, 1] : {f32(t, nh)} to {f32(nh)}
    %next = linalg.generic {{indexing_maps = [affine_map<(h, p, n) -> (h)>,
                                             affine_map<(h, p, n) -> (h)>, affine_map<(h, p, n) -> (h, p)>,
                                             affine_map<(h, p, n) -> (h floordiv {hpg}, n)>,
                                             affine_map<(h, p, n) -> (h, p, n)>],
                            iterator_types = ["parallel", "parallel", "parallel"]}}
        ins(%dt_t, %a_log, %x_t, %b_t : {f32(nh)}, {f32(nh)}, {f32(nh, hp)}, {f32(ng, ns)})
        outs(%st : {state}) {{
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
    }} -> {state}
    %skip_init = tensor.empty() : {f32(nh, hp)}
    %skip = linalg.generic {{indexing_maps = [affine_map<(h, p) -> (h, p)>, affine_map<(h, p) -> (h)>,
                                             affine_map<(h, p) -> (h, p)>],
                            iterator_types = ["parallel", "parallel"]}}
        ins(%x_t, %d_skip : {f32(nh, hp)}, {f32(nh)}) outs(%skip_init : {f32(nh, hp)}) {{
    ^bb0(%x: f32, %dd: f32, %out: f32):
      %r = arith.mulf %x, %dd : f32
      linalg.yield %r : f32
    }} -> {f32(nh, hp)}
    %y_t = linalg.generic {{indexing_maps = [affine_map<(h, p, n) -> (h, p, n)>,
                                            affine_map<(h, p, n) -> (h floordiv {hpg}, n)>,
                                            affine_map<(h, p, n) -> (h, p)>],
                           iterator_types = ["parallel", "parallel", "reduction"]}}
        ins(%next, %c_t : {state}, {f32(ng, ns)}) outs(%skip : {f32(nh, hp)}) {{
    ^bb0(%s: f32, %c: f32, %acc: f32):
      %p = arith.mulf %s, %c : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    }} -> {f32(nh, hp)}
    %y_row = tensor.collapse_shape %y_t [[0, 1]] : {f32(nh, hp)} into {f32(di)}
    %ys_next = tensor.insert_slice %y_row into %ys[%ti, 0] [1, {di}] [1, 1] : {f32(di)} into {f32(t, di)}
    scf.yield %next, %ys_next : {state}, {f32(t, di)}
  }}

  // y * silu(z), then the gated RMSNorm.
  %gated_init = tensor.empty() : {bf16(t, di)}
  %gated = linalg.generic {{indexing_maps = [affine_map<(t, c) -> (t, c)>, affine_map<(t, c) -> (t, c)>,
                                            affine_map<(t, c) -> (t, c)>],
                           iterator_types = ["parallel", "parallel"]}}
      ins(%scan#1, %z : {f32(t, di)}, {bf16(t, di)}) outs(%gated_init : {bf16(t, di)}) {{
  ^bb0(%y: f32, %zv: bf16, %out: bf16):
    %zf = arith.extf %zv : bf16 to f32
    %neg = arith.negf %zf : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %silu = arith.divf %zf, %den : f32
    %g = arith.mulf %y, %silu : f32
    %o = arith.truncf %g : f32 to bf16
    linalg.yield %o : bf16
  }} -> {bf16(t, di)}
  %normed = func.call @{norm}(%gated, %norm_w) : ({bf16(t, di)}, {bf16(di)}) -> {bf16(t, di)}
  return %normed : {bf16(t, di)}
}}""")


# ===----------------------------------------------------------------------=== #
# Blocks
# ===----------------------------------------------------------------------=== #


def attention_block(e, h, layer, cfg, t, rope_tables=None):
    """Self-attention with grouped-query heads; returns the residual sum."""
    d, nh, nkv, hd = cfg["d"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    p = "l%d_" % layer
    norm_w = e.param(p + "attn_norm", bf16(d))
    wq = e.param(p + "wq", bf16(nh * hd, d))
    wk = e.param(p + "wk", bf16(nkv * hd, d))
    wv = e.param(p + "wv", bf16(nkv * hd, d))
    wo = e.param(p + "wo", bf16(d, nh * hd))
    e.emit("// Block %d: self-attention." % layer)
    x = e.call(rms_norm(e, t, d), [h, norm_w], [bf16(t, d), bf16(d)],
               bf16(t, d), "xn")
    q = e.linear(x, wq, t, d, nh * hd, layer, "attention", "q")
    k = e.linear(x, wk, t, d, nkv * hd, layer, "attention", "k")
    v = e.linear(x, wv, t, d, nkv * hd, layer, "attention", "v")
    qh = e.call(split_heads(e, t, nh, hd), [q], [bf16(t, nh * hd)],
                bf16(nh, t, hd), "qh")
    kh = e.call(split_heads(e, t, nkv, hd), [k], [bf16(t, nkv * hd)],
                bf16(nkv, t, hd), "kh")
    vh = e.call(split_heads(e, t, nkv, hd), [v], [bf16(t, nkv * hd)],
                bf16(nkv, t, hd), "vh")
    if rope_tables:
        cos, sin = rope_tables
        qh = e.call(rope(e, nh, t, hd), [qh, cos, sin],
                    [bf16(nh, t, hd), bf16(t, hd), bf16(t, hd)],
                    bf16(nh, t, hd), "qr")
        kh = e.call(rope(e, nkv, t, hd), [kh, cos, sin],
                    [bf16(nkv, t, hd), bf16(t, hd), bf16(t, hd)],
                    bf16(nkv, t, hd), "kr")
    groups = nh // nkv
    kr = e.call(repeat_kv(e, nkv, groups, t, hd), [kh], [bf16(nkv, t, hd)],
                bf16(nh, t, hd), "kg")
    vr = e.call(repeat_kv(e, nkv, groups, t, hd), [vh], [bf16(nkv, t, hd)],
                bf16(nh, t, hd), "vg")
    s = e.bmm_nt(qh, kr, nh, t, t, hd, layer, "scores")
    pr = e.call(causal_softmax(e, nh, t, hd), [s], [bf16(nh, t, t)],
                bf16(nh, t, t), "probs")
    o = e.bmm_nn(pr, vr, nh, t, hd, t, layer, "ctx")
    om = e.call(merge_heads(e, nh, t, hd), [o], [bf16(nh, t, hd)],
                bf16(t, nh * hd), "ctxm")
    out = e.linear(om, wo, t, nh * hd, d, layer, "attention", "attn")
    return e.add(h, out, bf16(t, d))


def swiglu_block(e, h, layer, cfg, t):
    d, f = cfg["d"], cfg["ffn"]
    p = "l%d_" % layer
    norm_w = e.param(p + "ffn_norm", bf16(d))
    w_gate = e.param(p + "w_gate", bf16(f, d))
    w_up = e.param(p + "w_up", bf16(f, d))
    w_down = e.param(p + "w_down", bf16(d, f))
    e.emit("// Block %d: SwiGLU FFN." % layer)
    x = e.call(rms_norm(e, t, d), [h, norm_w], [bf16(t, d), bf16(d)],
               bf16(t, d), "xn")
    g = e.linear(x, w_gate, t, d, f, layer, "ffn", "gate")
    u = e.linear(x, w_up, t, d, f, layer, "ffn", "up")
    a = e.call(elementwise(e, "silu_mul_%dx%d" % (t, f), t, f, 2, SILU_MUL),
               [g, u], [bf16(t, f), bf16(t, f)], bf16(t, f), "act")
    out = e.linear(a, w_down, t, f, d, layer, "ffn", "down")
    return e.add(h, out, bf16(t, d))


def relu2_block(e, h, layer, cfg, t):
    d, f = cfg["d"], cfg["ffn"]
    p = "l%d_" % layer
    norm_w = e.param(p + "ffn_norm", bf16(d))
    w_up = e.param(p + "w_up", bf16(f, d))
    w_down = e.param(p + "w_down", bf16(d, f))
    e.emit("// Block %d: FFN (squared ReLU)." % layer)
    x = e.call(rms_norm(e, t, d), [h, norm_w], [bf16(t, d), bf16(d)],
               bf16(t, d), "xn")
    u = e.linear(x, w_up, t, d, f, layer, "ffn", "up")
    a = e.call(elementwise(e, "relu2_%dx%d" % (t, f), t, f, 1, RELU2),
               [u], [bf16(t, f)], bf16(t, f), "act")
    out = e.linear(a, w_down, t, f, d, layer, "ffn", "down")
    return e.add(h, out, bf16(t, d))


def mamba_block(e, h, layer, cfg, t):
    d, m = cfg["d"], cfg["mamba"]
    di, nh, ns, ng, kc = m["d_inner"], m["heads"], m["state"], m["groups"], m["conv"]
    conv_dim = di + 2 * ng * ns
    proj = 2 * di + 2 * ng * ns + nh
    p = "l%d_" % layer
    norm_w = e.param(p + "mixer_norm", bf16(d))
    w_in = e.param(p + "w_in", bf16(proj, d))
    conv_w = e.param(p + "conv_w", bf16(conv_dim, kc))
    dt_bias = e.param(p + "dt_bias", f32(nh))
    a_log = e.param(p + "a_log", f32(nh))
    d_skip = e.param(p + "d_skip", f32(nh))
    gate_norm = e.param(p + "gate_norm", bf16(di))
    w_out = e.param(p + "w_out", bf16(d, di))
    e.emit("// Block %d: Mamba-2 mixer." % layer)
    x = e.call(rms_norm(e, t, d), [h, norm_w], [bf16(t, d), bf16(d)],
               bf16(t, d), "xn")
    zx = e.linear(x, w_in, t, d, proj, layer, "mamba", "zxbcdt")
    y = e.call(mamba2_mixer(e, t, m),
               [zx, conv_w, dt_bias, a_log, d_skip, gate_norm],
               [bf16(t, proj), bf16(conv_dim, kc), f32(nh), f32(nh), f32(nh),
                bf16(di)], bf16(t, di), "scan")
    out = e.linear(y, w_out, t, di, d, layer, "mamba", "mixer")
    return e.add(h, out, bf16(t, d))


# ===----------------------------------------------------------------------=== #
# Models
# ===----------------------------------------------------------------------=== #

LLAMA3_8B = dict(d=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336,
                 vocab=128256)
HYBRID_12B = dict(d=5120, heads=40, kv_heads=8, head_dim=128, ffn=20480,
                  vocab=131072,
                  mamba=dict(d_inner=10240, heads=128, head_dim=80, state=128,
                             groups=8, conv=4))
# The hybrid's block structure at small sizes (--tiny): every op kind of the
# 12B model, weights of a few hundred KiB, for cases that carry their inputs.
HYBRID_TINY = dict(d=256, heads=4, kv_heads=2, head_dim=64, ffn=512,
                   vocab=1024,
                   mamba=dict(d_inner=512, heads=8, head_dim=64, state=64,
                              groups=2, conv=4))


def build(args):
    e = Emitter(args)
    t = args.tokens
    cfg = dict(LLAMA3_8B if args.arch == "llama" else
               HYBRID_TINY if args.tiny else HYBRID_12B)
    d, vocab = cfg["d"], cfg["vocab"]
    if args.block_only:
        h = e.param("hidden", bf16(t, d), weight=False)
    else:
        tokens = e.param("tokens", "tensor<%dxi64>" % t, weight=False)
        table = e.param("embedding", bf16(vocab, d))
    rope_tables = None
    if args.arch == "llama":
        rope_tables = (e.param("rope_cos", bf16(t, cfg["head_dim"]), weight=False),
                       e.param("rope_sin", bf16(t, cfg["head_dim"]), weight=False))
    e.emit("%cst0 = arith.constant 0.0 : bf16")
    if not args.block_only:
        h = e.call(embed(e, t, vocab, d), [tokens, table],
                   ["tensor<%dxi64>" % t, bf16(vocab, d)], bf16(t, d), "h")

    if args.arch == "llama":
        for layer in range(args.layers):
            h = attention_block(e, h, layer, cfg, t, rope_tables)
            h = swiglu_block(e, h, layer, cfg, t)
        description = "%d Llama-3-8B-shaped decoder layer%s" % (
            args.layers, "" if args.layers == 1 else "s")
    else:
        pattern = args.pattern
        for layer, mixer in enumerate(pattern):
            if mixer == "M":
                h = mamba_block(e, h, layer, cfg, t)
            elif mixer == "*":
                h = attention_block(e, h, layer, cfg, t)
            elif mixer == "-":
                h = relu2_block(e, h, layer, cfg, t)
            else:
                sys.exit("gen-model.py: unknown block '%s' in the pattern "
                         "(expected M, * or -)" % mixer)
        description = ("%d-block hybrid (%d Mamba-2, %d attention, %d FFN), "
                       "pattern %s" % (len(pattern), pattern.count("M"),
                                       pattern.count("*"), pattern.count("-"),
                                       pattern))

    if args.block_only:
        result, result_type, function = h, bf16(t, d), "decoder_block"
    else:
        final_norm = e.param("final_norm", bf16(d))
        head = e.param("head", bf16(vocab, d))
        e.emit("// Output head.")
        x = e.call(rms_norm(e, t, d), [h, final_norm], [bf16(t, d), bf16(d)],
                   bf16(t, d), "xn")
        result = e.linear(x, head, t, d, vocab, None, "head", "logits")
        result_type, function = bf16(t, vocab), "forward"
    e.emit("return %s : %s" % (result, result_type))

    out = []
    out.append("// Generated by scripts/gen-model.py %s; do not edit." %
               " ".join(sys.argv[1:]))
    if args.block_only and args.arch == "llama":
        out.append("// Forward pass of one Llama-3-8B-shaped decoder block "
                   "(hidden state in, hidden state out) on %d tokens, batch 1."
                   % t)
    elif args.block_only:
        out.append("// Forward pass of the blocks of a %s%s (hidden state in, "
                   "hidden state out) on %d tokens, batch 1."
                   % (description, ", tiny sizes" if args.tiny else "", t))
    else:
        out.append("// Forward pass of a %s on %d tokens, batch 1." %
                   (description, t))
    out.append("// d = %d; every GEMM carries nvfp4.layer (its block) and "
               "nvfp4.kind, parameters carry {nvfp4.weight}." % d)
    out.append("")
    out.append("#mk = affine_map<(m, n, k) -> (m, k)>")
    out.append("#nk = affine_map<(m, n, k) -> (n, k)>")
    out.append("#mn = affine_map<(m, n, k) -> (m, n)>")
    out.append("#bmk = affine_map<(b, m, n, k) -> (b, m, k)>")
    out.append("#bnk = affine_map<(b, m, n, k) -> (b, n, k)>")
    out.append("#bmn = affine_map<(b, m, n, k) -> (b, m, n)>")
    out.append("")
    out.append("module {")
    for text in e.helpers.values():
        out.extend("  " + line if line else line
                   for line in text.strip("\n").split("\n"))
        out.append("")
    params = []
    for name, ty, weight in e.params:
        params.append("    %%%s: %s%s" % (name, ty,
                                          " {nvfp4.weight}" if weight else ""))
    out.append("  func.func @%s(\n" % function + ",\n".join(params) +
               ") -> %s {" % result_type)
    out.extend("  " + line for line in e.body)
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(
        description="Write annotated model IR (func + linalg) for nvfp4.")
    parser.add_argument("arch", choices=["llama", "hybrid"])
    parser.add_argument("--layers", type=int, default=1,
                        help="decoder layers (llama)")
    parser.add_argument("--pattern", default=HYBRID_12B_PATTERN,
                        help="block pattern (hybrid): M, * or - per block")
    parser.add_argument("--tokens", type=int, default=128,
                        help="sequence length (batch 1)")
    parser.add_argument("--block-only", action="store_true",
                        help="llama: one decoder block, hybrid: the pattern's "
                             "blocks, without embedding and head (function "
                             "@decoder_block)")
    parser.add_argument("--tiny", action="store_true",
                        help="hybrid: small sizes (d = 256) of the same block "
                             "structure")
    parser.add_argument("--no-layers", action="store_true",
                        help="omit nvfp4.layer (blocks are then inferred)")
    parser.add_argument("--no-kinds", action="store_true",
                        help="omit nvfp4.kind")
    args = parser.parse_args()
    if args.block_only and args.arch == "llama" and args.layers != 1:
        sys.exit("gen-model.py: --block-only is for 'llama --layers 1' or "
                 "'hybrid'")
    if args.tiny and args.arch != "hybrid":
        sys.exit("gen-model.py: --tiny is for 'hybrid'")
    if args.layers < 1 or args.tokens < 1 or not args.pattern:
        sys.exit("gen-model.py: --layers, --tokens and --pattern must be "
                 "positive / non-empty")
    sys.stdout.write(build(args))


if __name__ == "__main__":
    main()
