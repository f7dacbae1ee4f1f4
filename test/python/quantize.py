# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
#
# nvfp4.quantize / dequantize against an independent numpy formulation of
# NUMERICS.md section 2 (float32 numpy arithmetic, table searches for E2M1
# and E4M3), byte for byte, plus the API's shapes and dtypes.

import unittest

import numpy as np

import nvfp4

FLT_MAX = np.float32(np.finfo(np.float32).max)


def e2m1_table():
    """Magnitudes of E2M1 codes 0..7 from their exponent/mantissa fields."""
    values = []
    for code in range(8):
        exponent, mantissa = code >> 1, code & 1
        values.append(mantissa * 0.5 if exponent == 0
                      else (1 + mantissa / 2) * 2.0 ** (exponent - 1))
    return np.array(values, dtype=np.float64)


def e4m3_table():
    """Magnitudes of E4M3FN codes 0..0x7E from their fields."""
    values = []
    for code in range(0x7F):
        exponent, mantissa = code >> 3, code & 7
        values.append(mantissa / 8 * 2.0 ** -6 if exponent == 0
                      else (1 + mantissa / 8) * 2.0 ** (exponent - 7))
    return np.array(values, dtype=np.float64)


E2M1 = e2m1_table()
E4M3 = e4m3_table()


def round_to_table(magnitude, table):
    """Nearest table index for each magnitude, ties to the even index."""
    magnitude = magnitude.astype(np.float64)
    upper = np.clip(np.searchsorted(table, magnitude), 1, len(table) - 1)
    lower = upper - 1
    down = magnitude - table[lower]
    up = table[upper] - magnitude
    pick_up = (up < down) | ((up == down) & (upper % 2 == 0))
    index = np.where(pick_up, upper, lower)
    return np.where(magnitude >= table[-1], len(table) - 1, index)


def ref_e2m1(y):
    code = round_to_table(np.nan_to_num(np.abs(y), posinf=6.0), E2M1)
    code = code | np.where(np.signbit(y), 8, 0)
    return np.where(np.isnan(y), 7, code).astype(np.uint8)


def ref_e4m3(v):
    return round_to_table(np.minimum(v, np.float32(448)), E4M3).astype(np.uint8)


def ref_quantize(x, block):
    """NUMERICS.md section 2 with float32 numpy operations."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        magnitudes = np.abs(x)
        amax = np.float32(np.max(np.where(np.isnan(x), 0, magnitudes)))
        s_enc = np.minimum(np.float32(2688) / amax, FLT_MAX)
        if amax == 0 or np.isinf(amax) or s_enc == 0:
            s_enc = np.float32(1)
        s_dec = np.float32(1) / s_enc
        mult = np.float32(s_enc * np.float32(1 / 6))
        rows = x.reshape(-1, x.shape[-1])
        block_rows = block[0]
        r, c = rows.shape
        tiles = np.where(np.isnan(rows), 0, np.abs(rows)).reshape(
            r // block_rows, block_rows, c // 16, 16)
        bamax = tiles.max(axis=(1, 3)).astype(np.float32)
        scales = ref_e4m3(np.minimum(bamax * mult, np.float32(448)))
        scale_values = E4M3[scales].astype(np.float32)
        enc = np.minimum(np.float32(1) / (scale_values * s_dec), FLT_MAX)
        enc_full = np.repeat(np.repeat(enc, block_rows, 0), 16, 1)
        codes = ref_e2m1(rows * enc_full)
    scale_shape = (x.shape[:-1] + (c // 16,) if block_rows == 1
                   else x.shape[:-2] + (x.shape[-2] // 16, c // 16))
    return codes.reshape(x.shape), scales.reshape(scale_shape), float(amax)


def bf16(values):
    """Rounds float32 values to bfloat16 (truncation keeps it independent)."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32(0xFFFF0000)).view(np.float32)


class QuantizeTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(1234)

    def random_tensor(self, shape, wide=False):
        if wide:
            magnitude = 2.0 ** self.rng.uniform(-30, 20, size=shape)
            sign = self.rng.choice([-1.0, 1.0], size=shape)
            return bf16(magnitude * sign)
        return bf16(self.rng.standard_normal(shape) * 3)

    def check_against_reference(self, x, block, amax=None):
        q = nvfp4.quantize(x, block=block, amax=amax)
        codes, scales, ref_amax = ref_quantize(x, block)
        if amax is None:
            self.assertEqual(q.amax, ref_amax)
            np.testing.assert_array_equal(q.codes, codes)
            np.testing.assert_array_equal(q.scales, scales)
        return q

    def test_random_1x16_matches_numpy(self):
        for wide in (False, True):
            x = self.random_tensor((8, 4, 256), wide)
            self.check_against_reference(x, (1, 16))

    def test_random_16x16_matches_numpy(self):
        for wide in (False, True):
            x = self.random_tensor((2, 64, 128), wide)
            self.check_against_reference(x, (16, 16))

    def test_shapes_and_dtypes(self):
        x = self.random_tensor((3, 5, 32))
        q = nvfp4.quantize(x)
        self.assertIsInstance(q, nvfp4.QuantizedTensor)
        self.assertEqual(q.codes.dtype, np.uint8)
        self.assertEqual(q.codes.shape, (3, 5, 32))
        self.assertEqual(q.shape, (3, 5, 32))
        self.assertEqual(q.scales.dtype, np.uint8)
        self.assertEqual(q.scales.shape, (3, 5, 2))
        self.assertEqual(q.packed.dtype, np.uint8)
        self.assertEqual(q.packed.shape, (3, 5, 16))
        self.assertEqual(q.block, (1, 16))
        self.assertIsInstance(q.amax, float)
        self.assertTrue(np.all(q.codes < 16))
        d = nvfp4.dequantize(q)
        self.assertEqual(d.dtype, np.float32)
        self.assertEqual(d.shape, x.shape)
        q2 = nvfp4.quantize(self.random_tensor((2, 32, 48)), block=(16, 16))
        self.assertEqual(q2.scales.shape, (2, 2, 3))
        self.assertEqual(q2.block, (16, 16))

    def test_packed_layout(self):
        q = nvfp4.quantize(self.random_tensor((4, 64)))
        low, high = q.packed & 0xF, q.packed >> 4
        np.testing.assert_array_equal(low, q.codes[:, 0::2])
        np.testing.assert_array_equal(high, q.codes[:, 1::2])
        np.testing.assert_array_equal(nvfp4.unpack(q.packed), q.codes)

    def test_bf16_bits_input_equals_float_input(self):
        x = self.random_tensor((4, 32))
        a = nvfp4.quantize(x)
        b = nvfp4.quantize((x.view(np.uint32) >> 16).astype(np.uint16))
        np.testing.assert_array_equal(a.codes, b.codes)
        np.testing.assert_array_equal(a.scales, b.scales)
        self.assertEqual(a.amax, b.amax)

    def test_non_contiguous_input(self):
        x = self.random_tensor((32, 64))
        np.testing.assert_array_equal(nvfp4.quantize(x.T.copy().T).codes,
                                      nvfp4.quantize(x).codes)
        np.testing.assert_array_equal(nvfp4.quantize(x[:, ::1][::2]).codes,
                                      nvfp4.quantize(x[::2].copy()).codes)

    def test_dequantize_formula(self):
        x = self.random_tensor((4, 64))
        q = nvfp4.quantize(x)
        values = np.where(q.codes & 8, -1, 1) * E2M1[q.codes & 7]
        scales = np.repeat(E4M3[q.scales], 16, axis=1)
        expected = (values.astype(np.float32) * scales.astype(np.float32)) \
            * np.float32(np.float32(q.amax) / np.float32(2688))
        np.testing.assert_array_equal(nvfp4.dequantize(q),
                                      expected.astype(np.float32))

    def test_explicit_amax(self):
        x = bf16(np.sign(self.rng.standard_normal((2, 32))) *
                 (1 + np.abs(self.rng.standard_normal((2, 32)))))
        q = nvfp4.quantize(x, amax=1e-3)
        self.assertEqual(q.amax, float(np.float32(1e-3)))
        # A tiny amax forces every block scale to 448 and codes to +-6.
        self.assertTrue(np.all(q.scales == 0x7E))
        self.assertTrue(np.all((q.codes & 7) == 7))

    def test_stochastic_rounding(self):
        x = bf16(self.rng.standard_normal((8, 64)) * 1e-3)
        a = nvfp4.quantize(x, rounding="sr", seed=7)
        b = nvfp4.quantize(x, rounding="sr", seed=7)
        c = nvfp4.quantize(x, rounding="sr", seed=8)
        rn = nvfp4.quantize(x)
        np.testing.assert_array_equal(a.codes, b.codes)
        np.testing.assert_array_equal(a.scales, rn.scales)
        self.assertTrue(np.any(a.codes != c.codes))
        # Each SR value is one of the two grid neighbours of the scaled input.
        deq_rn, deq_sr = nvfp4.dequantize(rn), nvfp4.dequantize(a)
        unit = np.repeat(E4M3[rn.scales], 16, 1) * rn.amax / 2688
        self.assertTrue(np.all(np.abs(deq_sr - deq_rn) <= 2 * unit + 1e-12))
        self.assertTrue(np.all(np.abs(deq_sr - x) <= 2 * unit + 1e-12))

    def test_quantized_tensor_from_parts(self):
        q = nvfp4.quantize(self.random_tensor((2, 32)))
        rebuilt = nvfp4.QuantizedTensor(q.codes, q.scales, q.amax, q.block)
        np.testing.assert_array_equal(nvfp4.dequantize(rebuilt),
                                      nvfp4.dequantize(q))
        with self.assertRaises(ValueError):
            nvfp4.QuantizedTensor(q.codes, q.scales[:, :1], q.amax)
        with self.assertRaises(ValueError):
            q.codes[0, 0] = 1  # read-only: keeps the validated parts valid


if __name__ == "__main__":
    unittest.main()
