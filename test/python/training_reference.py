# RUN: %PYTHON %s
# REQUIRES: python-nvfp4, python-torch
"""examples/training/reference.py (the recipe's quantization in PyTorch,
which examples/training/check.py holds the GPU kernels against at the
training shapes) against the numerics library: codes, scales and amax byte
for byte for 1x16 and 16x16 blocks (narrow and wide ranges, zero blocks,
subnormal scales), the RHT's bits, the dequantized values, and stochastic
rounding's neighbours and rounding-up probability."""
import os
import sys
import unittest

import numpy as np
import torch

import nvfp4

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "examples", "training"))
import reference as ref  # noqa: E402


def bf16_bits(values):
    u = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def as_torch(bits):
    return torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16)


class ReferenceTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(20261201)

    def tensors(self, rows, cols):
        normal = self.rng.standard_normal((rows, cols)) * 1e-3
        normal[:, self.rng.choice(cols, 4, replace=False)] *= 40.0
        wide = 2.0 ** self.rng.uniform(-40, 10, (rows, cols)) * \
            self.rng.choice([-1.0, 1.0], (rows, cols))
        blocks = self.rng.standard_normal((rows, cols))
        blocks[: rows // 2, :16] = 0.0     # zero blocks
        blocks[rows // 2:, 16:32] *= 1e-9  # scales that round to 0
        return [bf16_bits(v) for v in (normal, wide, blocks)]

    def check(self, bits, block):
        got = ref.quantize(as_torch(bits), block)
        want = nvfp4.quantize(bits, block)
        self.assertEqual(got["amax"], want.amax)
        np.testing.assert_array_equal(got["scales"].numpy(), want.scales)
        np.testing.assert_array_equal(got["codes"].numpy(), want.codes)
        np.testing.assert_array_equal(ref.pack(got["codes"]).numpy(),
                                      want.packed)
        np.testing.assert_array_equal(
            ref.unpack(ref.pack(got["codes"])).numpy(), want.codes)
        deq = ref.dequantize(got["codes"], got["scale_values"], got["amax"],
                             block, torch.float32)
        np.testing.assert_array_equal(deq.numpy(), nvfp4.dequantize(want))

    def test_quantize_1x16(self):
        for bits in self.tensors(64, 256):
            self.check(bits, (1, 16))

    def test_quantize_16x16(self):
        for bits in self.tensors(64, 256):
            self.check(bits, (16, 16))

    def cancelling(self, rows, cols):
        # Two large entries +-2^k per run of 16 among small ones: where they
        # cancel, the FP32 roundings of the butterfly's sums show in BF16
        # (the butterfly's order matters).
        x = 2.0 ** self.rng.uniform(-8, 8, (rows, cols)) * \
            self.rng.choice([-1.0, 1.0], (rows, cols))
        runs = x.reshape(-1, 16)
        for run in runs:
            big = 2.0 ** self.rng.integers(16, 31)
            run[self.rng.choice(16, 2, replace=False)] = \
                big * self.rng.choice([-1.0, 1.0], 2)
        return bf16_bits(x)

    def test_hadamard(self):
        for bits in self.tensors(32, 512) + [self.cancelling(32, 512)]:
            got = ref.hadamard(as_torch(bits)).view(torch.int16).numpy()
            np.testing.assert_array_equal(got.view(np.uint16),
                                          nvfp4.hadamard(bits))
            self.check(nvfp4.hadamard(bits), (1, 16))

    def test_stochastic_rounding(self):
        bits = bf16_bits(self.rng.standard_normal((256, 1024)) *
                         np.exp(self.rng.standard_normal((256, 1))) * 1e-4)
        reference = ref.quantize(as_torch(bits))
        low, high, p_up = ref.sr_neighbours(reference["scaled"])
        table = torch.tensor(ref.E2M1, dtype=torch.float64)
        for seed in (1, 2):
            sr = nvfp4.quantize(bits, (1, 16), "sr", seed)
            np.testing.assert_array_equal(sr.scales,
                                          reference["scales"].numpy())
            codes = torch.from_numpy(sr.codes.astype(np.int64))
            magnitude = table[codes & 7]
            self.assertTrue(bool(((magnitude == low) |
                                  (magnitude == high)).all()))
            self.assertTrue(torch.equal(
                (codes >> 3).bool(), torch.signbit(reference["scaled"])))
            up = ((magnitude == high) & (high != low)).double()
            z = float((up - p_up).sum() / (p_up * (1 - p_up)).sum().sqrt())
            self.assertLess(abs(z), 6.0, seed)
        # The statistic sees a biased rounding: round to nearest is.
        up = ((table[reference["codes"].long() & 7] == high) &
              (high != low)).double()
        z = float((up - p_up).sum() / (p_up * (1 - p_up)).sum().sqrt())
        self.assertGreater(abs(z), 6.0)

    def mx_tensors(self, rows, cols):
        tensors = self.tensors(rows, cols)
        # Every power-of-two boundary of the scale rule: block maxima at
        # max_elem * 2^k and one BF16 step either side, over the whole
        # E8M0 range; Inf, NaN, and all-zero / all-NaN blocks.
        edges = np.zeros((rows, cols), np.float32)
        ks = self.rng.integers(-133, 120, rows)
        for r in range(rows):
            for b in range(cols // 32):
                base = np.float32(2.0 ** float(ks[r]))
                edges[r, 32 * b:32 * b + 32] = self.rng.standard_normal(32) \
                    * base
        special = bf16_bits(edges)
        for r in range(rows):
            for b in range(cols // 32):
                i = 32 * b + int(self.rng.integers(0, 32))
                edge = bf16_bits(np.array(
                    [2.0 ** float(ks[r]) * (448 if b % 2 else 6)]))[0]
                special[r, i] = int(edge) + int(self.rng.integers(-1, 2))
        special[0, 3] = 0x7F80      # +Inf
        special[1, 40] = 0xFF80     # -Inf
        special[2, 5] = 0x7FC0      # NaN
        special[3, :32] = 0x7FC0    # an all-NaN block
        special[4, 32:64] = 0x8000  # -0 block
        return tensors + [special]

    def test_mx_quantize(self):
        for layer_format, name in (("mxfp4", "mxfp4"),
                                   ("mxfp8", "mxfp8_e4m3"),
                                   ("mxfp8_e5m2", "mxfp8_e5m2")):
            for bits in self.mx_tensors(48, 256):
                got = ref.mx_quantize(as_torch(bits), layer_format)
                want = nvfp4.quantize(bits, format=name)
                np.testing.assert_array_equal(got["scales"].numpy(),
                                              want.scales, name)
                np.testing.assert_array_equal(got["codes"].numpy(),
                                              want.codes, name)
                deq = ref.mx_dequantize(got["codes"], got["scales"],
                                        layer_format).float()
                np.testing.assert_array_equal(deq.numpy(),
                                              nvfp4.dequantize(want), name)
        # Every E5M2 byte decodes to the library's value (Inf, NaN, the
        # subnormals): a scale of 2^0 and each code once.
        codes = torch.arange(256, dtype=torch.uint8).reshape(8, 32)
        values = ref.mx_dequantize(codes, torch.full((8, 1), 127,
                                                     dtype=torch.uint8),
                                   "mxfp8_e5m2").float().numpy()
        want = nvfp4.dequantize(nvfp4.QuantizedTensor(
            codes.numpy(), np.full((8, 1), 127, np.uint8),
            format="mxfp8_e5m2"))
        np.testing.assert_array_equal(np.isnan(values), np.isnan(want))
        np.testing.assert_array_equal(np.nan_to_num(values),
                                      np.nan_to_num(want))
        # The rule rounds the exponent up: a block maximum never clips.
        x = as_torch(bf16_bits(np.full((1, 32), 7.5, np.float32)))
        q = ref.mx_quantize(x, "mxfp4")
        self.assertEqual(int(q["scales"][0, 0]), 127 + 1)  # 7.5 / 6 -> 2^1
        self.assertEqual(int(q["codes"][0, 0]), 6)         # 3.75 -> 4


if __name__ == "__main__":
    unittest.main(verbosity=1)
