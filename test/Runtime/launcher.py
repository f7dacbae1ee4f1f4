# RUN: rm -rf %t && mkdir -p %t
# RUN: c++ -shared -fPIC -o %t/libfakecuda.so %S/Inputs/fake_driver.cpp
# RUN: env NVFP4_CUDA_DRIVER=%t/libfakecuda.so FAKE_DRIVER_LOG=%t/log %PYTHON %s %t
# REQUIRES: python-nvfp4
"""nvfp4_runtime.Launcher (the C API's nvfp4rtLauncher*, over
nvfp4::runtime::Launcher) without a GPU: the fake driver's device memory is
host memory, so numpy arrays serve as the caller's device buffers and the
driver's log shows what was enqueued. Checks that a launch copies nothing to
or from the host, waits for nothing, initializes the caller's and the
workspace's buffers on the caller's stream, derives "seed_stream" seeds,
encodes tensor maps once per set of addresses, and reports every misuse.
Also the Session path's dtype and range checks (issue 16 W6)."""
import ctypes
import json
import os
import sys
import unittest

import numpy as np

import nvfp4_runtime as rt

WORK = sys.argv.pop(1)
LOG = os.environ["FAKE_DRIVER_LOG"]
STREAM = 0x5000
OTHER_STREAM = 0x6000

# buffer 0: argument 0 (bf16 x 64); buffer 1: result 0 (bf16 x 64);
# buffer 2: zeroed i32 amax; buffer 3: bytes under a tensor map; buffer 4:
# filled with f32 scalar argument 2; buffer 5: filled with i64 argument 3;
# buffer 6: result 1, zeroed (an accumulator in the caller's memory).
MANIFEST = {
    "function": "step", "chip": "sm_90a",
    "buffers": [
        {"element_type": "bf16", "elements": 64, "argument": 0},
        {"element_type": "bf16", "elements": 64, "result": 0},
        {"element_type": "i32", "elements": 1, "zero_initialized": True},
        {"element_type": "i8", "elements": 512, "zero_initialized": False},
        {"element_type": "f32", "elements": 4, "zero_initialized": False,
         "fill_from_argument": 2},
        {"element_type": "i64", "elements": 3, "zero_initialized": False,
         "fill_from_argument": 3},
        {"element_type": "f32", "elements": 8, "zero_initialized": True,
         "result": 1},
    ],
    "kernels": [
        {"name": "copy_p3", "grid": [1, 1, 1], "block": [32, 1, 1],
         "params": [{"type": "ptr", "buffer": 0}, {"type": "ptr", "buffer": 1},
                    {"type": "i64", "value": "128"}]},
        {"name": "k_p5", "grid": [2, 1, 1], "block": [32, 1, 1],
         "params": [{"type": "ptr", "buffer": 2},
                    {"type": "tensormap", "buffer": 3, "element_type": "i8",
                     "dims": [4, 128], "box": [4, 128]},
                    {"type": "i64", "argument": 1, "seed_stream": 0},
                    {"type": "i64", "argument": 1, "seed_stream": 5},
                    {"type": "i64", "argument": 3}]},
    ],
}
ALIGN = 256


def split_mix64(seed, stream):
    """Output stream + 1 of SplitMix64 from `seed` (written out here
    independently of the runtime)."""
    mask = (1 << 64) - 1
    z = (seed + 0x9E3779B97F4A7C15 * (stream + 1)) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def aligned(nbytes, alignment=ALIGN):
    """A zeroed uint8 array of nbytes at an `alignment`-aligned address
    (with its owner kept alive as .base)."""
    raw = np.zeros(nbytes + alignment, np.uint8)
    start = (-raw.ctypes.data) % alignment
    return raw[start:start + nbytes]


def write(name, value):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(value if isinstance(value, str) else json.dumps(value))
    return path


def log_lines():
    if not os.path.exists(LOG):
        return []
    with open(LOG) as f:
        return f.read().splitlines()


class Torchish:
    """What Launcher reads from a tensor: data_ptr, numel, element_size,
    is_contiguous."""

    def __init__(self, array, contiguous=True):
        self.array = array
        self.contiguous = contiguous

    def data_ptr(self):
        return self.array.ctypes.data

    def numel(self):
        return self.array.size

    def element_size(self):
        return self.array.itemsize

    def is_contiguous(self):
        return self.contiguous


class LauncherTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.manifest = write("step.json", MANIFEST)
        cls.image = write("step.ptx", "//\n.version 8.0\n.target sm_90a\n")
        cls.bundle = rt.load(cls.image, cls.manifest)

    def setUp(self):
        open(LOG, "w").close()
        self.launcher = self.bundle.launcher()
        self.x = aligned(128).view(np.uint16)
        self.x[:] = np.arange(64, dtype=np.uint16) * 3 + 1
        self.y = aligned(128).view(np.uint16)
        self.acc = aligned(32).view(np.float32)
        self.acc[:] = 7.0
        self.seed = 0xFEDCBA9876543210

    def tearDown(self):
        self.launcher.close()

    def arguments(self, seed=None):
        return [Torchish(self.x), self.seed if seed is None else seed, 0.5,
                -3]

    def results(self):
        return [Torchish(self.y), Torchish(self.acc)]

    def test_workspace_layout(self):
        # Buffers 2, 3, 4, 5 are scratch, each 256-byte aligned.
        self.assertEqual(self.launcher.workspace_bytes, 5 * ALIGN)
        self.assertEqual([self.launcher.workspace_offset(b) for b in range(7)],
                         [None, None, 0, 256, 768, 1024, None])
        with self.assertRaisesRegex(ValueError, "buffer 7 does not exist"):
            self.launcher.workspace_offset(7)

    def test_launch_on_caller_memory(self):
        ws = aligned(self.launcher.workspace_bytes)
        ws[:] = 0x11
        self.launcher.launch(self.arguments(), self.results(),
                             stream=STREAM, workspace=Torchish(ws))
        # The copy kernel moved the caller's argument into the caller's
        # result; the zeroed result and scratch buffers are zeros, the
        # filled ones hold the scalars, the tensor map's buffer is untouched.
        np.testing.assert_array_equal(self.y, self.x)
        np.testing.assert_array_equal(self.acc, np.zeros(8, np.float32))
        np.testing.assert_array_equal(ws[0:4], [0, 0, 0, 0])
        self.assertTrue((ws[256:768] == 0x11).all())
        np.testing.assert_array_equal(ws[768:784].view(np.float32),
                                      [0.5] * 4)
        np.testing.assert_array_equal(ws[1024:1048].view(np.int64), [-3] * 3)

        lines = log_lines()
        # Nothing synchronizes, nothing comes back to the host; the one copy
        # to the device is the tensor maps' upload, on the caller's stream.
        self.assertFalse([l for l in lines if "sync" in l or "dtoh" in l],
                         lines)
        uploads = [l for l in lines if l.startswith("htod")]
        self.assertEqual(uploads, [f"htod 128 stream {hex(STREAM)}"])
        self.assertTrue(all(hex(STREAM) in l for l in lines
                            if l.startswith(("memset", "launch", "htod"))))
        self.assertEqual(len([l for l in lines if l.startswith("encode")]), 1)
        launches = [l.split() for l in lines if l.startswith("launch")]
        self.assertEqual([l[1] for l in launches], ["copy_p3", "k_p5"])
        params = [int(v, 16) for v in launches[1][4:]]
        self.assertEqual(params[0], ws.ctypes.data)
        self.assertEqual(params[2], split_mix64(self.seed, 0))
        self.assertEqual(params[3], split_mix64(self.seed, 5))
        self.assertEqual(params[4], (1 << 64) - 3)
        # The tensor-map parameter points at the uploaded descriptor, which
        # the fake driver encoded over buffer 3 (workspace + 256).
        descriptor = (ctypes.c_uint64 * 2).from_address(params[1])
        self.assertEqual(descriptor[0], ws.ctypes.data + 256)
        self.assertEqual(descriptor[1] & 0xFFFFFFFF, 2)  # rank

    def test_tensor_map_cache(self):
        ws = aligned(self.launcher.workspace_bytes)
        for seed in (1, 2, 3):
            self.launcher.launch(self.arguments(seed), self.results(),
                                 stream=STREAM, workspace=Torchish(ws))
        self.assertEqual(self.launcher.tensor_map_cache_stats(),
                         {"hits": 2, "misses": 1, "evictions": 0,
                          "entries": 1})
        self.assertEqual(len([l for l in log_lines()
                              if l.startswith("encode")]), 1)
        # Another workspace is another pointer set; with room for one set,
        # alternating evicts, and eviction waits for the set's last launch.
        self.launcher.set_tensor_map_cache_capacity(1)
        other = aligned(self.launcher.workspace_bytes)
        open(LOG, "w").close()
        self.launcher.launch(self.arguments(), self.results(),
                             stream=STREAM, workspace=Torchish(other))
        self.launcher.launch(self.arguments(), self.results(),
                             stream=STREAM, workspace=Torchish(ws))
        stats = self.launcher.tensor_map_cache_stats()
        self.assertEqual((stats["misses"], stats["evictions"],
                          stats["entries"]), (3, 2, 1))
        lines = log_lines()
        self.assertEqual(len([l for l in lines if l.startswith("encode")]), 2)
        self.assertEqual(len([l for l in lines if l == "sync event"]), 2)
        # A set used on another stream: that stream waits for its upload.
        open(LOG, "w").close()
        self.launcher.launch(self.arguments(), self.results(),
                             stream=OTHER_STREAM, workspace=Torchish(ws))
        self.assertIn(f"wait stream {hex(OTHER_STREAM)}", log_lines())

    def test_pool(self):
        # No workspace, no allocator: the launcher allocates one, once.
        for stream in (STREAM, STREAM, OTHER_STREAM):
            self.launcher.launch(self.arguments(), self.results(),
                                 stream=stream)
        lines = log_lines()
        self.assertEqual([l for l in lines if l.startswith("alloc")],
                         ["alloc 1280", "alloc 128"])  # workspace, maps
        # The third launch is on another stream: it waits for the pool.
        waits = [l for l in lines if l.startswith("wait")]
        self.assertEqual(waits, [f"wait stream {hex(OTHER_STREAM)}"] * 2)
        np.testing.assert_array_equal(self.y, self.x)

    def test_allocator(self):
        calls = []
        blocks = {}

        def allocate(size, stream):
            block = aligned(size)
            blocks[block.ctypes.data] = block
            calls.append(("allocate", size, stream))
            return block.ctypes.data

        def deallocate(address, size, stream):
            calls.append(("deallocate", size, stream))
            blocks.pop(address)

        self.launcher.set_allocator(allocate, deallocate)
        self.launcher.launch(self.arguments(), self.results(),
                             stream=STREAM)
        self.assertEqual(calls, [("allocate", 1280, STREAM),
                                 ("deallocate", 1280, STREAM)])
        self.assertFalse(blocks)

        def refuse(size, stream):
            raise MemoryError("full")

        self.launcher.set_allocator(refuse, deallocate)
        with self.assertRaisesRegex(MemoryError, "the caller's allocator "
                                    "failed to allocate a 1280-byte "
                                    "workspace"):
            self.launcher.launch(self.arguments(), self.results())
        self.launcher.set_allocator()
        self.launcher.launch(self.arguments(), self.results())
        with self.assertRaisesRegex(ValueError, "give both"):
            self.launcher.set_allocator(allocate)

    def test_poison(self):
        ws = aligned(self.launcher.workspace_bytes)
        self.launcher.set_poison(True)
        self.launcher.launch(self.arguments(), self.results(),
                             workspace=Torchish(ws))
        self.assertTrue((ws[256:768] == 0xAB).all())
        np.testing.assert_array_equal(ws[768:784].view(np.float32), [0.5] * 4)

    def test_errors(self):
        ws = aligned(self.launcher.workspace_bytes)
        launch = self.launcher.launch
        results = self.results()
        with self.assertRaisesRegex(ValueError, "3 arguments given, the "
                                    "bundle's function takes 4"):
            launch(self.arguments()[:3], results, workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "1 results given"):
            launch(self.arguments(), results[:1], workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "argument 0 has no device "
                                    "address"):
            launch([0] + self.arguments()[1:], results, workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "result 0 at 0x[0-9a-f]+ is "
                                    "not 16-byte aligned"):
            launch(self.arguments(), [self.y.ctypes.data + 2,
                                      Torchish(self.acc)],
                   workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "the workspace at 0x[0-9a-f]+"
                                    " is not 256-byte aligned"):
            launch(self.arguments(), results, workspace=ws.ctypes.data + 16)
        with self.assertRaisesRegex(ValueError, "workspace: 512 bytes given, "
                                    "the launch needs 1280"):
            launch(self.arguments(), results, workspace=Torchish(ws[:512]))
        with self.assertRaisesRegex(ValueError, r"result 1 \(f32\): 16 bytes "
                                    "given, the kernels expect 32"):
            launch(self.arguments(), [Torchish(self.y),
                                      Torchish(self.acc[:4])],
                   workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "not dense"):
            launch([Torchish(self.x, contiguous=False)] +
                   self.arguments()[1:], results, workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "expected a number for the "
                                    "i64 scalar"):
            launch([Torchish(self.x), "seed", 0.5, -3], results,
                   workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "expected a device address"):
            launch([object()] + self.arguments()[1:], results, workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "argument 3: 1.50* is not an "
                                    "integer"):
            launch([Torchish(self.x), 1, 0.5, 1.5], results,
                   workspace=Torchish(ws))
        with self.assertRaisesRegex(ValueError, "expected a CUstream"):
            launch(self.arguments(), results, stream="s", workspace=Torchish(ws))
        fresh = self.bundle.launcher()
        status = fresh._lib.nvfp4rtLauncherLaunch(
            fresh._handle, None, (ctypes.c_uint64 * 4)(self.x.ctypes.data), 4,
            (ctypes.c_uint64 * 2)(self.y.ctypes.data, self.acc.ctypes.data),
            2, ws.ctypes.data)
        self.assertEqual(status, 1)
        self.assertIn("launch: scalar argument 1 (i64) was not set",
                      fresh._lib.nvfp4rtGetLastError().decode())
        fresh.close()
        with self.assertRaisesRegex(ValueError, "launcher is closed"):
            fresh.launch(self.arguments(), results)
        # A failed launch enqueued nothing.
        self.assertFalse([l for l in log_lines() if l.startswith("launch")])

    def test_host_computation_refused(self):
        manifest = dict(MANIFEST, host_computation=[
            {"op": "linalg.transpose", "location": "step.mlir:7:9"}])
        path = write("host.json", manifest)
        with self.assertRaisesRegex(rt.ManifestError, "@step leaves "
                                    "computation on the host that no kernel "
                                    "performs .1 op: linalg.transpose at "
                                    "step.mlir:7:9."):
            rt.load(self.image, path)
        self.assertIn("host computation no kernel performs",
                      rt.describe_manifest(path))


class SessionChecksTest(unittest.TestCase):
    """Issue 16 W6: what run() and load() accept."""

    @classmethod
    def setUpClass(cls):
        manifest = {"function": "q", "chip": "sm_90a", "buffers": [
            {"element_type": "bf16", "elements": 4, "argument": 0},
            {"element_type": "f32", "elements": 2, "argument": 1},
            {"element_type": "bf16", "elements": 4, "result": 0}],
            "kernels": [{"name": "copy_p3", "grid": [1, 1, 1],
                         "block": [1, 1, 1], "params": [
                             {"type": "ptr", "buffer": 0},
                             {"type": "ptr", "buffer": 2},
                             {"type": "i64", "value": "8"}]}]}
        cls.image = write("q.ptx", "//\n.version 8.0\n.target sm_90a\n")
        cls.manifest = write("q.json", manifest)
        cls.bundle = rt.load(cls.image, cls.manifest)

    def test_bf16_argument_dtypes(self):
        f32 = np.zeros(2, np.float32)
        bits = np.array([0x3F80, 0xC020, 0, 0x7F80], np.uint16)
        (out,) = self.bundle.run(bits, f32)
        np.testing.assert_array_equal(out, bits)
        values = np.array([1.0, -2.5, 0.0, np.inf], np.float32)
        (out,) = self.bundle.run(values, f32)
        np.testing.assert_array_equal(out, bits)
        for wrong in (np.zeros(4, np.float16), np.zeros(2, np.float64),
                      np.zeros(4, np.int16)):
            with self.assertRaisesRegex(ValueError, f"argument 0: a "
                                        f"{wrong.dtype.name} array cannot be "
                                        f"a bf16 argument"):
                self.bundle.run(wrong, f32)
        with self.assertRaisesRegex(ValueError, "not in the machine's byte "
                                    "order"):
            self.bundle.run(bits.astype(">u2"), f32)
        with self.assertRaisesRegex(ValueError, "argument 1: a float64 array "
                                    "cannot be a f32 argument .give "
                                    "float32."):
            self.bundle.run(bits, np.zeros(1, np.float64))

    def test_counts(self):
        f32 = np.zeros(2, np.float32)
        bits = np.zeros(4, np.uint16)
        for name, value, fragment in (
                ("repeat", 2 ** 32 + 1, r"repeat must be in \[1, "),
                ("repeat", 0, r"repeat must be in \[1, "),
                ("repeat", 1.5, "repeat must be an integer, got float"),
                ("warmup", -1, r"warmup must be in \[0, "),
                ("warmup", True, "warmup must be an integer, got bool")):
            with self.assertRaisesRegex(ValueError, fragment):
                self.bundle.run(bits, f32, **{name: value})
        with self.assertRaisesRegex(ValueError, r"device must be in \[0, "
                                    "2147483647\\], got 4294967296"):
            rt.load(self.image, self.manifest, device=2 ** 32)
        with self.assertRaisesRegex(ValueError, "device must be an integer"):
            rt.load(self.image, self.manifest, device="0")


if __name__ == "__main__":
    unittest.main()
