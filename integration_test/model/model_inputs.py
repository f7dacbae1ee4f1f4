"""Deterministic inputs of examples/llama_block.mlir's @decoder_block.

The same values come from numpy here (uint32 arithmetic, no floating-point
rounding: the BF16 bit patterns are built from a hash) and from the MLIR
generator functions that make_model_case.py writes for the CPU reference,
so the device machine regenerates the 416 MiB of weights instead of
carrying them. Each argument: (name, shape, seed, exponent, signed); the
values are +-2^(exponent - 127) * [1, 4) with a random 7-bit mantissa.
"""

import numpy as np

# Weights scaled by about 1 / sqrt(K) so that activations stay O(1).
ARGUMENTS = [
    ("hidden", (128, 4096), 1, 126, True),
    ("rope_cos", (128, 128), 2, 125, True),
    ("rope_sin", (128, 128), 3, 125, True),
    ("attn_norm", (4096,), 4, 126, False),
    ("wq", (4096, 4096), 5, 120, True),
    ("wk", (1024, 4096), 6, 120, True),
    ("wv", (1024, 4096), 7, 120, True),
    ("wo", (4096, 4096), 8, 120, True),
    ("ffn_norm", (4096,), 9, 126, False),
    ("w_gate", (14336, 4096), 10, 120, True),
    ("w_up", (14336, 4096), 11, 120, True),
    ("w_down", (4096, 14336), 12, 119, True),
]

MUL_INDEX = 0x9E3779B1
MUL_SEED = 0x85EBCA77
MIX1 = 0x2C1B3C6D
MIX2 = 0x297A2D39


def bf16_bits(shape, seed, exponent, signed):
    """The BF16 bit patterns (uint16) of one argument."""
    count = int(np.prod(shape))
    i = np.arange(count, dtype=np.uint32)
    with np.errstate(over="ignore"):
        h = i * np.uint32(MUL_INDEX) + np.uint32((seed * MUL_SEED) & 0xFFFFFFFF)
        h ^= h >> np.uint32(15)
        h *= np.uint32(MIX1)
        h ^= h >> np.uint32(12)
        h *= np.uint32(MIX2)
        h ^= h >> np.uint32(15)
    sign = (h >> np.uint32(31)) << np.uint32(15) if signed else np.uint32(0)
    e = np.uint32(exponent) + ((h >> np.uint32(7)) & np.uint32(1))
    bits = sign | (e << np.uint32(7)) | (h & np.uint32(0x7F))
    return bits.astype(np.uint16).reshape(shape)


def bits_sum(bits):
    """The checksum the MLIR generator prints: the sum of the bit patterns."""
    return int(bits.astype(np.int64).sum())
