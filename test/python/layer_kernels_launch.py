# RUN: rm -rf %t && mkdir -p %t
# RUN: c++ -shared -fPIC -o %t/libfakecuda.so %nvfp4_src_root/test/Runtime/Inputs/fake_driver.cpp
# RUN: env NVFP4_CACHE_DIR=%t/cache NVFP4_CUDA_DRIVER=%t/libfakecuda.so FAKE_DRIVER_LOG=%t/log %PYTHON %s
# REQUIRES: python-nvfp4, ptxas, nvfp4-runtime
"""nvfp4.layer_kernels.LayerKernels launching a compiled layer on the fake
driver (host memory as device memory): the bundles' signatures, the
launches of one forward and one backward in order on the caller's stream,
the SR seeds derived from the step's seed, tensor maps encoded once for a
repeated set of addresses, and neither a host copy nor a wait; a launch
split around the reduction of sharded operands' amaxes (launch_plan)."""
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

    def test_split_launch(self):
        # A row-parallel backward (W^T and X^T sharded): the amax kernels of
        # those two first, the reduction, the kernels that do not read their
        # amaxes (all of dY's dgrad and wgrad quantizations), then the rest;
        # buffers initialized once, before the first part, so what the
        # reduction wrote into the amax slots is what the rest reads.
        t, k, n = 256, 128, 256
        kernels = lk.LayerKernels(lk.LayerShape(t, k, n), lk.RecipeOptions(),
                                  "sm_90a")
        names = [kk["name"] for kk in kernels.manifest("backward")["kernels"]]
        args = [buffer(t * n * 2), buffer(k * n * 2), buffer(n * t * 2),
                buffer(k * t * 2)]
        dx, dw = buffer(t * k * 2), buffer(n * k * 2)
        workspace = buffer(kernels.workspace_bytes("backward"))
        addr = lambda a: a.ctypes.data
        events = []

        def log_launches():
            with open(LOG) as f:
                return [l.split()[1] for l in f.read().splitlines()
                        if l.startswith("launch")]

        def reduce(offsets):
            events.append(("reduce", list(log_launches()), offsets))
            for o in offsets:  # the "group's" amax: 2.0f
                workspace[o:o + 4].view(np.float32)[0] = 2.0

            def finish():
                events.append(("finish", list(log_launches())))
            return finish

        open(LOG, "w").close()
        kernels.backward(*[addr(a) for a in args], 5, addr(dx), addr(dw),
                         STREAM, addr(workspace), sharded=(1, 3),
                         reduce=reduce)
        first, overlap, rest, amaxes = kernels.plan("backward", (1, 3))
        self.assertEqual(first, [2, 7])
        self.assertEqual(overlap, [0, 1, 5, 6])
        self.assertEqual(rest, [3, 4, 8, 9])
        self.assertEqual([names[i] for i in first],
                         [names[2], names[7]])
        self.assertIn("amax", names[2])
        self.assertIn("rht_amax", names[7])
        self.assertEqual(events[0], ("reduce", [names[i] for i in first],
                                     [kernels.launchers["backward"]
                                      .workspace_offset(b) for b in amaxes]))
        self.assertEqual(events[1][1], [names[i] for i in first + overlap])
        self.assertEqual(log_launches(),
                         [names[i] for i in first + overlap + rest])
        with open(LOG) as f:
            lines = f.read().splitlines()
        first_launch = next(i for i, l in enumerate(lines)
                            if l.startswith("launch"))
        self.assertFalse([l for l in lines[first_launch:]
                          if l.startswith("memset")])
        for offset in events[0][2]:
            self.assertEqual(workspace[offset:offset + 4].view(np.float32)[0],
                             2.0)
        # A column-parallel forward: only W's amax is hoisted.
        self.assertEqual(kernels.plan("forward", (1,))[:3],
                         ([2], [0, 1], [3, 4]))
        # Misuse: no workspace; an argument without an amax kernel (the
        # seed); a part without the caller's workspace or with a bad index.
        with self.assertRaisesRegex(ValueError, "needs the caller's "
                                    "workspace"):
            kernels.backward(*[addr(a) for a in args], 5, addr(dx), addr(dw),
                             STREAM, None, sharded=(1,), reduce=reduce)
        with self.assertRaisesRegex(ValueError, r"no amax kernel of "
                                    r"argument\(s\) \[4\]"):
            kernels.plan("backward", (1, 4))
        launcher = kernels.launchers["backward"]
        with self.assertRaisesRegex(ValueError, "subset of the "
                                    "kernels needs the caller's workspace"):
            launcher.launch([addr(a) for a in args] + [5],
                            [addr(dx), addr(dw)], STREAM, None, [0])
        with self.assertRaisesRegex(ValueError, "kernel index 10 "
                                    "out of range"):
            launcher.launch([addr(a) for a in args] + [5],
                            [addr(dx), addr(dw)], STREAM, addr(workspace),
                            [10])
        with self.assertRaisesRegex(ValueError, "listed twice"):
            launcher.launch([addr(a) for a in args] + [5],
                            [addr(dx), addr(dw)], STREAM, addr(workspace),
                            [1, 1])

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
