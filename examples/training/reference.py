"""The NVFP4 recipe's quantization in PyTorch, written from NUMERICS.md
(sections 2-5) without the numerics library or the kernels: check.py holds
the kernels' quantized operands and GEMM results against it on the GPU at
the training shapes, where the numerics library (CPU, one thread) would
take minutes per operand. test/python/training_reference.py checks it
against the numerics library on the CPU.

Works on any device with PyTorch 1.13 or newer (no float8 dtypes needed).
A quantized operand is a dict: "codes" (uint8, one E2M1 code per element,
bit 3 the sign), "scales" (uint8 E4M3 bits, linear layout: [rows, cols/16]
for 1x16 blocks, [rows/16, cols/16] for 16x16 tiles), "scale_values"
(float32, the scales' values), "amax" (the tensor amax, a Python float
holding an FP32 value), "block", and "scaled" (float32: x times its block's
encode factor, the value that gets rounded to E2M1).

The MX formats of the mxfp4 / mxfp8 arms (NUMERICS.md section 11, the
docs/Numerics.md section of the same number): mx_quantize gives "codes"
(uint8: E2M1 codes for "mxfp4", E4M3 bytes for "mxfp8", E5M2 bytes for
"mxfp8_e5m2"), "scales" (uint8
E8M0 bytes, [rows, cols/32]) and "scaled" (x times 2^-e of its block);
mx_dequantize decodes them.
"""
import math

import numpy as np
import torch

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
SIGN_MASK = 0xD7E8  # the RHT's sign vector (NUMERICS.md section 4)
_F32 = np.float32
_FLT_MAX = float(np.finfo(np.float32).max)


def tensor_factors(amax):
    """(S_enc, S_dec, mult) of NUMERICS.md section 2 as FP32 numbers."""
    amax = _F32(amax)
    with np.errstate(divide="ignore", over="ignore"):
        s_enc = _F32(2688) / amax
    s_enc = min(s_enc, _F32(_FLT_MAX))
    if amax == 0 or np.isinf(amax) or s_enc == 0:
        s_enc = _F32(1)
    s_dec = _F32(1) / s_enc
    mult = _F32(s_enc * (_F32(1) / _F32(6)))
    return s_enc, s_dec, mult


def e4m3_rne(v):
    """(bits, values) of non-negative FP32 `v` (at most 448) rounded to
    E4M3 to nearest even: subnormals below 2^-6 in steps of 2^-9, normals
    with 3 mantissa bits. torch.round rounds half to even; every scaling
    here is by a power of two, so exact."""
    v = v.float()
    subnormal = v < 2.0 ** -6
    q_sub = torch.round(v * 512.0)
    _, e = torch.frexp(v)  # v = m 2^e, m in [0.5, 1)
    quantum = torch.ldexp(torch.ones_like(v), (e - 4).to(torch.int32))
    normal = torch.round(v / quantum) * quantum
    values = torch.where(subnormal, q_sub / 512.0, normal)
    m2, e2 = torch.frexp(torch.where(subnormal, torch.ones_like(v), normal))
    bits_normal = (e2 + 6).to(torch.int32) * 8 + \
        (m2 * 16.0 - 8.0).to(torch.int32)
    bits = torch.where(subnormal, q_sub.to(torch.int32), bits_normal)
    return bits.to(torch.uint8), values


def e2m1_rne(y):
    """E2M1 codes of FP32 `y`, round to nearest even, saturating at 6
    (ties: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4,
    5 -> 4); the sign bit is y's (-0 and small negatives give code 8)."""
    a = y.abs()
    magnitude = ((a > 0.25).int() + (a >= 0.75).int() + (a > 1.25).int() +
                 (a >= 1.75).int() + (a > 2.5).int() + (a >= 3.5).int() +
                 (a > 5.0).int())
    return (magnitude + 8 * torch.signbit(y).int()).to(torch.uint8)


def _blocks(x, block):
    rows, cols = x.shape
    if cols % 16 or (block == (16, 16) and rows % 16):
        raise ValueError(f"{tuple(x.shape)} does not tile into {block}")
    if block == (1, 16):
        return x.reshape(rows, cols // 16, 16).abs().amax(-1)
    return x.reshape(rows // 16, 16, cols // 16, 16).abs().amax((1, 3))


def _expand(per_block, block, shape):
    rows, cols = shape
    if block == (1, 16):
        return per_block.repeat_interleave(16, 1)
    return per_block.repeat_interleave(16, 0).repeat_interleave(16, 1)


def quantize(x, block=(1, 16)):
    """The quantized operand (module docstring) of a 2-D BF16 tensor, round
    to nearest even (NUMERICS.md section 2, the order of its operations)."""
    if x.dim() != 2 or x.dtype != torch.bfloat16:
        raise ValueError("quantize takes a 2-D bfloat16 tensor")
    x = x.float()
    finite = torch.where(torch.isnan(x), torch.zeros_like(x), x)
    amax = float(finite.abs().max())
    s_enc, s_dec, mult = tensor_factors(amax)
    device = x.device
    mult_t = torch.tensor(mult, dtype=torch.float32, device=device)
    s_dec_t = torch.tensor(s_dec, dtype=torch.float32, device=device)
    bamax = _blocks(finite, block)
    bits, values = e4m3_rne(torch.clamp(bamax * mult_t, max=448.0))
    product = values * s_dec_t
    one = torch.ones((), dtype=torch.float32, device=device)
    encode = torch.clamp(one / product, max=_FLT_MAX)  # 1/0 = inf -> max
    scaled = x * _expand(encode, block, x.shape)
    codes = e2m1_rne(scaled)
    codes = torch.where(torch.isnan(x), torch.full_like(codes, 7), codes)
    return {"codes": codes, "scales": bits, "scale_values": values,
            "amax": float(_F32(amax)), "block": block, "scaled": scaled}


def pack(codes):
    """Two codes per byte, element 2i in the low nibble of byte i."""
    codes = codes.to(torch.uint8)
    return codes[..., 0::2] | (codes[..., 1::2] << 4)


def unpack(packed):
    packed = packed.to(torch.uint8)
    return torch.stack((packed & 15, packed >> 4), -1).reshape(
        *packed.shape[:-1], packed.shape[-1] * 2)


def hadamard(x, sign_mask=SIGN_MASK):
    """The 16-point RHT along the last dimension of BF16 `x` (NUMERICS.md
    section 4): signs, the FP32 butterfly in the order h = 1, 2, 4, 8,
    then x 0.25 rounded to BF16."""
    rows, cols = x.shape
    signs = torch.tensor([-1.0 if (sign_mask >> i) & 1 else 1.0
                          for i in range(16)], device=x.device)
    u = (x.float().reshape(rows, cols // 16, 16) * signs)
    for h in (1, 2, 4, 8):
        pairs = u.reshape(rows, cols // 16, 16 // (2 * h), 2, h)
        a, b = pairs[..., 0, :], pairs[..., 1, :]
        u = torch.stack((a + b, a - b), -2).reshape(rows, cols // 16, 16)
    return (u * 0.25).to(torch.bfloat16).reshape(rows, cols)


def dequantize(codes, scale_values, amax, block, dtype=torch.float64):
    """x_hat = e2m1(code) * scale * fp32(amax / 2688) (NUMERICS.md
    section 3), in `dtype` (float64: every product exact)."""
    table = torch.tensor(E2M1, dtype=dtype, device=codes.device)
    codes = codes.long()
    values = table[codes & 7] * (1 - 2 * ((codes >> 3) & 1)).to(dtype)
    factor = float(_F32(_F32(amax) / _F32(2688)))
    return values * _expand(scale_values.to(dtype), block,
                            codes.shape) * factor


def sr_neighbours(scaled):
    """(low, high) E2M1 magnitudes around |scaled| (equal on the grid;
    both 6 at or past 6) and the probability of rounding up that 8 random
    bits per element give (NUMERICS.md section 5: t = |y| + u step(|y|),
    u = k / 256, up when t reaches the next grid point)."""
    a = scaled.abs().double()
    grid = torch.tensor(E2M1, dtype=torch.float64, device=scaled.device)
    index = torch.clamp(torch.bucketize(a, grid, right=True) - 1, 0, 7)
    low = grid[index]
    high = grid[torch.clamp(index + 1, max=7)]
    step = torch.where(a >= 4, torch.full_like(a, 2.0),
                       torch.where(a >= 2, torch.ones_like(a),
                                   torch.full_like(a, 0.5)))
    distance = high - a
    ups = 256 - torch.ceil(256 * distance / step)
    p_up = torch.clamp(ups, 0, 256) / 256
    on_grid = low == a
    p_up = torch.where(on_grid | (a >= 6), torch.zeros_like(p_up), p_up)
    high = torch.where(on_grid | (a >= 6), low, high)
    low = torch.where(a >= 6, torch.full_like(low, 6.0), low)
    high = torch.where(a >= 6, torch.full_like(high, 6.0), high)
    return low, high, p_up


# The MX formats: element maximum per format ("mxfp8" is E4M3, the
# recipe's MXFP8; "mxfp8_e5m2" the gradients of its HYBRID form).
MX_MAX = {"mxfp8": 448.0, "mxfp8_e5m2": 57344.0, "mxfp4": 6.0}


def mx_scale_exponents(bamax, max_elem):
    """e_b of docs/Numerics.md 11.2 for FP32 block amaxes: the smallest
    integer e with 2^e >= fp32(bamax * fp32(1 / max_elem)), clamped to
    [-127, 127] (0 -> -127, +Inf -> 127). frexp writes v = m 2^E with m in
    [0.5, 1): v is a power of two (m = 0.5) at 2^(E-1), else below 2^E."""
    rcp = torch.tensor(float(_F32(1) / _F32(max_elem)), dtype=torch.float32,
                       device=bamax.device)
    v = bamax.float() * rcp
    finite = torch.where(torch.isinf(v), torch.ones_like(v), v)
    m, e = torch.frexp(finite)
    e = torch.where(m == 0.5, e - 1, e)
    e = torch.where(v == 0, torch.full_like(e, -127), e)
    e = torch.where(torch.isinf(v), torch.full_like(e, 127), e)
    return torch.clamp(e, -127, 127)


def e4m3_encode(y):
    """E4M3 bytes of FP32 `y`: round to nearest even, saturating at 448
    (Inf included), NaN 0x7F with y's sign, the sign of zero kept."""
    a = torch.clamp(torch.where(torch.isnan(y), torch.zeros_like(y),
                                y.abs()), max=448.0)
    bits, _ = e4m3_rne(a)
    bits = bits.int() | (torch.signbit(y).int() << 7)
    bits = torch.where(torch.isnan(y), (bits & 0x80) | 0x7F, bits)
    return bits.to(torch.uint8)


def e5m2_encode(y):
    """E5M2 bytes of FP32 `y`: round to nearest even (subnormals below
    2^-14 in steps of 2^-16, normals with 2 mantissa bits), saturating at
    57344 (Inf included), NaN 0x7F with y's sign, the sign of zero kept."""
    a = torch.clamp(torch.where(torch.isnan(y), torch.zeros_like(y),
                                y.abs()), max=57344.0)
    subnormal = a < 2.0 ** -14
    q_sub = torch.round(a * 65536.0)
    _, e = torch.frexp(a)
    quantum = torch.ldexp(torch.ones_like(a), (e - 3).to(torch.int32))
    normal = torch.round(a / quantum) * quantum
    m2, e2 = torch.frexp(torch.where(subnormal, torch.ones_like(a), normal))
    bits_normal = (e2 + 14).to(torch.int32) * 4 + \
        (m2 * 8.0 - 4.0).to(torch.int32)
    bits = torch.where(subnormal, q_sub.to(torch.int32), bits_normal)
    bits = bits | (torch.signbit(y).int() << 7)
    bits = torch.where(torch.isnan(y), (bits & 0x80) | 0x7F, bits)
    return bits.to(torch.uint8)


def e5m2_decode(bits, dtype=torch.float64):
    """Values of E5M2 bytes (exponent 31: Inf for mantissa 0, else NaN)."""
    b = bits.long()
    exponent, mantissa = (b >> 2) & 31, (b & 3).to(dtype)
    magnitude = torch.where(
        exponent == 0, mantissa / 4 * 2.0 ** -14,
        (1 + mantissa / 4) * torch.pow(2.0, (exponent - 15).to(dtype)))
    magnitude = torch.where(exponent == 31, torch.where(
        mantissa == 0, torch.full_like(magnitude, math.inf),
        torch.full_like(magnitude, math.nan)), magnitude)
    return torch.where((b >> 7) & 1 == 1, -magnitude, magnitude)


def e4m3_decode(bits, dtype=torch.float64):
    """Values of E4M3 bytes (0x7F / 0xFF NaN)."""
    b = bits.long()
    exponent, mantissa = (b >> 3) & 15, (b & 7).to(dtype)
    magnitude = torch.where(
        exponent == 0, mantissa / 8 * 2.0 ** -6,
        (1 + mantissa / 8) * torch.pow(2.0, (exponent - 7).to(dtype)))
    values = torch.where((b >> 7) & 1 == 1, -magnitude, magnitude)
    return torch.where(b & 0x7F == 0x7F, torch.full_like(values, math.nan),
                       values)


def mx_quantize(x, layer_format):
    """The MX quantized operand of a 2-D BF16 tensor, 1x32 blocks along
    the last dimension, round to nearest even (docs/Numerics.md 11.2)."""
    if x.dim() != 2 or x.dtype != torch.bfloat16:
        raise ValueError("mx_quantize takes a 2-D bfloat16 tensor")
    rows, cols = x.shape
    if cols % 32:
        raise ValueError(f"{tuple(x.shape)} does not tile into 1x32")
    x = x.float()
    finite = torch.where(torch.isnan(x), torch.zeros_like(x), x)
    bamax = finite.abs().reshape(rows, cols // 32, 32).amax(-1)
    e = mx_scale_exponents(bamax, MX_MAX[layer_format])
    factor = torch.ldexp(torch.ones_like(bamax), (-e).to(torch.int32))
    scaled = x * factor.repeat_interleave(32, 1)
    if layer_format == "mxfp4":
        codes = e2m1_rne(scaled)
        codes = torch.where(torch.isnan(x), torch.full_like(codes, 7), codes)
    elif layer_format == "mxfp8_e5m2":
        codes = e5m2_encode(scaled)
    else:
        codes = e4m3_encode(scaled)
    return {"codes": codes, "scales": (e + 127).to(torch.uint8),
            "scaled": scaled}


def mx_dequantize(codes, scales, layer_format, dtype=torch.float64):
    """elem(code) * 2^(scale - 127) (docs/Numerics.md 11.3; a 0xFF scale is
    NaN), in `dtype` (float64: exact)."""
    if layer_format == "mxfp4":
        table = torch.tensor(E2M1, dtype=dtype, device=codes.device)
        c = codes.long()
        values = table[c & 7] * (1 - 2 * ((c >> 3) & 1)).to(dtype)
    elif layer_format == "mxfp8_e5m2":
        values = e5m2_decode(codes, dtype)
    else:
        values = e4m3_decode(codes, dtype)
    s = scales.long()
    factor = torch.pow(torch.full(s.shape, 2.0, dtype=dtype,
                                  device=codes.device), (s - 127).to(dtype))
    factor = torch.where(s == 255, torch.full_like(factor, math.nan), factor)
    return values * factor.repeat_interleave(32, 1)
