# RUN: %PYTHON %s
# REQUIRES: python-nvfp4, python-torch
#
# nvfp4.torch.load_checkpoint: a torch model's BF16 weights, written as
# safetensors by numpy, quantized by nvfp4.checkpoint, load back with every
# NVFP4 weight equal to nvfp4.dequantize(nvfp4.quantize(w)) bit for bit and
# every kept tensor as it was; the loaded layers compute with them.

import os
import sys
import tempfile
import unittest

import numpy as np
import torch

import nvfp4
import nvfp4.checkpoint as ck
import nvfp4.torch as nt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "Checkpoint", "Inputs"))
import make_model  # noqa: E402


class Norm(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))


class Block(torch.nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.input_layernorm = Norm(hidden)
        self.self_attn = torch.nn.Module()
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            setattr(self.self_attn, name,
                    torch.nn.Linear(hidden, hidden, bias=False))
        self.post_attention_layernorm = Norm(hidden)
        self.mlp = torch.nn.Module()
        self.mlp.gate_proj = torch.nn.Linear(hidden, ffn, bias=False)
        self.mlp.up_proj = torch.nn.Linear(hidden, ffn, bias=False)
        self.mlp.down_proj = torch.nn.Linear(ffn, hidden, bias=False)


class Model(torch.nn.Module):
    def __init__(self, blocks=2, hidden=64, ffn=128, vocab=96):
        super().__init__()
        self.model = torch.nn.Module()
        self.model.embed_tokens = torch.nn.Embedding(vocab, hidden)
        self.model.layers = torch.nn.ModuleList(
            Block(hidden, ffn) for _ in range(blocks))
        self.model.norm = Norm(hidden)
        self.lm_head = torch.nn.Linear(hidden, vocab, bias=False)


def bf16_bits(tensor):
    return make_model.bf16_bits(tensor.detach().float().numpy())


class LoadCheckpoint(unittest.TestCase):
    def test_round_trip(self):
        torch.manual_seed(0)
        source = Model()
        state = {k: bf16_bits(v) for k, v in source.state_dict().items()}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.safetensors")
            make_model.write_safetensors(
                path, [(k, "BF16", v.shape, v.tobytes())
                       for k, v in state.items()])
            out = os.path.join(tmp, "ck")
            summary = ck.quantize(path, out, keep_last=1)
            quantized = set(summary["quantized"])
            self.assertEqual(len(quantized), 7)  # block 0's linear layers

            target = Model()
            result = nt.load_checkpoint(target, out)
            self.assertEqual(list(result.missing_keys), [])
            self.assertEqual(list(result.unexpected_keys), [])
            loaded = target.state_dict()
            for name, bits in state.items():
                module = name.rpartition(".")[0]
                if module in quantized:
                    want = nvfp4.dequantize(nvfp4.quantize(bits))
                else:
                    want = (bits.astype(np.uint32) << 16).view(np.float32)
                got = loaded[name].numpy()
                self.assertEqual(got.dtype, np.float32, name)
                np.testing.assert_array_equal(got.view(np.uint32),
                                              want.view(np.uint32), name)

            up = target.model.layers[0].mlp.up_proj
            x = torch.randn(4, 64)
            w = torch.from_numpy(nvfp4.dequantize(ck.load_layer(
                out, "model.layers.0.mlp.up_proj")[0]))
            torch.testing.assert_close(up(x), x @ w.T)

    def test_not_a_checkpoint(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(ValueError, "not an NVFP4 checkpoint"):
                nt.load_checkpoint(Model(), tmp)


if __name__ == "__main__":
    unittest.main()
