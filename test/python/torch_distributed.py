# RUN: rm -rf %t && mkdir -p %t
# RUN: env NVFP4_CACHE_DIR=%t/cache GLOO_SOCKET_IFNAME=lo TORCH_DIST_TMP=%t %PYTHON %s
# REQUIRES: python-nvfp4, python-torch
"""nvfp4.torch's tensor-parallel amax reduction on the CPU: two processes,
gloo. Debian's PyTorch has no CUDA (and no DTensor), so the GPU launch is
replaced by an emulation that keeps LayerKernels' launch protocol (every
operand's amax in a workspace slot, reduce() on the sharded operands'
slots, then each operand quantized by the numerics library with the amax
in its slot); what runs for real is the layer's side: which operands of
each phase a column / row split shards, the int32 max all-reduce over the
group into the workspace, the count of reductions, the per-rank SR seeds,
the argument checks. A rank's quantized W, X, W^T, dY must equal the
slice of the whole tensor's quantization, and without the reduction rank
0's W (the smaller half) must not. The GPU half (DDP, FSDP2, DTensor
tensor parallelism, the real kernels) is integration_test/torch_dist.py."""
import os
import sys
import unittest
import zlib

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import nvfp4
import nvfp4.torch as nt
from nvfp4 import layer_kernels as lk

T, K, N = 32, 64, 64
BLOCKS = {"forward": [(1, 16), (16, 16)],
          "backward": [(1, 16), (16, 16), (1, 16), (1, 16)]}


def bits(tensor):
    return tensor.detach().contiguous().view(torch.int16).numpy().view(
        np.uint16)


class Emulated:
    """LayerKernels.forward/backward's protocol on the CPU (RN, no RHT)."""

    def __init__(self):
        self.quantized = {}

    def workspace_bytes(self, phase):
        return 256

    def _run(self, phase, operands, workspace, sharded, reduce):
        words = workspace.view(torch.int32)
        for i, operand in enumerate(operands):
            amax = np.float32(np.abs(operand.float().numpy()).max())
            words[i] = int(amax.view(np.int32))
        if sharded:
            finish = reduce([4 * i for i in sharded])
            if finish is not None:
                finish()
        quantized = [nvfp4.quantize(bits(op), block, amax=float(
            words[i:i + 1].view(torch.float32)[0]))
            for i, (op, block) in enumerate(zip(operands, BLOCKS[phase]))]
        self.quantized[phase] = quantized
        return [torch.from_numpy(nvfp4.dequantize(q).astype(np.float32))
                for q in quantized]

    def forward(self, x, w, y, stream, workspace, sharded=(), reduce=None):
        qx, qw = self._run("forward", [x, w], workspace, sharded, reduce)
        y.copy_(qx @ qw.t())

    def backward(self, dy, wt, dyt, xt, seed, dx, dw, stream, workspace,
                 sharded=(), reduce=None):
        qdy, qwt, qdyt, qxt = self._run("backward", [dy, wt, dyt, xt],
                                        workspace, sharded, reduce)
        dx.copy_(qdy @ qwt.t())
        dw.copy_(qdyt @ qxt.t())


def data():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(T, K, generator=g)
    x[:, K // 2:] *= 3.0
    w = torch.randn(N, K, generator=g) * 0.02
    w[N // 2:] *= 4.0
    w[:, K // 2:] *= 3.0
    dy = torch.randn(T, N, generator=g) * 1e-3
    dy[:, N // 2:] *= 5.0
    return (v.to(torch.bfloat16) for v in (x, w, dy))


def step(layer, x, dy):
    """The layer's GEMMs through the custom op, as forward() calls them
    (forward() itself refuses CPU tensors)."""
    emulated = Emulated()
    layer._kernels_for = lambda tokens, device: emulated
    layer._split = layer._resolve_split()
    layer._local_features = (layer.weight.shape[1], layer.weight.shape[0])
    x = x.clone().requires_grad_()
    nt._nvfp4_linear(x, layer.weight, layer._id).backward(dy)
    return emulated.quantized


def same(q, whole, rows, cols):
    """q (a shard's quantization) equals the [rows, cols] block of whole."""
    shape = whole.codes.shape
    br = shape[0] // whole.scales.shape[0]
    codes = whole.packed.reshape(shape[0], shape[1] // 2)[
        rows, cols.start // 2:cols.stop // 2]
    scales = whole.scales.reshape(shape[0] // br, shape[1] // 16)[
        rows.start // br:rows.stop // br, cols.start // 16:cols.stop // 16]
    return (q.amax == whole.amax and
            np.array_equal(q.packed.reshape(codes.shape), codes) and
            np.array_equal(np.asarray(q.scales).reshape(scales.shape),
                           scales))


def worker(rank, world, init, results):
    dist.init_process_group("gloo", init_method=init, rank=rank,
                            world_size=world)
    nt._stream = lambda device: 0
    nt._workspace = lambda kernels, phase, device, layer: torch.zeros(
        256, dtype=torch.uint8)
    x, w, dy = data()
    full = {"x": nvfp4.quantize(bits(x), (1, 16)),
            "w": nvfp4.quantize(bits(w), (16, 16)),
            "wt": nvfp4.quantize(bits(w.t()), (16, 16)),
            "dy": nvfp4.quantize(bits(dy), (1, 16))}
    out = {}
    rs = slice(rank * N // world, (rank + 1) * N // world)  # column
    cs = slice(rank * K // world, (rank + 1) * K // world)  # row
    all_t, all_k, all_n = slice(0, T), slice(0, K), slice(0, N)
    for reduce in (True, False):
        column = nt.Linear(K, N // world, bias=False, parallel="column")
        column.weight.data.copy_(w[rs])
        column.reduce_amax = reduce
        q = step(column, x, dy[:, rs])
        out[("column", reduce)] = {
            "w": same(q["forward"][1], full["w"], rs, all_k),
            "x": same(q["forward"][0], full["x"], all_t, all_k),
            "dy": same(q["backward"][0], full["dy"], all_t, rs),
            "wt": same(q["backward"][1], full["wt"], all_k, rs),
            "reductions": column.amax_reductions}
        row = nt.Linear(K // world, N, bias=False, parallel="row",
                        process_group=dist.group.WORLD)
        row.weight.data.copy_(w[:, cs])
        row.reduce_amax = reduce
        q = step(row, x[:, cs], dy)
        out[("row", reduce)] = {
            "w": same(q["forward"][1], full["w"], all_n, cs),
            "x": same(q["forward"][0], full["x"], all_t, cs),
            "dy": same(q["backward"][0], full["dy"], all_t, all_n),
            "wt": same(q["backward"][1], full["wt"], cs, all_n),
            "reductions": row.amax_reductions}
    # A replicated weight (data parallel) needs no reduction.
    plain = nt.Linear(K, N, bias=False)
    plain.weight.data.copy_(w)
    q = step(plain, x[rank * T // world:(rank + 1) * T // world],
             dy[rank * T // world:(rank + 1) * T // world])
    out["plain"] = {"w": same(q["forward"][1], full["w"], all_n, all_k),
                    "reductions": plain.amax_reductions}
    named = nt.Linear(K, N, bias=False)
    named.layer_name = "blocks.0.fc1"
    out["seed"] = named._next_seed()
    results[rank] = out
    dist.barrier()
    dist.destroy_process_group()


class TensorParallel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        world = 2
        init = "file://" + os.path.join(os.environ["TORCH_DIST_TMP"],
                                        "rendezvous")
        with mp.Manager() as manager:
            results = manager.dict()
            mp.spawn(worker, args=(world, init, results), nprocs=world)
            cls.results = dict(results)

    def test_shards_encode_with_the_whole_tensors_amax(self):
        for rank in (0, 1):
            for mode in ("column", "row"):
                got = self.results[rank][(mode, True)]
                for operand in ("w", "x", "dy", "wt"):
                    self.assertTrue(got[operand], (rank, mode, operand))
                # One all-reduce per phase.
                self.assertEqual(got["reductions"], 2, (rank, mode))

    def test_without_the_reduction_shards_differ(self):
        # Rank 0 holds the smaller half of W along both splits (and of dY's
        # features under the column split): its own amaxes are smaller.
        for mode in ("column", "row"):
            got = self.results[0][(mode, False)]
            self.assertFalse(got["w"], mode)
            self.assertFalse(got["wt"], mode)
            self.assertEqual(got["reductions"], 0)
        self.assertFalse(self.results[0][("column", False)]["dy"])
        # A replicated operand needs no reduction either way.
        self.assertTrue(self.results[0][("column", False)]["x"])
        self.assertTrue(self.results[0][("row", False)]["dy"])

    def test_replicated_weight(self):
        for rank in (0, 1):
            self.assertTrue(self.results[rank]["plain"]["w"])
            self.assertEqual(self.results[rank]["plain"]["reductions"], 0)

    def test_ranks_draw_their_own_rounding_noise(self):
        seeds = [self.results[r]["seed"] for r in (0, 1)]
        self.assertNotEqual(seeds[0], seeds[1])
        base = lk.derive_stream_seed(0, zlib.crc32(b"blocks.0.fc1"))
        for rank in (0, 1):
            self.assertEqual(seeds[rank], lk.derive_stream_seed(
                lk.derive_stream_seed(base, (1 << 32) + rank), 1))
        # Without a process group the seeds are the single-GPU ones.
        named = nt.Linear(K, N, bias=False)
        named.layer_name = "blocks.0.fc1"
        self.assertEqual(named._next_seed(), lk.derive_stream_seed(base, 1))


class Prepare(unittest.TestCase):
    def test_tensor_parallel_shards(self):
        # prepare() compiles each layer's shard shape under a
        # parallelize_module-style plan (fnmatch names), the whole shape
        # elsewhere. The compiler is stubbed: only the shapes matter here.
        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nt.Linear(64, 256)
                self.fc2 = nt.Linear(256, 64)
                self.proj = nt.Linear(64, 64)

        model = torch.nn.Module()
        model.blocks = torch.nn.ModuleList([Block(), Block()])
        shapes = []
        saved = nt._lk.compile_layer
        nt._lk.compile_layer = lambda shape, *rest: shapes.append(shape.key())
        plan = {"blocks.*.fc1": "column", "blocks.*.fc2": "row"}
        try:
            self.assertEqual(nt.prepare(model, 32, tp_plan=plan,
                                        tp_degree=2), 3)
            self.assertEqual(sorted(set(shapes)), [(32, 64, 64),
                                                   (32, 64, 128),
                                                   (32, 128, 64)])
            shapes.clear()
            self.assertEqual(nt.prepare(model, 32), 3)
            self.assertEqual(sorted(set(shapes)), [(32, 64, 64),
                                                   (32, 64, 256),
                                                   (32, 256, 64)])
            with self.assertRaisesRegex(ValueError, r"blocks.0.fc1: a column "
                                        r"split of 256 features over 32 "
                                        r"ranks"):
                nt.prepare(model, 32, tp_plan=plan, tp_degree=32)
            with self.assertRaisesRegex(ValueError, "expected 'column' or "
                                        "'row'"):
                nt.prepare(model, 32, tp_plan={"proj": "diagonal"})
        finally:
            nt._lk.compile_layer = saved


class Arguments(unittest.TestCase):
    def test_split_arguments(self):
        with self.assertRaisesRegex(ValueError, r"parallel = 'diagonal'; "
                                    r"expected None, 'column'"):
            nt.Linear(32, 32, parallel="diagonal")
        with self.assertRaisesRegex(ValueError, "a process_group without "
                                    "parallel='column' or 'row'"):
            nt.Linear(32, 32, process_group=object())
        layer = nt.Linear(32, 32, parallel="row")
        self.assertIn("parallel='row'", repr(layer))
        with self.assertRaisesRegex(RuntimeError, "needs an initialized "
                                    "torch.distributed process group"):
            layer._resolve_split()
        self.assertEqual(nt.Linear(32, 32)._resolve_split(), (None, None))
        converted = nt.Linear.from_linear(torch.nn.Linear(32, 32),
                                          nt.Recipe())
        self.assertEqual((converted.parallel, converted.reduce_amax,
                          converted.amax_reductions), (None, True, 0))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
