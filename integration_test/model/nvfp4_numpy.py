"""NVFP4 quantize and block-scaled GEMM in numpy, for the whole-model checks.

A formulation of NUMERICS.md sections 2 and 3 written for whole tensors of
finite BF16 values (what a model's activations and weights are): rounding
by scaling into a fixed-point grid and np.rint (ties to even), where the
numerics library and test/python/quantize.py use table searches. It runs
where neither MLIR nor the nvfp4 Python module exists (the GPU machine);
test/python/model_numpy.py checks it byte for byte against nvfp4.quantize.

quantize(x, tile)  -> Quantized (codes, scales, amax and the decoded values
                      code x block scale, without the tensor scale)
scaled_matmul(a, b) -> FP32 C = alpha * sum(decoded A x decoded B), the
                      products exact, accumulated in FP64, then rounded once
"""

from dataclasses import dataclass

import numpy as np

F32 = np.float32
FLT_MAX = F32(np.finfo(np.float32).max)


def e4m3_rne(v):
    """Non-negative FP32 values <= 448 rounded to E4M3FN (RNE), as FP32.
    The quantum is 2^(e - 3) for a normal v in [2^e, 2^(e+1)) and 2^-9 for
    subnormals; v / quantum and the product back are exact."""
    v = np.asarray(v, F32)
    _, e = np.frexp(v)                       # v = m * 2^e, m in [0.5, 1)
    quantum = np.ldexp(F32(1), np.maximum(e - 1, -6) - 3).astype(F32)
    return (np.rint(v / quantum) * quantum).astype(F32)


def e4m3_bits(v):
    """E4M3FN bytes of values e4m3_rne produced."""
    v = np.asarray(v, np.float64)
    m, e = np.frexp(v)
    normal = v >= 2.0 ** -6
    exponent = np.where(normal, e - 1 + 7, 0)
    mantissa = np.where(normal, np.rint((m * 2 - 1) * 8), np.rint(v / 2.0 ** -9))
    return np.where(v == 0, 0, exponent * 8 + mantissa).astype(np.uint8)


def e2m1_rne(y):
    """FP32 values rounded to E2M1 (RNE, saturating at 6), as FP32 with the
    sign kept: steps of 0.5 below 2, of 1 below 4, of 2 above."""
    y = np.asarray(y, F32)
    a = np.abs(y)
    q = np.where(a < 2, np.rint(a * 2) / 2,
                 np.where(a < 4, np.rint(a), np.minimum(np.rint(a / 2) * 2, 6)))
    return np.copysign(q, y).astype(F32)


E2M1_MAGNITUDES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], F32)


def e2m1_codes(q):
    """4-bit codes (sign in bit 3) of values e2m1_rne produced."""
    index = np.searchsorted(E2M1_MAGNITUDES, np.abs(q))
    return (index | np.where(np.signbit(q), 8, 0)).astype(np.uint8)


@dataclass
class Quantized:
    codes: np.ndarray    # uint8 [rows, cols], one code per element
    scales: np.ndarray   # uint8 E4M3 bytes [rows, cols / 16] or [rows / 16, cols / 16]
    amax: np.float32
    decoded: np.ndarray  # FP32 code value x block scale (no tensor scale)

    def packed(self):
        """Two codes per byte, element 2i in the low nibble."""
        return (self.codes[..., 0::2] | (self.codes[..., 1::2] << 4)).astype(np.uint8)


def quantize(x, tile=False, amax=None):
    """NUMERICS.md section 2 on a [rows, cols] tensor of finite values:
    1x16 blocks along the rows, or 16x16 tiles with tile=True."""
    x = np.asarray(x, F32)
    rows, cols = x.shape
    amax = F32(np.abs(x).max()) if amax is None else F32(amax)
    s_enc = F32(1) if amax == 0 else np.minimum(F32(F32(2688) / amax), FLT_MAX)
    s_dec = F32(F32(1) / s_enc)
    mult = F32(s_enc * F32(F32(1) / F32(6)))
    if tile:
        bamax = np.abs(x).reshape(rows // 16, 16, cols // 16, 16).max(axis=(1, 3))
    else:
        bamax = np.abs(x).reshape(rows, cols // 16, 16).max(axis=2)
    scale = e4m3_rne(np.minimum((bamax * mult).astype(F32), F32(448)))
    expand = (lambda s: np.repeat(np.repeat(s, 16, 0), 16, 1)) if tile else \
        (lambda s: np.repeat(s, 16, 1))
    # A block scale of 0 gives enc = FLT_MAX: its non-zero elements overflow
    # to inf and saturate to 6, as NUMERICS.md section 2 says.
    with np.errstate(divide="ignore", over="ignore"):
        enc = np.minimum(F32(1) / (scale * s_dec).astype(F32), FLT_MAX).astype(F32)
        q = e2m1_rne((x * expand(enc)).astype(F32))
    return Quantized(e2m1_codes(q), e4m3_bits(scale), amax,
                     (q * expand(scale)).astype(F32))


def alpha(amax_a, amax_b):
    """NUMERICS.md section 3's alpha for alpha_in = 1."""
    return F32(F32(F32(amax_a) * F32(amax_b)) * F32(F32(1) / F32(36 * 448 * 448)))


def scaled_matmul(a, b):
    """C[m, n] = alpha * sum_k A[m, k] B[n, k] of two Quantized operands
    (B holds the (n, k) weight), FP32."""
    acc = a.decoded.astype(np.float64) @ b.decoded.astype(np.float64).T
    return (acc.astype(F32) * alpha(a.amax, b.amax)).astype(F32)
