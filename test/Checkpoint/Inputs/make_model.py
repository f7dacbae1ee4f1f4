"""Writes a small BF16 model checkpoint in the safetensors format.

An independent writer, following the published format description (an 8-byte
little-endian header length, a JSON header {name: {dtype, shape,
data_offsets}}, then the tensors' bytes, tiled in header order), with numpy
only: no safetensors or torch package is used.

    make_model.py OUT.safetensors [--blocks=N] [--seed=S]
"""

import json
import struct
import sys

import numpy as np


def bf16_bits(values):
    """float32 -> BF16 bit patterns (round to nearest even)."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype string, shape, raw little-endian bytes)."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


def model_tensors(blocks, seed, hidden=64, ffn=128, vocab=96):
    rng = np.random.default_rng(seed)
    tensors = []

    def add(name, shape, scale=0.05):
        values = rng.standard_normal(shape).astype(np.float32) * scale
        # A few outliers, as real weights have.
        flat = values.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] *= 20
        tensors.append((name, "BF16", shape, bf16_bits(values).tobytes()))

    add("model.embed_tokens.weight", (vocab, hidden))
    for b in range(blocks):
        p = "model.layers.{}.".format(b)
        add(p + "input_layernorm.weight", (hidden,), 1.0)
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            add(p + "self_attn." + proj + ".weight", (hidden, hidden))
        add(p + "post_attention_layernorm.weight", (hidden,), 1.0)
        add(p + "mlp.gate_proj.weight", (ffn, hidden))
        add(p + "mlp.up_proj.weight", (ffn, hidden))
        add(p + "mlp.down_proj.weight", (hidden, ffn))
    add("model.norm.weight", (hidden,), 1.0)
    add("lm_head.weight", (vocab, hidden))
    return tensors


if __name__ == "__main__":
    args = dict(a.lstrip("-").split("=") for a in sys.argv[2:])
    write_safetensors(sys.argv[1],
                      model_tensors(int(args.get("blocks", 2)),
                                    int(args.get("seed", 0))),
                      {"format": "pt"})
