"""The decoder block of scripts/gen-model.py (llama --block-only) in PyTorch.

The same computation as the IR's @decoder_block, op for op and in the same
precisions, written from the IR's semantics (not from a PyTorch model), so
that bench/run_model_bench.py compares nvfp4's bundles with PyTorch eager
and torch.compile on one computation:

  RMSNorm   sum of x^2 in FP32, r = rsqrt(sum / d + 1e-5), (x r) g in FP32,
            rounded to BF16
  Q, K, V   BF16 GEMMs x W^T (nn.Linear's layout), FP32 accumulation,
            rounded to BF16
  heads     [t, h * 128] -> [h, t, 128]; RoPE x cos + rotate_half(x) sin in
            FP32 (rotate_half(x) = concat(-x[64:], x[:64])), rounded to BF16
  GQA       each of the 8 K/V heads repeated for its 4 query heads
  scores    S = Q K^T per head, BF16; the causal softmax of S / sqrt(128)
            over keys j <= query i in FP32, rounded to BF16 (the IR's
            explicit matmuls: the [32, t, t] scores are materialized)
  context   P V per head, BF16, merged back to [t, 4096], then x Wo^T
  residual  h + attention (BF16 add)
  FFN       RMSNorm, gate and up GEMMs, silu(g) u = g / (1 + exp(-g)) u in
            FP32 rounded to BF16, the down GEMM, the residual add

The arguments are the IR's, in its order (ARGUMENTS below). The softmax is
written with in-place FP32 ops so that eager mode holds at most one FP32
copy of the scores beside the BF16 ones (34 + 17 GB at 16k tokens);
torch.compile functionalizes them.

Checked against the IR by `bash bench/make_model_bench.sh --check-torch`:
on the 128-token block, 1.22e-2 max-norm relative error from the CPU
reference pipeline (all-BF16, FP32 accumulation), 2 BF16 ulps of the
largest outputs.
"""

import torch

HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128
D, FFN = 4096, 14336
EPS = 1.0e-5

# (name, shape as a function of the token count), the IR's argument order.
ARGUMENTS = [
    ("hidden", lambda t: (t, D)),
    ("rope_cos", lambda t: (t, HEAD_DIM)),
    ("rope_sin", lambda t: (t, HEAD_DIM)),
    ("attn_norm", lambda t: (D,)),
    ("wq", lambda t: (HEADS * HEAD_DIM, D)),
    ("wk", lambda t: (KV_HEADS * HEAD_DIM, D)),
    ("wv", lambda t: (KV_HEADS * HEAD_DIM, D)),
    ("wo", lambda t: (D, HEADS * HEAD_DIM)),
    ("ffn_norm", lambda t: (D,)),
    ("w_gate", lambda t: (FFN, D)),
    ("w_up", lambda t: (FFN, D)),
    ("w_down", lambda t: (D, FFN)),
]


def rms_norm(x, w):
    xf = x.float()
    total = (xf * xf).sum(-1, keepdim=True)
    r = torch.rsqrt(total / float(x.shape[-1]) + EPS)
    return (xf * r * w.float()).to(torch.bfloat16)


def split_heads(x, heads):
    """[t, heads * 128] -> [heads, t, 128] (the IR's expand + transpose)."""
    t = x.shape[0]
    return x.view(t, heads, HEAD_DIM).transpose(0, 1).contiguous()


def rope(x, cos, sin):
    xf = x.float()
    half = HEAD_DIM // 2
    rotated = torch.cat([-xf[..., half:], xf[..., :half]], dim=-1)
    return (xf * cos.float() + rotated * sin.float()).to(torch.bfloat16)


def repeat_kv(x, groups):
    """[kv, t, 128] -> [kv * groups, t, 128], each head repeated `groups`
    times in a row (the IR's broadcast + collapse)."""
    kv, t, hd = x.shape
    return x.unsqueeze(1).expand(kv, groups, t, hd).reshape(kv * groups, t, hd)


def causal_softmax(scores):
    """softmax(S / sqrt(128)) over keys j <= i, in FP32, rounded to BF16."""
    t = scores.shape[-1]
    x = scores.float()
    x.mul_(1.0 / HEAD_DIM ** 0.5)
    index = torch.arange(t, device=scores.device)
    hidden = index[None, :] > index[:, None]  # key j after query i
    x.masked_fill_(hidden, float("-inf"))
    x = torch.softmax(x, dim=-1)
    return x.to(torch.bfloat16)


def decoder_block(hidden, rope_cos, rope_sin, attn_norm, wq, wk, wv, wo,
                  ffn_norm, w_gate, w_up, w_down):
    t = hidden.shape[0]
    x = rms_norm(hidden, attn_norm)
    q = split_heads(x @ wq.t(), HEADS)
    k = split_heads(x @ wk.t(), KV_HEADS)
    v = split_heads(x @ wv.t(), KV_HEADS)
    q = rope(q, rope_cos, rope_sin)
    k = rope(k, rope_cos, rope_sin)
    groups = HEADS // KV_HEADS
    k = repeat_kv(k, groups)
    v = repeat_kv(v, groups)
    probs = causal_softmax(torch.bmm(q, k.transpose(1, 2)))
    context = torch.bmm(probs, v)
    del probs
    merged = context.transpose(0, 1).reshape(t, HEADS * HEAD_DIM)
    h = hidden + merged @ wo.t()
    x = rms_norm(h, ffn_norm)
    g = (x @ w_gate.t()).float()
    u = (x @ w_up.t()).float()
    a = (g / (1.0 + torch.exp(-g)) * u).to(torch.bfloat16)
    del g, u
    return h + a @ w_down.t()
