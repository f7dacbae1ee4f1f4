# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
#
# nvfp4.hadamard, swizzle_scales / unswizzle_scales and scaled_matmul against
# independent numpy formulations.

import unittest

import numpy as np

import nvfp4


def sylvester_hadamard(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def bf16(values):
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32(0xFFFF0000)).view(np.float32)


def round_bf16(values):
    """float32 -> nearest-even bfloat16 values (as float32), on the bits."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def signs_of(mask):
    return np.array([-1.0 if mask >> i & 1 else 1.0 for i in range(16)])


def recursive_rht(x, mask):
    """H_2n [a; b] = [H_n a + H_n b; H_n a - H_n b] on the halves, in float32
    (numpy rounds each operation to nearest even): the additions of the
    spec's butterfly on the same operands."""
    def transform(v):
        if v.shape[-1] == 1:
            return v
        half = v.shape[-1] // 2
        a, b = transform(v[..., :half]), transform(v[..., half:])
        return np.concatenate([a + b, a - b], axis=-1)
    runs = x.reshape(-1, 16).astype(np.float32)
    flipped = np.where(signs_of(mask) < 0, -runs, runs).astype(np.float32)
    return round_bf16(transform(flipped) * np.float32(0.25)).reshape(x.shape)


def cancelling_runs(rng, runs):
    """Small values and two copies of a large one, +-B, that cancel in half
    of the outputs: the FP32 roundings of the sums show in BF16."""
    x = bf16(np.exp2(rng.uniform(-8, 8, size=(runs, 16)))
             * rng.choice([-1.0, 1.0], size=(runs, 16)))
    big = bf16(np.exp2(rng.integers(16, 31, size=runs)).astype(np.float32))
    for r in range(runs):
        for position in rng.choice(16, 2, replace=False):
            x[r, position] = big[r] * rng.choice([-1.0, 1.0])
    return x


class HadamardTest(unittest.TestCase):
    def test_matches_matrix_product_on_exact_data(self):
        # Small integers times a power of two: every FP32 partial sum is exact,
        # so the FP32 butterfly equals the float64 matrix product.
        rng = np.random.default_rng(3)
        x = (rng.integers(-255, 256, size=(6, 64)) * 2.0 ** -7).astype(np.float32)
        mask = nvfp4.DEFAULT_SIGN_MASK
        self.assertEqual(mask, 0xD7E8)
        signs = np.array([-1.0 if (mask >> i) & 1 else 1.0 for i in range(16)])
        r = np.diag(signs) @ sylvester_hadamard(16) * 0.25
        exact = (x.reshape(-1, 16).astype(np.float64) @ r).reshape(x.shape)
        # Round to BF16 with ties to even via integer arithmetic on the bits.
        bits = exact.astype(np.float32).view(np.uint32)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000)
        expected = rounded.astype(np.uint32).view(np.float32)
        np.testing.assert_array_equal(nvfp4.hadamard(x), expected)

    def test_matches_recursive_butterfly_when_sums_round(self):
        rng = np.random.default_rng(8)
        x = cancelling_runs(rng, 256)
        for mask in (nvfp4.DEFAULT_SIGN_MASK, 0, 0xFFFF, 0x3C5A):
            got = nvfp4.hadamard(x, sign_mask=mask)
            np.testing.assert_array_equal(got.view(np.uint32),
                                          recursive_rht(x, mask).view(np.uint32))
            # The data exercises the roundings: the exact product differs.
            r = np.diag(signs_of(mask)) @ sylvester_hadamard(16) * 0.25
            exact = round_bf16((x.astype(np.float64) @ r).astype(np.float32))
            self.assertGreater(np.sum(np.any(exact != got, axis=1)), 30)

    def test_transform_of_identity_is_orthonormal(self):
        # The images of the unit vectors are the rows of R; R R^T = I exactly
        # because the entries are +-1/4.
        eye = np.eye(16, dtype=np.float32)
        r = nvfp4.hadamard(eye).astype(np.float64)
        np.testing.assert_array_equal(r @ r.T, np.eye(16))

    def test_bits_in_bits_out(self):
        x = bf16(np.random.default_rng(4).standard_normal((2, 32)))
        bits = (x.view(np.uint32) >> 16).astype(np.uint16)
        out_bits = nvfp4.hadamard(bits)
        self.assertEqual(out_bits.dtype, np.uint16)
        np.testing.assert_array_equal(
            (out_bits.astype(np.uint32) << 16).view(np.float32), nvfp4.hadamard(x))

    def test_sign_mask_changes_rows(self):
        eye = np.eye(16, dtype=np.float32)
        plain = nvfp4.hadamard(eye, sign_mask=0)
        np.testing.assert_array_equal(plain, sylvester_hadamard(16) * 0.25)


class SwizzleTest(unittest.TestCase):
    def atoms(self, scales):
        rows, cols = scales.shape
        padded = np.zeros((-(-rows // 128) * 128, -(-cols // 4) * 4), np.uint8)
        padded[:rows, :cols] = scales
        out = []
        for tile_row in range(padded.shape[0] // 128):
            for tile_col in range(padded.shape[1] // 4):
                tile = padded[tile_row * 128:(tile_row + 1) * 128,
                              tile_col * 4:(tile_col + 1) * 4]
                # [128, 4] -> [4 (r // 32), 32 (r % 32), 4] -> [32, 4, 4]
                out.append(tile.reshape(4, 32, 4).transpose(1, 0, 2).reshape(-1))
        return np.concatenate(out)

    def test_matches_atom_construction_and_round_trips(self):
        rng = np.random.default_rng(5)
        for shape in [(1, 1), (128, 4), (130, 9), (256, 2)]:
            scales = rng.integers(1, 127, size=shape, dtype=np.uint8)
            swizzled = nvfp4.swizzle_scales(scales)
            self.assertEqual(swizzled.ndim, 1)
            np.testing.assert_array_equal(swizzled, self.atoms(scales))
            self.assertEqual(np.count_nonzero(swizzled), scales.size)
            np.testing.assert_array_equal(
                nvfp4.unswizzle_scales(swizzled, *shape), scales)


class ScaledMatmulTest(unittest.TestCase):
    def test_matches_dequantized_product(self):
        rng = np.random.default_rng(6)
        a = nvfp4.quantize(bf16(rng.standard_normal((32, 64))))
        b = nvfp4.quantize(bf16(rng.standard_normal((48, 64)) * 1e-2),
                           block=(16, 16))
        c = nvfp4.scaled_matmul(a, b, alpha=2.0)
        self.assertEqual(c.shape, (32, 48))
        self.assertEqual(c.dtype, np.float32)
        da = nvfp4.dequantize(a).astype(np.float64)
        db = nvfp4.dequantize(b).astype(np.float64)
        expected = 2.0 * da @ db.T
        scale = 2.0 * np.abs(da) @ np.abs(db).T
        self.assertTrue(np.all(np.abs(c - expected) <= 1e-5 * scale + 1e-30))


if __name__ == "__main__":
    unittest.main()
