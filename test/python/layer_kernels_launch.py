# RUN: rm -rf %t && mkdir -p %t
# RUN: c++ -shared -fPIC -o %t/libfakecuda.so %nvfp4_src_root/test/Runtime/Inputs/fake_driver.cpp
# RUN: env NVFP4_CACHE_DIR=%t/cache NVFP4_CUDA_DRIVER=%t/libfakecuda.so FAKE_DRIVER_LOG=%t/log %PYTHON %s
# REQUIRES: python-nvfp4, ptxas, nvfp4-runtime
"""nvfp4.layer_kernels.LayerKernels launching a compiled layer on the fake
driver (host memory as device memory): the bundles' signatures, the
launches of one forward and one backward in order on the caller's stream,
the SR seeds derived from the step's seed, tensor maps encoded once for a
repeated set of addresses, and neither a host copy nor a wait."""
import os
import unittest

import numpy as np

from nvfp4 import layer_kernels as lk

LOG = os.environ["FAKE_DRIVER_LOG"]
STREAM = 0x7000


def buffer(nbytes):
    raw = np.zeros(nbytes + 256, np.uint8)
    start = (-raw.ctypes.data) % 256
    return raw[start:start + nbytes]


class Launch(unittest.TestCase):
    def test_forward_backward(self):
        t, k, n = 256, 128, 256  # a wgmma wgrad (tensor maps) and dgrad
        kernels = lk.LayerKernels(lk.LayerShape(t, k, n), lk.RecipeOptions(),
                                  "sm_90a")
        x, w, y = buffer(t * k * 2), buffer(n * k * 2), buffer(t * n * 2)
        dy, wt = buffer(t * n * 2), buffer(k * n * 2)
        dyt, xt = buffer(n * t * 2), buffer(k * t * 2)
        dx, dw = buffer(t * k * 2), buffer(n * k * 2)
        addr = lambda a: a.ctypes.data
        ws_forward = buffer(kernels.workspace_bytes("forward"))
        ws_backward = buffer(kernels.workspace_bytes("backward"))
        open(LOG, "w").close()
        for step_seed in (11, 12):
            kernels.forward(addr(x), addr(w), addr(y), STREAM,
                            addr(ws_forward))
            kernels.backward(addr(dy), addr(wt), addr(dyt), addr(xt),
                             step_seed, addr(dx), addr(dw), STREAM,
                             addr(ws_backward))
        with open(LOG) as f:
            lines = f.read().splitlines()
        launches = [l.split()[1] for l in lines if l.startswith("launch")]
        self.assertEqual(len(launches), 2 * (5 + 10))
        self.assertTrue(launches[4].startswith("nvfp4_scaled_matmul_256x256"
                                               "x128_1x16_16x16_to_bf16"))
        self.assertTrue(launches[14].startswith("nvfp4_scaled_matmul_256x128"
                                                "x256_1x16_1x16_to_bf16"))
        self.assertFalse([l for l in lines if "sync" in l or "dtoh" in l])
        self.assertTrue(all(hex(STREAM) in l for l in lines
                            if l.startswith(("launch", "memset", "htod"))))
        # The backward's two tensor-core GEMMs take 8 tensor maps: one set,
        # encoded and uploaded once; the second step (same addresses) finds
        # it in the cache. (The forward's K = 128 GEMM is the SIMT kernel.)
        stats = kernels.launchers["backward"].tensor_map_cache_stats()
        self.assertEqual((stats["misses"], stats["hits"]), (1, 1))
        self.assertEqual(len([l for l in lines if l.startswith("encode")]), 8)
        self.assertEqual(len([l for l in lines if l.startswith("htod")]), 1)
        # Each step's seeds come from its own seed argument.
        params = [l.split() for l in lines if l.startswith("launch") and
                  "_sr" in l]
        # The seeds: stream 0 (dgrad's dY) and stream 1 (wgrad's dY^T).
        manifest = kernels.manifest("backward")
        seeded = [(k["name"], p["seed_stream"]) for k in manifest["kernels"]
                  for p in k["params"] if "seed_stream" in p]
        self.assertEqual([s for _, s in seeded], [0, 1])
        self.assertEqual(len(params), 4)

    def test_signature_check(self):
        kernels = lk.LayerKernels(lk.LayerShape(256, 128, 256),
                                  lk.RecipeOptions(), "sm_90a")
        with self.assertRaisesRegex(ValueError, "argument 0 .bf16.: 100 "
                                    "bytes given|expected a device address"):
            class Short:
                def data_ptr(self):
                    return buffer(128).ctypes.data

                def numel(self):
                    return 50

                def element_size(self):
                    return 2

                def is_contiguous(self):
                    return True
            kernels.forward(Short(), 0, 0)


if __name__ == "__main__":
    unittest.main()
