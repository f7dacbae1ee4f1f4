"""TMA tensor maps for the "tensormap" kernel parameters of nvfp4 manifests.

The tensor-core GEMM kernels nvfp4-compile writes load their tiles with TMA
(``cp.async.bulk.tensor``). Such a kernel takes, for each tiled operand, a
parameter ``{"type": "tensormap", "buffer": B, "element_type": "i8",
"dims": [...], "box": [...], "swizzle": "128B", "l2_promotion": "256B",
"oob_fill": "zero"}``: an 8-byte device pointer to 128 bytes of device
memory holding a ``CUtensorMap`` over buffer B, viewed as a dense row-major
array of shape ``dims`` (outermost first), copied in boxes of shape ``box``.
This module encodes that descriptor with the driver's
``cuTensorMapEncodeTiled`` (through ctypes; no CUDA Python package needed),
exactly as ``libnvfp4_runtime`` does (docs/Runtime.md), for launchers that
run bundles themselves (integration_test/run_cases.py, bench/run_bench.py)::

    import nvfp4_tensormap as tm
    for p in kernel["params"]:
        if p["type"] == "tensormap":
            args.append(tm.cupy_tensormap(p, report["buffers"], buffers))

``cupy_tensormap`` returns a CuPy uint8 array of 128 bytes (pass it as the
pointer argument; keep it alive as long as the kernel may run).
``encode(param, manifest_buffers, address)`` returns the 128 bytes for any
other way of uploading them; ``encoding(param, manifest_buffers)`` only
computes and checks the arguments (no GPU needed) and ``describe`` prints
them as ``nvfp4-run --describe`` does.

Run as a program it needs no GPU: ``nvfp4_tensormap.py MANIFEST.json``
prints each tensor map's driver arguments in the form of ``nvfp4-run
--describe``; ``nvfp4_tensormap.py --self-test`` checks the computation.

The driver is ``libcuda.so.1`` unless ``$NVFP4_CUDA_DRIVER`` names another
library (as for libnvfp4_runtime).
"""
import collections
import ctypes
import os
import sys

__all__ = ["TensorMapError", "CudaError", "Encoding", "encoding", "describe",
           "encode", "cupy_tensormap", "load_manifest"]

MAX_RANK = 5
TENSOR_MAP_BYTES = 128
# The limits libnvfp4_runtime puts on manifests (kMaxManifestBytes,
# kMaxManifestDepth in Runtime.h): files are untrusted, and Python's json
# module recurses once per nesting level.
MAX_MANIFEST_BYTES = 64 << 20
MAX_MANIFEST_DEPTH = 64

# CUtensorMapDataType (cuda.h) and element size of each element type a
# tensor map may have; 8-bit floats are copied as bytes.
_DATA_TYPES = {
    "i8": (0, 1), "ui8": (0, 1), "f8E4M3FN": (0, 1), "f8E5M2": (0, 1),
    "i16": (1, 2), "f16": (6, 2), "bf16": (9, 2),
    "i32": (3, 4), "f32": (7, 4),
    "i64": (5, 8), "f64": (8, 8),
}
_FLOAT_DATA_TYPES = {6, 7, 8, 9}
_DATA_TYPE_NAMES = ["UINT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64",
                    "FLOAT16", "FLOAT32", "FLOAT64", "BFLOAT16"]
# Manifest spellings, in the order of cuda.h's enumerators.
_SWIZZLES = ["none", "32B", "64B", "128B"]
_SWIZZLE_NAMES = ["SWIZZLE_NONE", "SWIZZLE_32B", "SWIZZLE_64B",
                  "SWIZZLE_128B"]
_L2_PROMOTIONS = ["none", "64B", "128B", "256B"]
_L2_PROMOTION_NAMES = ["L2_PROMOTION_NONE", "L2_PROMOTION_L2_64B",
                       "L2_PROMOTION_L2_128B", "L2_PROMOTION_L2_256B"]
_OOB_FILLS = ["zero", "nan"]
_OOB_FILL_NAMES = ["FLOAT_OOB_FILL_NONE",
                   "FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"]
# Element sizes of the manifest's buffer element types.
_BUFFER_ELEMENT_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
                         "index": 8, "f16": 2, "bf16": 2, "f32": 4,
                         "f64": 8, "f8E4M3FN": 1, "f8E5M2": 1}


class TensorMapError(ValueError):
    """A tensormap parameter the driver would reject, or that does not fit
    its buffer."""


class CudaError(RuntimeError):
    """cuTensorMapEncodeTiled (or loading the driver) failed."""


# The arguments of cuTensorMapEncodeTiled after the descriptor and the
# global address, innermost dimension first; enumerations are cuda.h's
# values (interleave is always CU_TENSOR_MAP_INTERLEAVE_NONE = 0).
Encoding = collections.namedtuple(
    "Encoding", "data_type rank global_dim global_strides box_dim "
                "element_strides interleave swizzle l2_promotion oob_fill")


def _choice(param, key, names, default):
    value = param.get(key, default)
    if value not in names:
        raise TensorMapError(
            f"unknown {key} {value!r} (expected "
            + ", ".join(f'"{n}"' for n in names) + ")")
    return names.index(value)


def _int_list(param, key):
    value = param.get(key)
    if (not isinstance(value, list) or
            not all(isinstance(v, int) and not isinstance(v, bool)
                    for v in value)):
        raise TensorMapError(f'"{key}" must be an array of integers')
    return value


def encoding(param, manifest_buffers=None):
    """The cuTensorMapEncodeTiled arguments of manifest parameter `param` (a
    dict with "type": "tensormap"), checked against the driver's rules and,
    given the manifest's "buffers" list, against its buffer's size. Raises
    TensorMapError. Needs no GPU."""
    buffer = param.get("buffer")
    buffer_spec = None
    if manifest_buffers is not None:
        if not isinstance(buffer, int) or not 0 <= buffer < len(manifest_buffers):
            raise TensorMapError(f"buffer {buffer} does not exist (there are "
                                 f"{len(manifest_buffers)} buffers)")
        buffer_spec = manifest_buffers[buffer]
    element_type = param.get("element_type")
    if element_type is None and buffer_spec is not None:
        element_type = buffer_spec["element_type"]
    if element_type not in _DATA_TYPES:
        raise TensorMapError(f"tensor maps of {element_type} elements are "
                             f"not supported")
    data_type, element_bytes = _DATA_TYPES[element_type]
    dims = _int_list(param, "dims")
    box = _int_list(param, "box")
    swizzle = _choice(param, "swizzle", _SWIZZLES, "none")
    l2_promotion = _choice(param, "l2_promotion", _L2_PROMOTIONS, "none")
    oob_fill = _choice(param, "oob_fill", _OOB_FILLS, "zero")

    rank = len(dims)
    if not 1 <= rank <= MAX_RANK:
        raise TensorMapError(f'"dims" has {rank} entries; a tensor map has 1 '
                             f'to {MAX_RANK} dimensions')
    if len(box) != rank:
        raise TensorMapError(f'"box" has {len(box)} entries, "dims" {rank}')
    for i, (d, b) in enumerate(zip(dims, box)):
        if not 1 <= d <= 2 ** 32:
            raise TensorMapError(f"dims[{i}] = {d} is not in [1, 2^32]")
        if not 1 <= b <= 256:
            raise TensorMapError(f"box[{i}] = {b} is not in [1, 256]")
    global_dim = list(reversed(dims))
    box_dim = list(reversed(box))
    # globalStrides[i]: bytes between consecutive indices of (innermost-
    # first) dimension i + 1 of the dense row-major array.
    global_strides = []
    stride = element_bytes
    for i in range(rank - 1):
        stride *= global_dim[i]
        if stride >= 2 ** 40:
            raise TensorMapError(f"the byte stride of dims[{rank - 2 - i}] is "
                                 f"2^40 or more; TMA needs less")
        if stride % 16:
            raise TensorMapError(f"the byte stride of dims[{rank - 2 - i}] is "
                                 f"{stride}; TMA needs a multiple of 16")
        global_strides.append(stride)
    inner_box_bytes = box_dim[0] * element_bytes
    if inner_box_bytes % 16:
        raise TensorMapError(f"the inner box dimension box[{rank - 1}] = "
                             f"{box_dim[0]} is {inner_box_bytes} bytes; TMA "
                             f"needs a multiple of 16")
    span = (0, 32, 64, 128)[swizzle]
    if span and inner_box_bytes > span:
        raise TensorMapError(f"the inner box dimension box[{rank - 1}] = "
                             f"{box_dim[0]} is {inner_box_bytes} bytes, more "
                             f"than the {_SWIZZLES[swizzle]} swizzle span")
    if oob_fill == 1 and data_type not in _FLOAT_DATA_TYPES:
        raise TensorMapError(f'oob_fill "nan" needs a floating-point element '
                             f'type, not {element_type}')
    if buffer_spec is not None:
        elements = 1
        for d in dims:
            elements *= d
        buffer_bytes = (buffer_spec["elements"] *
                        _BUFFER_ELEMENT_BYTES[buffer_spec["element_type"]])
        if elements * element_bytes != buffer_bytes:
            shown = "i8" if element_type == "ui8" else element_type
            raise TensorMapError(
                f"tensormap dims [{', '.join(map(str, dims))}] hold {elements}"
                f" x {shown}, but buffer {buffer} is {buffer_spec['elements']}"
                f" x {buffer_spec['element_type']} ({buffer_bytes} bytes)")
    return Encoding(data_type, rank, global_dim, global_strides, box_dim,
                    [1] * rank, 0, swizzle, l2_promotion, oob_fill)


def describe(e):
    """The arguments as libnvfp4_runtime's describe() prints them."""
    def lst(values):
        return "[" + ", ".join(str(v) for v in values) + "]"
    return (f"cuTensorMapEncodeTiled({_DATA_TYPE_NAMES[e.data_type]}, rank "
            f"{e.rank}, globalDim {lst(e.global_dim)}, globalStrides "
            f"{lst(e.global_strides)}, boxDim {lst(e.box_dim)}, "
            f"elementStrides {lst(e.element_strides)}, INTERLEAVE_NONE, "
            f"{_SWIZZLE_NAMES[e.swizzle]}, "
            f"{_L2_PROMOTION_NAMES[e.l2_promotion]}, "
            f"{_OOB_FILL_NAMES[e.oob_fill]})")


_driver = None


def _load_driver():
    """libcuda with cuInit called and the two prototypes declared."""
    global _driver
    if _driver is not None:
        return _driver
    name = os.environ.get("NVFP4_CUDA_DRIVER") or "libcuda.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError as e:
        raise CudaError(f"no CUDA device: the CUDA driver library could not "
                        f"be loaded ({e})") from None
    if not hasattr(lib, "cuTensorMapEncodeTiled"):
        raise CudaError(f"the CUDA driver {name} has no "
                        f"cuTensorMapEncodeTiled (CUDA 12.0 or newer needs "
                        f"it)")
    u64p = ctypes.POINTER(ctypes.c_uint64)
    u32p = ctypes.POINTER(ctypes.c_uint32)
    lib.cuTensorMapEncodeTiled.restype = ctypes.c_int
    lib.cuTensorMapEncodeTiled.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
        u64p, u64p, u32p, u32p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
        ctypes.c_int]
    lib.cuGetErrorName.restype = ctypes.c_int
    lib.cuGetErrorName.argtypes = [ctypes.c_int,
                                   ctypes.POINTER(ctypes.c_char_p)]
    lib.cuInit.restype = ctypes.c_int
    lib.cuInit.argtypes = [ctypes.c_uint]
    result = lib.cuInit(0)
    if result:
        raise CudaError(f"no CUDA device: {_error_name(lib, result)} from "
                        f"cuInit")
    _driver = lib
    return lib


# Names of the errors most likely from a driver that cannot name them (the
# stub library answers cuGetErrorName with CUDA_ERROR_STUB_LIBRARY too).
_FALLBACK_ERROR_NAMES = {1: "CUDA_ERROR_INVALID_VALUE",
                         2: "CUDA_ERROR_OUT_OF_MEMORY",
                         3: "CUDA_ERROR_NOT_INITIALIZED",
                         34: "CUDA_ERROR_STUB_LIBRARY",
                         100: "CUDA_ERROR_NO_DEVICE"}


def _error_name(lib, result):
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(result, ctypes.byref(name)) == 0 and name.value:
        return name.value.decode()
    return _FALLBACK_ERROR_NAMES.get(result, f"CUDA error {result}")


def span_bytes(e):
    """Bytes the tensor of Encoding `e` spans in global memory: one element
    plus (dim - 1) strides of every dimension (CuTe's cosize x element
    size; libnvfp4_runtime's tensorMapSpanBytes)."""
    element = [1, 2, 4, 4, 8, 8, 2, 4, 8, 2][e.data_type]
    strides = [element] + list(e.global_strides)
    return element + sum((d - 1) * s for d, s in zip(e.global_dim, strides))


def small_tensor_workaround(descriptor, e, driver_version):
    """CUTLASS's workaround for small tensors on drivers up to 13.1
    (NVIDIA/cutlass include/cute/atom/copy_traits_sm90_tma.hpp at 7107b055,
    as libnvfp4_runtime's applySmallTensorMapWorkaround): the 128 bytes
    `descriptor` with bit 21 of their second 64-bit word cleared when
    0 < driver_version <= 13010 and the tensor spans fewer than 131072
    bytes; otherwise unchanged."""
    if not 0 < driver_version <= 13010 or span_bytes(e) >= 131072:
        return bytes(descriptor)
    word = int.from_bytes(descriptor[8:16], "little") & ~(1 << 21)
    return bytes(descriptor[:8]) + word.to_bytes(8, "little") + \
        bytes(descriptor[16:])


def _driver_version(lib):
    if not hasattr(lib, "cuDriverGetVersion"):
        return 0
    version = ctypes.c_int(0)
    lib.cuDriverGetVersion.restype = ctypes.c_int
    lib.cuDriverGetVersion.argtypes = [ctypes.POINTER(ctypes.c_int)]
    if lib.cuDriverGetVersion(ctypes.byref(version)):
        return 0
    return version.value


def encode(param, manifest_buffers, address, where="tensormap parameter"):
    """The 128-byte CUtensorMap of `param` over the device buffer at
    `address` (an int), encoded by cuTensorMapEncodeTiled. `where` names the
    parameter in messages ("kernel 'k' (launch 0) parameter 2"). Raises
    TensorMapError for a bad parameter and CudaError when the driver
    refuses."""
    try:
        e = encoding(param, manifest_buffers)
    except TensorMapError as error:
        raise TensorMapError(f"{where}: {error}") from None
    lib = _load_driver()
    # The descriptor must be 64-byte aligned on the host too.
    raw = ctypes.create_string_buffer(TENSOR_MAP_BYTES + 64)
    start = ctypes.addressof(raw)
    aligned = start + (-start) % 64
    u64s = ctypes.c_uint64 * MAX_RANK
    u32s = ctypes.c_uint32 * MAX_RANK
    result = lib.cuTensorMapEncodeTiled(
        ctypes.c_void_p(aligned), e.data_type, e.rank, ctypes.c_void_p(address),
        u64s(*e.global_dim), u64s(*e.global_strides), u32s(*e.box_dim),
        u32s(*e.element_strides), e.interleave, e.swizzle, e.l2_promotion,
        e.oob_fill)
    if result:
        raise CudaError(f"encoding the tensor map of {where} (buffer "
                        f"{param.get('buffer')} at {address:#x}, "
                        f"{describe(e)}): {_error_name(lib, result)}")
    return small_tensor_workaround(ctypes.string_at(aligned, TENSOR_MAP_BYTES),
                                   e, _driver_version(lib))


def cupy_tensormap(param, manifest_buffers, buffers, where=None):
    """A CuPy uint8 device array holding the CUtensorMap of `param` over
    `buffers[param["buffer"]]` (CuPy arrays, indexed like the manifest's
    "buffers"); pass it as the kernel's pointer argument. CuPy allocations
    are 256-byte aligned."""
    import cupy as cp
    import numpy as np
    buffer = buffers[param["buffer"]]
    blob = encode(param, manifest_buffers, buffer.data.ptr,
                  where or f"tensormap parameter over buffer "
                           f"{param['buffer']}")
    return cp.asarray(np.frombuffer(blob, np.uint8).copy())


def _nesting_depth(text, limit):
    """The deepest nesting of arrays and objects in JSON `text` (strings
    skipped), scanning until `limit` is exceeded."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif c in "]}" and depth:
            depth -= 1
    return deepest


def load_manifest(path):
    """Reads a manifest with the runtime's limits (a regular file of at most
    MAX_MANIFEST_BYTES, nested at most MAX_MANIFEST_DEPTH deep); raises
    TensorMapError with a one-line message otherwise."""
    import json
    import stat
    try:
        st = os.stat(path)
    except OSError as e:
        raise TensorMapError(f"cannot read manifest '{path}': {e.strerror}")
    if not stat.S_ISREG(st.st_mode):
        raise TensorMapError(f"cannot read manifest '{path}': not a regular "
                             f"file")
    if st.st_size > MAX_MANIFEST_BYTES:
        raise TensorMapError(f"{path}: {st.st_size} bytes; a manifest may "
                             f"have at most {MAX_MANIFEST_BYTES}")
    with open(path, "rb") as f:
        text = f.read(MAX_MANIFEST_BYTES + 1).decode("utf-8", "replace")
    if _nesting_depth(text, MAX_MANIFEST_DEPTH) > MAX_MANIFEST_DEPTH:
        raise TensorMapError(f"{path}: nested more than {MAX_MANIFEST_DEPTH} "
                             f"levels deep; a manifest needs fewer")
    try:
        report = json.loads(text)
    except ValueError as e:
        raise TensorMapError(f"{path}: not valid JSON: {e}")
    if not isinstance(report, dict):
        raise TensorMapError(f"{path}: not a JSON object")
    return report


def _describe_manifest(path):
    """The lines nvfp4-run --describe prints for each tensor map."""
    report = load_manifest(path)
    lines = []
    for kernel in report["kernels"]:
        for j, p in enumerate(kernel["params"]):
            if p.get("type") != "tensormap":
                continue
            try:
                text = describe(encoding(p, report["buffers"]))
            except TensorMapError as e:
                text = str(e)
            lines.append(f"  param {j}: {text}")
    return lines


def _self_test():
    """The argument computation on the manifest format's example and the
    rules (no GPU needed); raises AssertionError on a mismatch."""
    example = {"type": "tensormap", "element_type": "i8", "buffer": 0,
               "dims": [2, 200, 512], "box": [1, 128, 128], "swizzle": "128B",
               "l2_promotion": "256B", "oob_fill": "zero"}
    e = encoding(example, [{"element_type": "i8", "elements": 204800}])
    assert e == Encoding(0, 3, [512, 200, 2], [512, 102400], [128, 128, 1],
                         [1, 1, 1], 0, 3, 3, 0), e
    assert describe(e) == (
        "cuTensorMapEncodeTiled(UINT8, rank 3, globalDim [512, 200, 2], "
        "globalStrides [512, 102400], boxDim [128, 128, 1], elementStrides "
        "[1, 1, 1], INTERLEAVE_NONE, SWIZZLE_128B, L2_PROMOTION_L2_256B, "
        "FLOAT_OOB_FILL_NONE)"), describe(e)
    bf16 = encoding({"element_type": "bf16", "dims": [3, 40, 64],
                     "box": [1, 8, 16], "oob_fill": "nan"})
    assert (bf16.data_type, bf16.global_strides, bf16.oob_fill) == \
        (9, [128, 5120], 1), bf16
    for name, (data_type, size) in _DATA_TYPES.items():
        e = encoding({"element_type": name, "dims": [3, 40, 64],
                      "box": [1, 8, 16]})
        assert e.data_type == data_type and \
            e.global_strides == [64 * size, 40 * 64 * size], (name, e)
    assert encoding({"element_type": "f32", "dims": [4096],
                     "box": [256]}).global_strides == []

    def fails(param, fragment, buffers=None):
        try:
            encoding(param, buffers)
        except TensorMapError as error:
            assert fragment in str(error), (str(error), fragment)
            return
        raise AssertionError(f"no error for {param} ({fragment})")

    i8 = {"element_type": "i8"}
    fails(dict(i8, dims=[], box=[]), '"dims" has 0 entries')
    fails(dict(i8, dims=[1] * 5 + [16], box=[1] * 5 + [16]),
          '"dims" has 6 entries')
    fails(dict(i8, dims=[64, 64], box=[64]), '"box" has 1 entries, "dims" 2')
    fails(dict(i8, dims=[64, 0], box=[64, 16]), "dims[1] = 0 is not in")
    fails(dict(i8, dims=[512, 512], box=[257, 16]), "box[0] = 257 is not in")
    fails(dict(i8, dims=[3, 10], box=[1, 16]),
          "the byte stride of dims[0] is 10; TMA needs a multiple of 16")
    fails(dict(i8, dims=[2, 2 ** 32, 512], box=[1, 1, 16]),
          "the byte stride of dims[0] is 2^40 or more")
    fails({"element_type": "bf16", "dims": [64, 64], "box": [8, 4]},
          "box[1] = 4 is 8 bytes; TMA needs a multiple of 16")
    fails(dict(i8, dims=[64, 256], box=[64, 256], swizzle="128B"),
          "is 256 bytes, more than the 128B swizzle span")
    fails(dict(i8, dims=[64, 64], box=[64, 64], oob_fill="nan"),
          'oob_fill "nan" needs a floating-point element type, not i8')
    fails(dict(i8, dims=[64, 64], box=[64, 64], swizzle="96B"),
          "unknown swizzle '96B'")
    fails(dict(i8, dims=[64, 64], box=[64, 64], l2_promotion="32B"),
          "unknown l2_promotion '32B'")
    fails(dict(i8, dims=[64, 64], box=[64, 64], oob_fill="ones"),
          "unknown oob_fill 'ones'")
    fails({"element_type": "i1", "dims": [64], "box": [64]},
          "tensor maps of i1 elements are not supported")
    fails(dict(i8, buffer=0, dims=[4, 64, 64], box=[1, 64, 64]),
          "tensormap dims [4, 64, 64] hold 16384 x i8, but buffer 0 is 8192 "
          "x i8 (8192 bytes)", [{"element_type": "i8", "elements": 8192}])
    fails(dict(i8, buffer=1, dims=[64], box=[64]), "buffer 1 does not exist",
          [{"element_type": "i8", "elements": 64}])
    # The small-tensor workaround: 65536 bytes is small, 204800 and
    # exactly 131072 are not; only bit 21 of word 1 changes, and only for
    # drivers up to 13010.
    small = encoding(dict(i8, dims=[1, 128, 512], box=[1, 128, 128]))
    assert span_bytes(small) == 65536
    assert span_bytes(encoding(example, None)) == 204800
    assert span_bytes(encoding({"element_type": "f16", "dims": [256, 256],
                                "box": [64, 64]})) == 131072
    blob = bytes((0xA5 ^ i) | (0x20 if i == 10 else 0) for i in range(128))
    cleared = small_tensor_workaround(blob, small, 13010)
    assert cleared[10] == blob[10] & ~0x20 and \
        cleared[:10] + cleared[11:] == blob[:10] + blob[11:], cleared
    assert (int.from_bytes(cleared[8:16], "little") >> 21) & 1 == 0
    for version in (0, 13020):
        assert small_tensor_workaround(blob, small, version) == blob
    assert small_tensor_workaround(blob, encoding(example, None), 13000) == blob
    assert _nesting_depth('{"a": [[1], {"b": "[[[["}]}', 64) == 3
    assert _nesting_depth('"\\"[[" [[]]', 64) == 2
    assert _nesting_depth("[" * 100000, 64) == 65
    return True


def main(argv):
    if argv[1:] == ["--self-test"]:
        _self_test()
        print("nvfp4_tensormap self-test passed")
        return 0
    if len(argv) != 2 or argv[1].startswith("-"):
        print(f"usage: {argv[0]} MANIFEST.json | --self-test", file=sys.stderr)
        return 2
    try:
        lines = _describe_manifest(argv[1])
    except TensorMapError as e:
        print(f"nvfp4_tensormap.py: error: {e}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
