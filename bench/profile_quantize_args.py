"""The inputs and arguments of the quantize benchmark programs, shared by
bench/profile_quantize.py and bench/alternate_quantize_programs.py: an
8192 x 8192 BF16 tensor (standard normal, truncated), its amax as the given
amax, fixed seeds."""
import sys

import cupy as cp

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import run_bench  # noqa: E402

N = run_bench.N
# Output bytes (codes + scales + the 4-byte amax) of one quantization.
CODES_1X16 = N * N // 2 + N * N // 16 + 4
CODES_16X16 = N * N // 2 + N * N // 256
BASES = {
    "quantize": CODES_1X16,
    "quantize_amax_given": CODES_1X16,
    "wgrad_operand": CODES_1X16,
    "wgrad_operand_amax_given": CODES_1X16,
    "weight_copies": 2 * CODES_16X16,
    "weight_copies_amax_given": 2 * CODES_16X16,
    "dual_x": 2 * CODES_1X16,
    "dual_x_amax_given": 2 * CODES_1X16,
    "dual_dy": 2 * CODES_1X16,
    "dual_dy_amax_given": 2 * CODES_1X16,
}


def input_bits():
    """The input (uint16 BF16 bits on the device) and its amax."""
    rng = cp.random.default_rng(0)
    x = rng.standard_normal((N, N), dtype=cp.float32)
    x_bits = (x.view(cp.uint32) >> 16).astype(cp.uint16)  # truncated to BF16
    return x_bits, float(cp.abs(x).max())


def base_of(name):
    """The base program of `name`: itself, or the longest base it extends
    (<base>__<schedule>, <base>_ring2, ...)."""
    for base in sorted(BASES, key=len, reverse=True):
        if name == base or name.startswith(base + "_"):
            return base
    sys.exit(f"no arguments known for quantize program '{name}'")


def arguments(base, x_bits, amax):
    """The function arguments of base program `base`."""
    return {"quantize": [x_bits],
            "quantize_amax_given": [x_bits, amax],
            "wgrad_operand": [x_bits, 1234],
            "wgrad_operand_amax_given": [x_bits, 1234, amax],
            "weight_copies": [x_bits],
            "weight_copies_amax_given": [x_bits, amax],
            "dual_x": [x_bits],
            "dual_x_amax_given": [x_bits, amax, amax],
            "dual_dy": [x_bits, 1234, 5678],
            "dual_dy_amax_given": [x_bits, 1234, 5678, amax, amax]}[base]


def output_bytes(base):
    return BASES[base]
