"""nvfp4_tensormap.encode against the fake driver fake_tensormap_driver.cpp
(through $NVFP4_CUDA_DRIVER): the ctypes call passes the arguments the
manifest means, innermost dimension first.

  tensormap_encode.py MODULE_DIR MANIFEST.json"""
import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
import nvfp4_tensormap as tm  # noqa: E402

with open(sys.argv[2]) as f:
    report = json.load(f)
params = report["kernels"][0]["params"]

blob = tm.encode(params[0], report["buffers"], 0x7F0000001000,
                 "kernel 'gemm_tma' (launch 0) parameter 0")
assert len(blob) == 128, len(blob)
words = struct.unpack("<Q30I", blob[:128])
address, rest = words[0], list(words[1:])
assert address == 0x7F0000001000, hex(address)
fields = {"data_type": rest[0], "rank": rest[1], "interleave": rest[2],
          "swizzle": rest[3], "l2_promotion": rest[4], "oob_fill": rest[5],
          "global_dim": rest[6:11], "global_strides": rest[11:15],
          "box_dim": rest[15:20], "element_strides": rest[20:25]}
print(fields)
assert fields == {"data_type": 0, "rank": 3, "interleave": 0, "swizzle": 3,
                  "l2_promotion": 3, "oob_fill": 0,
                  "global_dim": [512, 200, 2, 0, 0],
                  "global_strides": [512, 102400, 0, 0],
                  "box_dim": [128, 128, 1, 0, 0],
                  "element_strides": [1, 1, 1, 0, 0]}, fields

# The f32 map with NaN fill and 64-byte L2 promotion.
rest = list(struct.unpack("<Q30I", tm.encode(params[3], report["buffers"],
                                             0x2000)[:128])[1:])
assert rest[:6] == [7, 2, 0, 0, 1, 1], rest[:6]
assert rest[6:8] == [32, 32] and rest[11] == 128 and rest[15:17] == [32, 8]

# A refusal of the driver is one line naming the parameter and the error.
try:
    tm.encode(params[0], report["buffers"], 0xBAD000,
              "kernel 'gemm_tma' (launch 0) parameter 0")
    raise AssertionError("no error")
except tm.CudaError as e:
    print("CudaError:", e)
    assert "\n" not in str(e)
# A parameter that does not fit its buffer never reaches the driver.
try:
    tm.encode(dict(params[0], dims=[4, 200, 512]), report["buffers"], 0x1000,
              "kernel 'gemm_tma' (launch 0) parameter 0")
    raise AssertionError("no error")
except tm.TensorMapError as e:
    print("TensorMapError:", e)
print("encode ok")
