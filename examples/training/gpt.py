"""A byte-level GPT (pre-LayerNorm decoder, learned positions, GELU MLP,
causal scaled-dot-product attention) for examples/training/train.py.

The linear layers are plain nn.Linear without bias; nvfp4.torch.convert
finds the blocks (`blocks`, a ModuleList) and the attention projections by
their names (`attn.qkv`, `attn.proj`: kind "attention"; `mlp.fc`,
`mlp.proj`: "ffn"); the embeddings and the head stay BF16.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 256  # bytes


def _attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):  # PyTorch 2.0 and newer
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # PyTorch 1.13 (Debian's, CPU tests): the same causal softmax attention.
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool,
                      device=q.device).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v


class Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.proj = nn.Linear(width, width, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads,
                                   d // self.heads).permute(2, 0, 3, 1, 4)
        y = _attention(q, k, v).transpose(1, 2).reshape(b, s, d)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 4 * width, bias=False)
        self.proj = nn.Linear(4 * width, width, bias=False)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = MLP(width)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, layers, width, heads, context):
        super().__init__()
        if width % heads:
            raise ValueError(f"width {width} is not a multiple of heads "
                             f"{heads}")
        self.context = context
        self.embed = nn.Embedding(VOCAB, width)
        self.position = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads)
                                    for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, VOCAB, bias=False)
        # GPT-2's initialization: N(0, 0.02), the residual projections
        # scaled down by sqrt(2 * layers).
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(
                    "proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, tokens, targets=None):
        s = tokens.shape[1]
        x = self.embed(tokens) + self.position(
            torch.arange(s, device=tokens.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.float().view(-1, VOCAB),
                               targets.reshape(-1))

    def linear_shapes(self):
        """(in_features, out_features) of the blocks' linear layers."""
        return sorted({(m.in_features, m.out_features)
                       for m in self.blocks.modules()
                       if isinstance(m, nn.Linear)})
