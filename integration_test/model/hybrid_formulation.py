"""The hybrid's @decoder_block (scripts/gen-model.py hybrid --block-only)
written a second time, op by op, outside MLIR: one more formulation of the
same IR to measure the GPU bundle against, with the same roundings (every
tensor the IR keeps in BF16 rounded to BF16, every FP32 one kept in FP32).

Two backends: numpy (FP32 elementwise math, GEMMs summed in FP64 and
rounded once -- the exactly rounded product) and torch on a GPU (cuBLAS
GEMMs, FP32 accumulation, reduced-precision reductions off: what a PyTorch
user of this model runs). The blocks are read from the argument names
(l<i>_mixer_norm: Mamba-2 mixer, l<i>_ffn_norm: squared-ReLU FFN,
l<i>_attn_norm: causal self-attention); head size and SSM groups from the
case's reference IR (softmax scale, `h floordiv G`).

forward(values, names, ir_text, backend) -> output as a flat FP32 numpy
array; values: the arguments as FP32 numpy arrays (BF16 values).
"""

import math
import re

import numpy as np


class Numpy:
    name = "numpy"
    torch = False

    def __init__(self):
        import stage_check
        self._bf16 = stage_check.bf16

    def tensor(self, x):
        return np.ascontiguousarray(x, np.float32)

    def bf16(self, x):
        return self._bf16(x)

    def matmul(self, a, b):
        """[..., m, k] x [..., n, k] -> [..., m, n] BF16."""
        return self._bf16(np.matmul(a.astype(np.float64),
                                    np.swapaxes(b, -1, -2).astype(np.float64)).astype(np.float32))

    def matmul_nn(self, a, b):
        return self._bf16(np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32))

    exp, log, sqrt, maximum = np.exp, np.log, np.sqrt, np.maximum

    def zeros(self, shape):
        return np.zeros(shape, np.float32)

    def numpy(self, x):
        return np.asarray(x, np.float32)

    def f32(self, v):
        return np.float32(v)


class Torch:
    name = "torch (cuBLAS)"
    torch = True

    def __init__(self):
        import torch
        self.t = torch
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_tf32 = False

    def tensor(self, x):
        return self.t.from_numpy(np.ascontiguousarray(x, np.float32)).cuda()

    def bf16(self, x):
        return x.bfloat16().float()

    def matmul(self, a, b):
        return self.t.matmul(a.bfloat16(), b.bfloat16().transpose(-1, -2)).float()

    def matmul_nn(self, a, b):
        return self.t.matmul(a.bfloat16(), b.bfloat16()).float()

    def exp(self, x):
        return self.t.exp(x)

    def log(self, x):
        return self.t.log(x)

    def sqrt(self, x):
        return self.t.sqrt(x)

    def maximum(self, x, v):
        return self.t.clamp_min(x, float(v))

    def zeros(self, shape):
        return self.t.zeros(shape, dtype=self.t.float32, device="cuda")

    def numpy(self, x):
        return x.cpu().numpy()

    def f32(self, v):
        return float(np.float32(v))


def rms_norm(xp, x, g):
    # sum of squares in FP32, mean = s / n, rsqrt = 1 / sqrt (as the GPU's
    # 1 / sqrt.rn), x * r * g rounded once to BF16.
    n = x.shape[1]
    s = (x * x).sum(1, keepdims=True) if not xp.torch else (x * x).sum(1, keepdim=True)
    r = 1.0 / xp.sqrt(s / xp.f32(n) + xp.f32(1e-5))
    return xp.bf16(x * r * g[None, :])


def silu(xp, v):
    return v / (1.0 + xp.exp(-v))


def mamba(xp, x, p, heads_per_group):
    d_model = x.shape[1]
    d_inner = p["gate_norm"].shape[0]
    heads = p["dt_bias"].shape[0]
    xbc_width = p["conv_w"].shape[0]
    gn = (xbc_width - d_inner) // 2
    groups = heads // heads_per_group
    n = gn // groups
    hd = d_inner // heads
    t = x.shape[0]
    zxbcdt = xp.matmul(rms_norm(xp, x, p["mixer_norm"]), p["w_in"])
    z = zxbcdt[:, :d_inner]
    xbc = zxbcdt[:, d_inner:d_inner + xbc_width]
    dt = zxbcdt[:, d_inner + xbc_width:]
    # causal depthwise conv (FP32, taps in order from 0), then SiLU
    padded = xp.zeros((t + 3, xbc_width))
    padded[3:] = xbc
    conv = xp.zeros((t, xbc_width))
    for w in range(4):
        conv = conv + padded[w:w + t] * p["conv_w"][:, w][None, :]
    act = silu(xp, conv)
    xs, bs, cs = act[:, :d_inner], act[:, d_inner:d_inner + gn], act[:, d_inner + gn:]
    dts = xp.log(xp.exp(dt + p["dt_bias"][None, :]) + 1.0)
    a = -xp.exp(p["a_log"])
    state = xp.zeros((heads, hd, n))
    group = np.arange(heads) // heads_per_group
    ys = []
    for ti in range(t):
        d = dts[ti]
        xt = xs[ti].reshape(heads, hd)
        bt = bs[ti].reshape(groups, n)[group]
        ct = cs[ti].reshape(groups, n)[group]
        decay = xp.exp(d * a)
        state = decay[:, None, None] * state + (d[:, None] * xt)[:, :, None] * bt[:, None, :]
        # y = D x, then + state * C over n in order (the reduction's init first)
        y = xt * p["d_skip"][:, None]
        prod = state * ct[:, None, :]
        if not xp.torch:
            for k in range(n):
                y = y + prod[:, :, k]
        else:
            y = y + prod.sum(-1)  # torch: a tree sum, one more rounding order
        ys.append(y.reshape(-1))
    y = xp.t.stack(ys) if xp.torch else np.stack(ys)
    gated = xp.bf16(y * silu(xp, z))
    normed = rms_norm(xp, gated, p["gate_norm"])
    assert d_model == p["w_out"].shape[0]
    return xp.matmul(normed, p["w_out"])


def ffn(xp, x, p):
    up = xp.matmul(rms_norm(xp, x, p["ffn_norm"]), p["w_up"])
    r = xp.maximum(up, 0.0)
    return xp.matmul(xp.bf16(r * r), p["w_down"])


def attention(xp, x, p, head_dim):
    t, d = x.shape
    xn = rms_norm(xp, x, p["attn_norm"])
    q, k, v = (xp.matmul(xn, p[w]) for w in ("wq", "wk", "wv"))
    heads, kv = q.shape[1] // head_dim, k.shape[1] // head_dim

    def split(m, h):
        m = m.reshape(t, h, head_dim)
        return m.transpose(0, 1) if xp.torch else m.transpose(1, 0, 2)

    qh, kh, vh = split(q, heads), split(k, kv), split(v, kv)
    rep = heads // kv
    index = np.arange(heads) // rep
    kh, vh = kh[index], vh[index]
    scores = xp.matmul(qh, kh)
    scale = xp.f32(1.0 / math.sqrt(head_dim))
    s = scores * scale
    mask = np.tril(np.ones((t, t), bool))
    if xp.torch:
        mask = xp.t.from_numpy(mask).cuda()
        s = s.masked_fill(~mask, float("-inf"))
        mx = s.amax(-1, keepdim=True)
        e = xp.exp(s - mx)
        probs = xp.bf16(e / e.sum(-1, keepdim=True))
    else:
        s = np.where(mask, s, np.float32(-np.inf))
        mx = s.max(-1, keepdims=True)
        e = np.exp(s - mx)
        total = np.zeros_like(mx)
        for j in range(t):  # the reference's loop order
            total = total + e[:, :, j:j + 1]
        probs = xp.bf16(e / total)
    ctx = xp.matmul_nn(probs, vh)
    merged = ctx.transpose(0, 1).reshape(t, d) if xp.torch else \
        ctx.transpose(1, 0, 2).reshape(t, d)
    return xp.matmul(merged, p["wo"])


def forward(values, names, ir_text, xp):
    head_dim = round(1.0 / float(re.search(r"%scale = arith.constant ([0-9.e-]+) : f32",
                                           ir_text).group(1)) ** 2)
    heads_per_group = int(re.search(r"h floordiv (\d+)", ir_text).group(1))
    args = {name: xp.tensor(v) for name, v in zip(names, values)}
    h = args["hidden"]
    layer = 0
    while True:
        prefix = "l%d_" % layer
        p = {k[len(prefix):]: v for k, v in args.items() if k.startswith(prefix)}
        if not p:
            break
        if "mixer_norm" in p:
            branch = mamba(xp, h, p, heads_per_group)
        elif "ffn_norm" in p:
            branch = ffn(xp, h, p)
        else:
            branch = attention(xp, h, p, head_dim)
        h = xp.bf16(h + branch)
        layer += 1
    return xp.numpy(h).reshape(-1)
