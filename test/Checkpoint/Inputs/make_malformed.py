"""Writes malformed safetensors files, one per way a file can be broken.

    make_malformed.py DIR

Each file is a small valid file with exactly one defect (see DEFECTS); the
reader must reject every one with a clear message, never crash.
"""

import json
import os
import struct
import sys


def encode(header, data, length=None):
    text = json.dumps(header).encode() if not isinstance(header, bytes) else header
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def tensor(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


GOOD = {"a": tensor("F32", [2, 2], 0, 16), "b": tensor("U8", [4], 16, 20)}
DATA = bytes(range(20))

DEFECTS = {
    # Shorter than the length field.
    "short": b"\x01\x02\x03",
    # The header length says more than the file holds.
    "header-past-end": encode(GOOD, DATA, length=4096),
    # A header length of 2^63: a hostile file.
    "huge-header": encode(GOOD, DATA, length=1 << 63),
    # The last tensor's bytes are cut off.
    "truncated": encode(GOOD, DATA[:-3]),
    # Bytes after the last tensor.
    "trailing": encode(GOOD, DATA + b"\x00" * 4),
    # Two tensors sharing bytes.
    "overlap": encode({"a": tensor("F32", [2, 2], 0, 16),
                       "b": tensor("U8", [8], 12, 20)}, DATA),
    # A hole between two tensors.
    "gap": encode({"a": tensor("F32", [2], 0, 8),
                   "b": tensor("U8", [4], 16, 20)}, DATA),
    # A dtype the format does not have.
    "bad-dtype": encode({"a": tensor("F4", [2, 2], 0, 16),
                         "b": tensor("U8", [4], 16, 20)}, DATA),
    # The shape does not match the byte range.
    "shape-mismatch": encode({"a": tensor("F32", [2, 3], 0, 16),
                              "b": tensor("U8", [4], 16, 20)}, DATA),
    # A negative dimension.
    "negative-dim": encode({"a": tensor("F32", [-2, -2], 0, 16),
                            "b": tensor("U8", [4], 16, 20)}, DATA),
    # A shape whose byte count overflows 64 bits.
    "overflow-shape": encode({"a": tensor("F32", [1 << 40, 1 << 40], 0, 16),
                              "b": tensor("U8", [4], 16, 20)}, DATA),
    # End before begin.
    "reversed-offsets": encode({"a": tensor("F32", [0], 16, 0),
                                "b": tensor("U8", [4], 16, 20)}, DATA),
    # Not JSON at all.
    "not-json": encode(b"{\"a\": [1, 2", DATA),
    # JSON, but not an object.
    "not-object": encode([1, 2, 3], DATA),
    # A tensor entry missing its dtype.
    "missing-dtype": encode({"a": {"shape": [2, 2], "data_offsets": [0, 16]},
                             "b": tensor("U8", [4], 16, 20)}, DATA),
    # Metadata values must be strings.
    "bad-metadata": encode({"__metadata__": {"format": 3}, **GOOD}, DATA),
}


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, content in DEFECTS.items():
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(content)
    with open(os.path.join(out, "good.safetensors"), "wb") as f:
        f.write(encode(GOOD, DATA))
