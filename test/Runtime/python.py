# RUN: env NVFP4_CUDA_DRIVER=%t.no-such-libcuda.so %PYTHON %s %S/Inputs
# REQUIRES: python-nvfp4
"""nvfp4_runtime (ctypes over libnvfp4_runtime.so) without a GPU: the
manifest summary, and every failure a Python exception with the library's
one-line message (the driver is pointed at a library that does not
exist)."""
import os
import sys
import unittest

import numpy as np

import nvfp4_runtime as rt

INPUTS = sys.argv.pop(1)


def path(name):
    return os.path.join(INPUTS, name)


class RuntimeWithoutDevice(unittest.TestCase):
    def test_describe_manifest(self):
        text = rt.describe_manifest(path("quantize_sr.json"))
        self.assertIn("argument 0: array 262144 x bf16 (524288 bytes)", text)
        self.assertIn("argument 1: scalar i64", text)
        self.assertIn("launch 1: nvfp4_quantize_256x1024xbf16_1x16_sr", text)

    def test_manifest_errors(self):
        with self.assertRaisesRegex(rt.ManifestError, "cannot read manifest"):
            rt.describe_manifest(path("missing.json"))
        with self.assertRaisesRegex(rt.ManifestError, "not valid JSON"):
            rt.describe_manifest(path("kernel.ptx"))
        with self.assertRaisesRegex(rt.ManifestError, "cannot read manifest"):
            rt.load(path("kernel.ptx"), path("missing.json"))

    def test_not_an_image(self):
        with self.assertRaisesRegex(ValueError, "is not a cubin, fatbin or PTX"):
            rt.load(path("quantize_sr.json"), path("quantize_sr.json"))

    def test_no_device(self):
        with self.assertRaises(rt.NoDeviceError) as caught:
            rt.load(path("kernel.ptx"), path("quantize_sr.json"))
        self.assertIn("no CUDA device: the CUDA driver library could not be "
                      "loaded", str(caught.exception))
        self.assertEqual(caught.exception.status, 4)
        self.assertIsInstance(caught.exception, RuntimeError)

    def test_helpers(self):
        x = np.array([1.0, -2.5, 0.0], np.float32)
        self.assertEqual(list(rt._bf16_bits(x)), [0x3F80, 0xC020, 0])
        with self.assertRaisesRegex(ValueError, "BF16-representable"):
            rt._bf16_bits(np.array([1.0 + 2**-20], np.float32))
        self.assertEqual(rt._to_int64(2**64 - 1), -1)
        self.assertEqual(rt._to_int64(0x123456789ABCDEF0), 0x123456789ABCDEF0)
        with self.assertRaises(ValueError):
            rt._to_int64(2**64)


if __name__ == "__main__":
    unittest.main()
