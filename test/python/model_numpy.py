# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
#
# integration_test/model/nvfp4_numpy.py (the whole-model checks' NVFP4
# formulation, used on the GPU machine where the nvfp4 module does not run)
# against the numerics library through nvfp4.quantize / nvfp4.scaled_matmul:
# codes, scales and packed bytes identical; GEMMs equal up to the FP32
# summation order.

import os
import sys
import unittest

import numpy as np

import nvfp4

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "integration_test", "model"))
import nvfp4_numpy  # noqa: E402


def bf16(values):
    bits = np.asarray(values, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) & np.uint32(0xFFFF0000)).view(np.float32)


class ModelNumpyTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(77)

    def tensors(self, shape):
        normal = bf16(self.rng.standard_normal(shape))
        wide = bf16(np.exp2(self.rng.uniform(-40, 30, size=shape))
                    * self.rng.choice([-1.0, 1.0], size=shape))
        # Blocks of tiny values next to large ones: block scales that round
        # to zero or to E4M3 subnormals.
        mixed = normal.copy()
        mixed[:, :16] *= np.float32(2.0 ** -30)
        mixed[0, 16:32] = 0
        return normal, wide, mixed

    def test_quantize_bytes(self):
        for tile, block in ((False, (1, 16)), (True, (16, 16))):
            for x in self.tensors((64, 256)):
                ours = nvfp4_numpy.quantize(x, tile=tile)
                lib = nvfp4.quantize(x, block=block)
                np.testing.assert_array_equal(ours.codes, lib.codes)
                np.testing.assert_array_equal(ours.scales, lib.scales)
                np.testing.assert_array_equal(ours.packed(), lib.packed)
                self.assertEqual(float(ours.amax), lib.amax)

    def test_given_amax(self):
        x = self.tensors((32, 64))[0]
        ours = nvfp4_numpy.quantize(x, amax=np.float32(0.75))
        lib = nvfp4.quantize(x, amax=0.75)
        np.testing.assert_array_equal(ours.codes, lib.codes)
        np.testing.assert_array_equal(ours.scales, lib.scales)

    def test_scaled_matmul(self):
        a = self.tensors((32, 512))[0]
        b = self.tensors((48, 512))[0]
        ours = nvfp4_numpy.scaled_matmul(nvfp4_numpy.quantize(a),
                                         nvfp4_numpy.quantize(b, tile=True))
        lib = nvfp4.scaled_matmul(nvfp4.quantize(a), nvfp4.quantize(b, block=(16, 16)))
        np.testing.assert_allclose(ours, lib, rtol=1e-5, atol=1e-6 * np.abs(lib).max())


if __name__ == "__main__":
    unittest.main()
