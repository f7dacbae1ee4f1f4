# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
#
# nvfp4.quantize(format="mxfp8_e4m3" | "mxfp8_e5m2" | "mxfp4") against a
# float64 model of docs/Numerics.md section 11 written in Python from the
# spec: element tables from the bit fields, nearest-even table search with
# saturation, and the scale exponent as the smallest e with 2^e >= v for the
# spec's v = fp32(bamax * fp32(1 / max_elem)) (exact rational comparison).

import math
import unittest
from fractions import Fraction

import numpy as np

import nvfp4


def table(fmt):
    """Finite magnitudes of codes 0.. of the element format, by code."""
    values = []
    if fmt == "mxfp4":
        for code in range(8):
            e, m = code >> 1, code & 1
            values.append(m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1))
    elif fmt == "mxfp8_e4m3":
        for code in range(0x7F):
            e, m = code >> 3, code & 7
            values.append(m / 8 * 2.0 ** -6 if e == 0
                          else (1 + m / 8) * 2.0 ** (e - 7))
    else:
        for code in range(0x7C):
            e, m = code >> 2, code & 3
            values.append(m / 4 * 2.0 ** -14 if e == 0
                          else (1 + m / 4) * 2.0 ** (e - 15))
    return values


TABLES = {f: table(f) for f in ("mxfp4", "mxfp8_e4m3", "mxfp8_e5m2")}
SIGN = {"mxfp4": 0x8, "mxfp8_e4m3": 0x80, "mxfp8_e5m2": 0x80}


def encode(fmt, value):
    if math.isnan(value):
        return 0x7 if fmt == "mxfp4" else (0xFF if math.copysign(1, value) < 0
                                           else 0x7F)
    # Beyond the largest finite magnitude (inf included) everything
    # saturates; distances in double would not separate the top codes there.
    magnitude = min(abs(value), TABLES[fmt][-1])
    best, best_error = 0, math.inf
    for code, v in enumerate(TABLES[fmt]):
        error = abs(v - magnitude)
        if error < best_error or (error == best_error and code % 2 == 0):
            best, best_error = code, error
    return best | (SIGN[fmt] if math.copysign(1, value) < 0 else 0)


def exponent(fmt, bamax):
    if math.isinf(bamax):
        return 127
    rcp = np.float32(1.0) / np.float32(TABLES[fmt][-1])
    v = Fraction(float(np.float32(bamax) * rcp))
    for e in range(-127, 128):
        if Fraction(2) ** e >= v:
            return e
    return 127


def model_quantize(fmt, x):
    x = np.asarray(x, dtype=np.float32)
    flat = x.reshape(-1, 32)
    codes, scales = [], []
    for block in flat:
        finite = [abs(float(v)) for v in block if not math.isnan(v)]
        e = exponent(fmt, max(finite, default=0.0))
        scales.append(e + 127)
        for v in block:
            # x * 2^-e as one fp32 rounding (exact in double, then to fp32).
            scaled = float(np.float32(math.ldexp(float(v), -e)))
            codes.append(encode(fmt, scaled))
    return (np.array(codes, np.uint8).reshape(x.shape),
            np.array(scales, np.uint8).reshape(x.shape[:-1] + (x.shape[-1] // 32,)))


def model_value(fmt, code):
    sign = SIGN[fmt]
    magnitude_code = code & (sign - 1)
    if fmt == "mxfp8_e5m2" and magnitude_code >= 0x7C:
        v = math.inf if magnitude_code == 0x7C else math.nan
    elif fmt == "mxfp8_e4m3" and magnitude_code == 0x7F:
        v = math.nan
    else:
        v = TABLES[fmt][magnitude_code]
    return -v if code & sign else v


class MXQuantizeTest(unittest.TestCase):
    def data(self, rng, shape, lo, hi):
        exponents = rng.uniform(lo, hi, size=shape)
        x = (np.exp2(exponents) * rng.choice([-1, 1], size=shape)).astype(np.float32)
        return x

    def test_random_tensors_match_the_model(self):
        rng = np.random.default_rng(20)
        for fmt in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"):
            for lo, hi in ((-3, 3), (-30, 10), (-130, -110), (100, 127)):
                x = self.data(rng, (3, 64), lo, hi)
                x[0, 5] = -0.0
                x[1, 3] = np.nan
                x[2, 40] = np.inf
                x[2, 32:40] = 0
                q = nvfp4.quantize(x, format=fmt)
                codes, scales = model_quantize(fmt, x)
                np.testing.assert_array_equal(q.scales, scales, err_msg=fmt)
                np.testing.assert_array_equal(q.codes, codes, err_msg=fmt)
                self.assertEqual(q.block, (1, 32))
                self.assertEqual(q.format, fmt)
                self.assertIsNone(q.amax)

    def test_bf16_input_and_batches(self):
        rng = np.random.default_rng(3)
        x = self.data(rng, (2, 4, 96), -8, 8)
        bits = (x.view(np.uint32) >> 16).astype(np.uint16)
        widened = (bits.astype(np.uint32) << 16).view(np.float32)
        for fmt in ("mxfp8_e4m3", "mxfp4"):
            q = nvfp4.quantize(bits, format=fmt)
            codes, scales = model_quantize(fmt, widened)
            self.assertEqual(q.scales.shape, (2, 4, 3))
            np.testing.assert_array_equal(q.codes, codes)
            np.testing.assert_array_equal(q.scales, scales)

    def test_dequantize_all_scales_times_all_codes(self):
        for fmt, count in (("mxfp4", 16), ("mxfp8_e4m3", 256), ("mxfp8_e5m2", 256)):
            codes = np.tile(np.arange(count, dtype=np.uint8), 255 * 32 // count + 1)
            codes = codes[: 255 * 32].reshape(255, 32)
            scales = np.arange(255, dtype=np.uint8).reshape(255, 1)
            q = nvfp4.QuantizedTensor(codes, scales, format=fmt)
            got = nvfp4.dequantize(q)
            for row in range(255):
                for col in range(32):
                    want = model_value(fmt, int(codes[row, col]))
                    if not math.isnan(want):
                        # One fp32 rounding of the exact product (Inf above
                        # the binary32 range).
                        with np.errstate(over="ignore"):
                            want = float(np.float32(want * 2.0 ** (row - 127)))
                    g = float(got[row, col])
                    if math.isnan(want):
                        self.assertTrue(math.isnan(g))
                    else:
                        self.assertEqual(g, want, (fmt, row, col))

    def test_scaled_matmul(self):
        rng = np.random.default_rng(5)
        a = nvfp4.quantize(self.data(rng, (4, 64), -2, 2), format="mxfp4")
        b = nvfp4.quantize(self.data(rng, (3, 64), -2, 2), format="mxfp4")
        c = nvfp4.scaled_matmul(a, b, alpha=2.0)
        want = 2.0 * nvfp4.dequantize(a).astype(np.float64) @ \
            nvfp4.dequantize(b).astype(np.float64).T
        np.testing.assert_allclose(c, want, rtol=1e-6)
        n = nvfp4.quantize(self.data(rng, (3, 64), -2, 2))
        with self.assertRaisesRegex(ValueError, "must both be nvfp4 or both MX"):
            nvfp4.scaled_matmul(a, n)

    def test_errors(self):
        x = np.ones((2, 32), np.float32)
        cases = [
            (dict(format="mxfp6"), "format must be one of"),
            (dict(format="mxfp4", block=(1, 16)), "1x32 blocks"),
            (dict(format="mxfp4", amax=1.0), "no tensor scale"),
            (dict(format="mxfp8_e4m3", rounding="sr"), "rounding=\"rn\" only"),
        ]
        for kwargs, message in cases:
            with self.assertRaisesRegex(ValueError, message):
                nvfp4.quantize(x, **kwargs)
        with self.assertRaisesRegex(ValueError, "multiple of 32"):
            nvfp4.quantize(np.ones((2, 16), np.float32), format="mxfp4")
        with self.assertRaisesRegex(ValueError, "must not be NaN"):
            nvfp4.QuantizedTensor(np.zeros((1, 32), np.uint8),
                                  np.full((1, 1), 0xFF, np.uint8), format="mxfp4")
        with self.assertRaisesRegex(ValueError, "0..15"):
            nvfp4.QuantizedTensor(np.full((1, 32), 0x10, np.uint8),
                                  np.zeros((1, 1), np.uint8), format="mxfp4")
        with self.assertRaisesRegex(ValueError, "one byte each"):
            nvfp4.quantize(x, format="mxfp8_e5m2").packed


if __name__ == "__main__":
    unittest.main()
