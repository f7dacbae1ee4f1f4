# RUN: %PYTHON %s
# REQUIRES: python-nvfp4
#
# nvfp4.checkpoint against independent numpy code: a BF16 checkpoint written
# by a numpy writer (test/Checkpoint/Inputs/make_model.py) quantizes to bytes
# that a numpy reader of the published layout finds equal to nvfp4.quantize's
# and that decode (numpy tables) to nvfp4.dequantize's; a ModelOpt-layout
# checkpoint written by numpy -- with decode scales no amax can reproduce --
# loads and dequantizes exactly; malformed files raise ValueError.

import json
import os
import struct
import sys
import tempfile
import unittest

import numpy as np

import nvfp4
import nvfp4.checkpoint as ck

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "Checkpoint", "Inputs"))
import make_model  # noqa: E402

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float64)


def e2m1_values(codes):
    magnitude = E2M1[codes & 7]
    return np.where(codes & 8, -magnitude, magnitude)


def e4m3_values(bits):
    """E4M3FN bits (sign 0) -> values, from the exponent/mantissa fields."""
    bits = bits.astype(np.int64)
    exponent, mantissa = (bits >> 3) & 0xF, bits & 7
    return np.where(exponent == 0, mantissa / 8.0 * 2.0 ** -6,
                    (1 + mantissa / 8.0) * 2.0 ** (exponent - 7.0))


def decode(codes, scales, decode_scale):
    """e2m1 * s_b * d: exact in double, rounded to float32 once."""
    block = np.repeat(e4m3_values(scales), 16, axis=-1)
    return (e2m1_values(codes) * block * np.float64(decode_scale)).astype(
        np.float32)


def read_safetensors(path):
    """An independent reader: {name: (dtype, shape, raw bytes)}."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    body = data[8 + length:]
    return {name: (entry["dtype"], tuple(entry["shape"]),
                   body[entry["data_offsets"][0]:entry["data_offsets"][1]])
            for name, entry in header.items()}


class QuantizeCheckpoint(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model = os.path.join(cls.tmp.name, "model.safetensors")
        make_model.write_safetensors(cls.model,
                                     make_model.model_tensors(2, seed=3))
        cls.out = os.path.join(cls.tmp.name, "ck")
        cls.summary = ck.quantize(cls.model, cls.out,
                                  input_amax={"model.layers.0.mlp.up_proj":
                                              7.25})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_summary(self):
        self.assertEqual(len(self.summary["quantized"]), 14)
        self.assertEqual(dict(self.summary["excluded"]),
                         {"model.embed_tokens": "embedding",
                          "lm_head": "LM head"})
        self.assertEqual(ck.layers(self.out), sorted(self.summary["quantized"]))
        with open(os.path.join(self.out, "hf_quant_config.json")) as f:
            config = json.load(f)["quantization"]
        self.assertEqual(config["quant_algo"], "NVFP4")
        self.assertEqual(config["group_size"], 16)
        self.assertEqual(config["exclude_modules"],
                         ["model.embed_tokens", "lm_head"])

    def test_bytes_equal_numerics_library(self):
        source = read_safetensors(self.model)
        written = read_safetensors(os.path.join(self.out, "model.safetensors"))
        for module in self.summary["quantized"]:
            dtype, shape, raw = source[module + ".weight"]
            self.assertEqual(dtype, "BF16")
            bits = np.frombuffer(raw, "<u2").reshape(shape)
            q = nvfp4.quantize(bits)
            n, k = shape
            dtype, wshape, weight = written[module + ".weight"]
            self.assertEqual((dtype, wshape), ("U8", (n, k // 2)))
            np.testing.assert_array_equal(
                np.frombuffer(weight, np.uint8).reshape(n, k // 2), q.packed)
            # Even element in the low nibble, checked from the raw bytes.
            packed = np.frombuffer(weight, np.uint8).reshape(n, k // 2)
            np.testing.assert_array_equal(packed & 0xF, q.codes[:, 0::2])
            np.testing.assert_array_equal(packed >> 4, q.codes[:, 1::2])
            dtype, sshape, scales = written[module + ".weight_scale"]
            self.assertEqual((dtype, sshape), ("F8_E4M3", (n, k // 16)))
            np.testing.assert_array_equal(
                np.frombuffer(scales, np.uint8).reshape(n, k // 16), q.scales)
            dtype, dshape, ws2 = written[module + ".weight_scale_2"]
            self.assertEqual((dtype, dshape), ("F32", ()))
            ws2 = np.frombuffer(ws2, "<f4")[0]
            self.assertEqual(ws2, np.float32(q.amax) / np.float32(2688))
            # Round trip: the checkpoint decodes to the library's bytes.
            w, _ = ck.load_layer(self.out, module)
            self.assertEqual(w.decode_scale, float(ws2))
            want = nvfp4.dequantize(q)
            np.testing.assert_array_equal(nvfp4.dequantize(w).view(np.uint32),
                                          want.view(np.uint32))
            np.testing.assert_array_equal(
                decode(q.codes, q.scales, ws2).view(np.uint32),
                want.view(np.uint32))

    def test_kept_tensors_are_copied(self):
        source = read_safetensors(self.model)
        written = read_safetensors(os.path.join(self.out, "model.safetensors"))
        for name in ("model.embed_tokens.weight", "lm_head.weight",
                     "model.norm.weight",
                     "model.layers.1.input_layernorm.weight"):
            self.assertEqual(written[name], source[name])

    def test_input_scale(self):
        _, scale = ck.load_layer(self.out, "model.layers.0.mlp.up_proj")
        self.assertEqual(scale, float(np.float32(7.25) / np.float32(2688)))
        _, none = ck.load_layer(self.out, "model.layers.0.mlp.down_proj")
        self.assertIsNone(none)

    def test_read_tensor(self):
        path = os.path.join(self.out, "model.safetensors")
        names = [t[0] for t in ck.tensors(path)]
        self.assertIn("model.layers.0.mlp.up_proj.weight_scale_2", names)
        array = ck.read_tensor(path, "model.layers.0.mlp.up_proj.weight")
        self.assertEqual((array.dtype, array.shape), (np.uint8, (128, 32)))

    def test_import_compiles(self):
        text = ck.import_layer(self.out, "model.layers.1.mlp.down_proj",
                               tokens=16)
        self.assertIn("tensor_scale = decode", text)
        ptx = nvfp4.compile(text, chip="sm_90a")
        self.assertIn(".entry", ptx)


class ForeignCheckpoint(unittest.TestCase):
    """A ModelOpt-layout checkpoint written by numpy, with decode scales
    that no amax reproduces through fp32(amax / 2688)."""

    def unreachable_scales(self, count):
        rng = np.random.default_rng(5)
        found = []
        while len(found) < count:
            d = np.float32(rng.uniform(1e-5, 1e-2))
            amax = np.float32(d * np.float32(2688))
            candidates = amax.view(np.uint32) + np.arange(-64, 65,
                                                          dtype=np.int64)
            reach = (candidates.astype(np.uint32).view(np.float32)
                     / np.float32(2688)).astype(np.float32)
            if not np.any(reach == d):
                found.append(d)
        return found

    def test_exact_decode_scales(self):
        rng = np.random.default_rng(6)
        n, k = 32, 64
        with tempfile.TemporaryDirectory() as tmp:
            tensors, expected = [], {}
            for i, d in enumerate(self.unreachable_scales(4)):
                name = "model.layers.{}.mlp.up_proj".format(i)
                codes = rng.integers(0, 16, (n, k)).astype(np.uint8)
                scales = rng.integers(0, 0x7F, (n, k // 16)).astype(np.uint8)
                packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(
                    np.uint8)
                tensors += [
                    (name + ".weight", "U8", (n, k // 2), packed.tobytes()),
                    (name + ".weight_scale", "F8_E4M3", (n, k // 16),
                     scales.tobytes()),
                    (name + ".weight_scale_2", "F32", (),
                     np.array(d, "<f4").tobytes()),
                ]
                expected[name] = (codes, scales, d)
            make_model.write_safetensors(
                os.path.join(tmp, "model.safetensors"), tensors)
            with open(os.path.join(tmp, "hf_quant_config.json"), "w") as f:
                json.dump({"producer": {"name": "modelopt"},
                           "quantization": {"quant_algo": "NVFP4",
                                            "group_size": 16,
                                            "exclude_modules": ["lm_head"]}},
                          f)
            for name, (codes, scales, d) in expected.items():
                w, input_scale = ck.load_layer(tmp, name)
                self.assertIsNone(input_scale)
                np.testing.assert_array_equal(w.codes, codes)
                np.testing.assert_array_equal(w.scales, scales)
                self.assertEqual(np.float32(w.decode_scale), d)
                got = nvfp4.dequantize(w)
                np.testing.assert_array_equal(
                    got.view(np.uint32),
                    decode(codes, scales, d).view(np.uint32))
                # The old representation (an amax) cannot: it is off.
                old = nvfp4.QuantizedTensor(codes, scales,
                                            float(np.float32(d * 2688)))
                self.assertFalse(np.array_equal(nvfp4.dequantize(old), got))

            # A checkpoint's scales must be magnitudes: 0x80 is rejected.
            bad = dict(read_safetensors(os.path.join(tmp,
                                                     "model.safetensors")))
            name = "model.layers.0.mlp.up_proj"
            scales = bytearray(bad[name + ".weight_scale"][2])
            scales[3] = 0x80
            make_model.write_safetensors(
                os.path.join(tmp, "model.safetensors"),
                [(key, *value[:2], bytes(scales) if key.endswith(
                    "weight_scale") and key.startswith(name) else value[2])
                 for key, value in bad.items()])
            with self.assertRaisesRegex(ValueError,
                                        "element 3 is 0x80: block scales"):
                ck.load_layer(tmp, name)


class Malformed(unittest.TestCase):
    def test_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "x.safetensors")
            header = json.dumps({"a": {"dtype": "F32", "shape": [4],
                                       "data_offsets": [0, 16]}}).encode()
            with open(path, "wb") as f:
                f.write(struct.pack("<Q", len(header)) + header + bytes(10))
            with self.assertRaisesRegex(ValueError, "truncated file"):
                ck.tensors(path)
            with self.assertRaisesRegex(ValueError, "truncated file"):
                ck.quantize(path, os.path.join(tmp, "out"))
            with self.assertRaisesRegex(ValueError, "No such file"):
                ck.inspect(os.path.join(tmp, "missing.safetensors"))
            with self.assertRaisesRegex(ValueError, "not an NVFP4 checkpoint"):
                ck.load_layer(tmp, "a")

    def test_decode_scale_validation(self):
        codes = np.zeros((1, 16), np.uint8)
        scales = np.zeros((1, 1), np.uint8)
        for bad in (-1.0, float("inf"), float("nan")):
            with self.assertRaisesRegex(ValueError, "decode_scale"):
                nvfp4.QuantizedTensor(codes, scales, decode_scale=bad)
        with self.assertRaisesRegex(ValueError, "amax or a decode scale"):
            nvfp4.QuantizedTensor(codes, scales)


class Mutations(unittest.TestCase):
    """Fuzz-ish: thousands of corrupted copies of a valid file (bytes
    flipped in the length field and the header, random truncations and
    extensions, header lengths off by a little) are each accepted with
    readable tensors or rejected with ValueError -- a crash would end this
    process and fail the test."""

    def test_mutants(self):
        rng = np.random.default_rng(13)
        header = json.dumps({
            "__metadata__": {"format": "pt"},
            "w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]},
            "s": {"dtype": "F8_E4M3", "shape": [4, 2],
                  "data_offsets": [64, 72]},
            "d": {"dtype": "F32", "shape": [], "data_offsets": [72, 76]},
        }).encode()
        good = (struct.pack("<Q", len(header)) + header
                + bytes(rng.integers(0, 256, 76, dtype=np.uint8)))
        accepted = rejected = 0
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.safetensors")
            for i in range(3000):
                data = bytearray(good)
                kind = i % 4
                if kind == 0:    # flip bytes in the length field or header
                    for _ in range(rng.integers(1, 4)):
                        pos = rng.integers(0, 8 + len(header))
                        data[pos] = rng.integers(0, 256)
                elif kind == 1:  # truncate anywhere
                    data = data[:rng.integers(0, len(data))]
                elif kind == 2:  # append garbage
                    data += bytes(rng.integers(0, 256, rng.integers(1, 64),
                                               dtype=np.uint8))
                else:            # a header length off by a little
                    length = len(header) + int(rng.integers(-40, 40))
                    data[:8] = struct.pack("<Q", max(length, 0))
                with open(path, "wb") as f:
                    f.write(bytes(data))
                try:
                    for name, dtype, shape in ck.tensors(path):
                        ck.read_tensor(path, name)
                    accepted += 1
                except ValueError:
                    rejected += 1
        self.assertEqual(accepted + rejected, 3000)
        self.assertGreater(rejected, 2000)


class DecodeScaleGemm(unittest.TestCase):
    def test_alpha_uses_decode_scales(self):
        rng = np.random.default_rng(9)
        a = nvfp4.quantize(rng.standard_normal((16, 64)).astype(np.float32))
        b = nvfp4.quantize(rng.standard_normal((8, 64)).astype(np.float32))
        da = np.float32(a.amax) / np.float32(2688)
        db = np.float32(b.amax) / np.float32(2688)
        qa = nvfp4.QuantizedTensor(a.codes, a.scales, decode_scale=da)
        qb = nvfp4.QuantizedTensor(b.codes, b.scales, decode_scale=db)
        want = nvfp4.dequantize(qa).astype(np.float64) @ \
            nvfp4.dequantize(qb).astype(np.float64).T
        got = nvfp4.scaled_matmul(qa, qb)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
