# RUN: rm -rf %t && mkdir -p %t
# RUN: env NVFP4_CACHE_DIR=%t/cache GLOO_SOCKET_IFNAME=lo TRAINING_TMP=%t %PYTHON %s
# REQUIRES: python-nvfp4, python-torch
"""examples/training/train_ddp.py on the CPU (the bf16 arm, gloo): two
ranks of 4 sequences each train like one process of 8 -- global batch s is
the ranks' consecutive shares and DDP averages their gradients -- so the
loss of every logged step agrees (the first, before any update, to float
rounding); a wrong share (both ranks on the same sequences, or the wrong
ones) moves it by far more. Also: the NVFP4 arms refuse the CPU. (Debian's
PyTorch 1.13 torchrun fails on Python 3.11, so the ranks are started with
torchrun's environment variables by hand.)"""
import json
import os
import socket
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "examples", "training",
                      "train_ddp.py")
TMP = os.environ["TRAINING_TMP"]
MODEL = ["--layers", "2", "--width", "64", "--heads", "2", "--context", "64",
         "--steps", "6", "--log-every", "1", "--val-batches", "2", "--cpu"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(world, batch, out, arm="bf16"):
    port = str(free_port())
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(
            [sys.executable, SCRIPT, "--arm", arm, "--batch", str(batch),
             "--out", out] + MODEL, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True))
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    return [p.returncode for p in procs], outputs


class DataParallel(unittest.TestCase):
    def test_two_ranks_train_like_one_process(self):
        runs = {}
        for world, batch in ((2, 4), (1, 8)):
            out = os.path.join(TMP, f"world{world}")
            codes, outputs = launch(world, batch, out)
            self.assertEqual(codes, [0] * world, "\n".join(outputs))
            with open(os.path.join(out, "ddp-bf16.json")) as f:
                runs[world] = json.load(f)
        two, one = runs[2], runs[1]
        self.assertEqual((two["ranks"], one["ranks"]), (2, 1))
        self.assertEqual([h["step"] for h in two["history"]],
                         list(range(1, 7)))
        first = (two["history"][0]["train_loss"],
                 one["history"][0]["train_loss"])
        self.assertAlmostEqual(first[0], first[1], delta=1e-4 * first[1])
        for a, b in zip(two["history"], one["history"]):
            self.assertAlmostEqual(a["train_loss"], b["train_loss"],
                                   delta=2e-3 * b["train_loss"])
        self.assertAlmostEqual(two["val_loss"], one["val_loss"],
                               delta=2e-3 * one["val_loss"])

    def test_nvfp4_arm_refuses_the_cpu(self):
        codes, outputs = launch(1, 8, os.path.join(TMP, "refused"), "nvfp4")
        self.assertNotEqual(codes[0], 0)
        self.assertIn("the nvfp4 arm needs a CUDA GPU", outputs[0])


if __name__ == "__main__":
    unittest.main()
