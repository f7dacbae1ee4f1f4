"""Bit-exact NVFP4 reference numerics.

NVFP4 stores a tensor as 4-bit E2M1 elements, one E4M3 scale per block of 16
elements (1x16 along the last dimension, or 16x16 tiles over the last two
dimensions) and one FP32 tensor amax. This package is a thin layer over the
project's C++ numerics library (docs/Numerics.md describes the algorithm), so
its bytes are the ones the compiler's reference lowering and GPU kernels must
reproduce.

Inputs are numpy arrays: float32 (FP32 input, as nvfp4.quantize on
tensor<...xf32>: no rounding to bfloat16 first), float16, ml_dtypes.bfloat16
(where ml_dtypes is installed), or uint16 holding bfloat16 bit patterns. The
Hadamard transform is defined on bfloat16 and takes float32/float16 only
when the values are bfloat16-representable. The last dimension is the
contraction dimension; leading dimensions are batch/row dimensions. Invalid
input raises ValueError (MemoryError when a contiguous copy of the input
cannot be made).

The OCP Microscaling members of the family are there too:
quantize(x, format="mxfp8_e4m3" | "mxfp8_e5m2" | "mxfp4") gives one E8M0
scale per 32 elements and no tensor scale (docs/Numerics.md section 11).
"""

import numpy as _np

_extension_missing = False
try:
    from . import _nvfp4
except ImportError as _error:
    _extension_missing = True
    # The extension is built for one Python (Debian's 3.11). Elsewhere -- a
    # GPU machine whose Python differs -- the pure-Python parts
    # (nvfp4.layer_kernels, nvfp4.torch) still import; the numerics raise.
    import sys as _sys

    class _MissingExtension:
        DEFAULT_SIGN_MASK = 0xD7E8
        _reason = "{} (this is Python {}.{}; the extension is built for the " \
            "build machine's Python)".format(_error, *_sys.version_info[:2])

        def __getattr__(self, name):
            raise ImportError("nvfp4's numerics extension (nvfp4._nvfp4) "
                              "cannot be loaded here: " + self._reason)

    _nvfp4 = _MissingExtension()

__all__ = [
    "DEFAULT_SIGN_MASK",
    "FORMATS",
    "__version__",
    "QuantizedTensor",
    "compile",
    "dequantize",
    "hadamard",
    "pack",
    "quantize",
    "scaled_matmul",
    "swizzle_scales",
    "unpack",
    "unswizzle_scales",
]

#: Sign vector of the 16-point Random Hadamard Transform (TE's default).
DEFAULT_SIGN_MASK = _nvfp4.DEFAULT_SIGN_MASK

#: The block-scaled formats quantize() accepts (the IR's format names).
FORMATS = ("nvfp4", "mxfp8_e4m3", "mxfp8_e5m2", "mxfp4")

if _extension_missing:
    def __getattr__(name):
        # Without the extension, nvfp4.__version__ raises the extension's
        # ImportError when it is read, not when nvfp4 is imported.
        if name == "__version__":
            return _nvfp4.__version__
        raise AttributeError(
            "module 'nvfp4' has no attribute {!r}".format(name))
else:
    #: The nvfp4 version this module was built from (as nvfp4-compile
    #: --version).
    __version__ = _nvfp4.__version__


def _frozen(array, copy=True):
    if copy:
        array = _np.array(array, copy=True)
    array.setflags(write=False)
    return array


def _check_format(format):
    if not isinstance(format, str) or format not in FORMATS:
        raise ValueError(
            "format must be one of {}, got {!r}".format(
                ", ".join('"{}"'.format(f) for f in FORMATS), format))
    return format


class QuantizedTensor:
    """A block-scaled tensor: NVFP4, MXFP8 or MXFP4.

    Attributes:
      codes:  uint8 array, one element code per element, same shape as the
              quantized input: an E2M1 code (0..15, bit 3 = sign) for nvfp4
              and mxfp4, the E4M3 / E5M2 byte for mxfp8_e4m3 / mxfp8_e5m2.
      scales: uint8 array, one scale per block, linear (row-major) layout:
              E4M3 bits of shape x.shape[:-1] + (n/16,) for 1x16 blocks and
              x.shape[:-2] + (m/16, n/16) for 16x16 blocks (nvfp4); E8M0
              bits of shape x.shape[:-1] + (n/32,) for the MX formats.
      amax:   the FP32 tensor amax (a Python float holding an fp32 value);
              None for the MX formats, which have no tensor scale, and for
              a tensor built from a checkpoint's decode scale.
      decode_scale: the FP32 decode scale exactly as a checkpoint stores it
              (ModelOpt's weight_scale_2), or None. When set, elements decode
              as e2m1 * scale * decode_scale and amax is unused: no amax
              reproduces every decode scale through amax / 2688.
      block:  (1, 16) or (16, 16) for nvfp4, (1, 32) for the MX formats.
      format: "nvfp4", "mxfp8_e4m3", "mxfp8_e5m2" or "mxfp4".
      shape:  the tensor shape (codes.shape).
      packed: the 4-bit codes two per byte, element 2i in the low nibble of
              byte i (shape x.shape[:-1] + (n/2,)); nvfp4 and mxfp4 only.

    The arrays are read-only copies, so a validated tensor stays valid. Build
    one from parts (for example a checkpoint quantized elsewhere) with
    QuantizedTensor(codes, scales, amax, block) for nvfp4 (or
    QuantizedTensor(codes, scales, block=..., decode_scale=d) with a
    checkpoint's decode scale), or QuantizedTensor(codes, scales,
    format=...) for the MX formats; the parts are validated.
    """

    __slots__ = ("_codes", "_scales", "_amax", "_block", "_format",
                 "_decode_scale")

    def __init__(self, codes, scales, amax=None, block=None, format="nvfp4",
                 decode_scale=None):
        _check_format(format)
        if format == "nvfp4":
            if amax is None and decode_scale is None:
                raise ValueError("an nvfp4 tensor needs its amax or a decode "
                                 "scale")
            block = (1, 16) if block is None else block
            _nvfp4.check_parts(codes, scales, amax, block, decode_scale)
        else:
            _check_mx_options(format, block, amax)
            if decode_scale is not None:
                raise ValueError("{} has no tensor scale: decode_scale must "
                                 "be None, got {!r}".format(format,
                                                            decode_scale))
            _nvfp4.check_mx_parts(codes, scales, format)
        self._init(codes, scales, amax, block, format, decode_scale=decode_scale)

    def _init(self, codes, scales, amax, block, format, copy=True,
              decode_scale=None):
        self._codes = _frozen(codes, copy)
        self._scales = _frozen(scales, copy)
        self._format = format
        self._decode_scale = None
        if format == "nvfp4":
            self._amax = None if amax is None else float(_np.float32(amax))
            if decode_scale is not None:
                self._decode_scale = float(_np.float32(decode_scale))
            self._block = (int(block[0]), int(block[1]))
        else:
            self._amax = None
            self._block = (1, 32)

    @classmethod
    def _from_validated(cls, codes, scales, amax, block, format="nvfp4",
                        decode_scale=None):
        # The arrays come fresh from the extension: no need to copy them.
        tensor = cls.__new__(cls)
        tensor._init(codes, scales, amax, block, format, copy=False,
                     decode_scale=decode_scale)
        return tensor

    @property
    def decode_scale(self):
        return self._decode_scale

    @property
    def codes(self):
        return self._codes

    @property
    def scales(self):
        return self._scales

    @property
    def amax(self):
        return self._amax

    @property
    def block(self):
        return self._block

    @property
    def format(self):
        return self._format

    @property
    def shape(self):
        return self._codes.shape

    @property
    def packed(self):
        if self._format.startswith("mxfp8"):
            raise ValueError("packed is for 4-bit codes; {} codes are one "
                             "byte each already".format(self._format))
        return _nvfp4.pack(self._codes)

    def __repr__(self):
        if self._format != "nvfp4":
            return "QuantizedTensor(shape={}, format={!r})".format(
                self.shape, self._format)
        if self._decode_scale is not None:
            return ("QuantizedTensor(shape={}, block={}, decode_scale={!r})"
                    .format(self.shape, self.block, self._decode_scale))
        return "QuantizedTensor(shape={}, block={}, amax={!r})".format(
            self.shape, self.block, self.amax
        )


def _check_mx_options(format, block, amax, rounding="rn"):
    if block is not None and (not isinstance(block, (tuple, list))
                              or tuple(block) != (1, 32)):
        raise ValueError("{} has 1x32 blocks: block must be (1, 32) or "
                         "omitted, got {!r}".format(format, block))
    if amax is not None:
        raise ValueError("{} has no tensor scale: amax must be None, got "
                         "{!r}".format(format, amax))
    if rounding != "rn":
        raise ValueError("{} supports rounding=\"rn\" only, got {!r}"
                         .format(format, rounding))


def quantize(x, block=None, rounding="rn", seed=0, amax=None,
             format="nvfp4"):
    """Quantizes x to NVFP4 with TransformerEngine's exact order of operations.

    Args:
      x: float32 (FP32 input, not rounded to bfloat16), float16,
         ml_dtypes.bfloat16 or uint16 (bfloat16 bit patterns) array; last
         dimension a multiple of 16 (and, for 16x16 blocks, the
         second-to-last too).
      block: (1, 16) (the default) or (16, 16) for nvfp4; (1, 32) (the
         default) for the MX formats.
      rounding: "rn" (round to nearest even) or "sr" (stochastic rounding
         with Philox4x32-10 random bits keyed by seed and the element's flat
         C-order index; see docs/Numerics.md).
      seed: integer in [0, 2**64), used by "sr".
      amax: optional tensor amax to use instead of max|x| (>= 0, inf allowed);
         nvfp4 only.
      format: "nvfp4" (default), "mxfp8_e4m3", "mxfp8_e5m2" or "mxfp4". The
         MX formats scale each 1x32 block by 2^ceil(log2(bamax / max_elem))
         (TransformerEngine's rule) and round to nearest even.

    Returns:
      A QuantizedTensor.
    """
    _check_format(format)
    if format != "nvfp4":
        _check_mx_options(format, block, amax, rounding)
        codes, scales = _nvfp4.quantize_mx(x, format)
        return QuantizedTensor._from_validated(codes, scales, None, None,
                                               format)
    block = (1, 16) if block is None else block
    codes, scales, tensor_amax = _nvfp4.quantize(x, block, rounding, seed, amax)
    return QuantizedTensor._from_validated(codes, scales, tensor_amax, block)


def _require_quantized(value, name):
    if not isinstance(value, QuantizedTensor):
        raise ValueError(
            "{} must be an nvfp4.QuantizedTensor, got {}".format(
                name, type(value).__name__
            )
        )


def dequantize(q):
    """Returns the float32 array e2m1(code) * scale * (amax / 2688) (nvfp4;
    e2m1(code) * scale * decode_scale when the tensor carries a checkpoint's
    decode scale), or elem(code) * 2^(scale - 127) (MX formats)."""
    _require_quantized(q, "q")
    if q.format != "nvfp4":
        return _nvfp4.dequantize_mx(q.codes, q.scales, q.format)
    return _nvfp4.dequantize(q.codes, q.scales, q.amax, q.block,
                             q.decode_scale)


def hadamard(x, sign_mask=DEFAULT_SIGN_MASK):
    """16-point Random Hadamard Transform along the last dimension.

    Each run v of 16 elements becomes v @ (diag(sign) @ H16 / 4), computed
    as the FP32 fast Walsh-Hadamard butterfly (sign flips, stages h = 1, 2,
    4, 8 of (a + b, a - b) on pairs (i, i + h), times 0.25) and rounded to
    bfloat16; it equals the exact product whenever the FP32 sums are exact.
    Takes bfloat16 values: float32 or float16 arrays of
    bfloat16-representable values, ml_dtypes.bfloat16, or uint16 bit
    patterns. Returns float32 values for float32/float16 input, and bit
    patterns of the input's dtype (uint16 or ml_dtypes.bfloat16) otherwise.
    """
    return _nvfp4.hadamard(x, sign_mask)


def swizzle_scales(scales, block=(1, 16)):
    """Converts a 2-D (rows, scale_cols) uint8 scale matrix to the 128x4
    swizzled layout used by Blackwell tensor cores and cuBLASLt.

    Tensor cores read one scale per row and 16 columns. With block=(1, 16)
    (the default) `scales` has one row per tensor row. With block=(16, 16),
    `scales` is the tile-scale matrix of a 16x16-block tensor (one row per 16
    tensor rows, as QuantizedTensor.scales) and each of its rows is
    replicated into the 16 tensor rows it covers first, as
    `nvfp4.swizzle_scales` does in IR. Rows are then padded to a multiple of
    128 and columns to a multiple of 4 with zeros. Returns a 1-D uint8 array
    of padded_rows * padded_cols bytes (a byte buffer: its blocked layout
    has no meaningful 2-D shape).
    """
    rows = _nvfp4.block_rows(block)
    if rows != 1:
        if not isinstance(scales, _np.ndarray) or scales.ndim != 2:
            raise ValueError(
                "scales must be a 2-D (rows, scale_cols) array, got {}".format(
                    getattr(scales, "shape", type(scales).__name__)))
        scales = _np.repeat(scales, rows, axis=0)
    return _nvfp4.swizzle_scales(scales)


def unswizzle_scales(swizzled, rows, cols):
    """Inverse of swizzle_scales: returns the (rows, cols) linear matrix."""
    return _nvfp4.unswizzle_scales(swizzled, rows, cols)


def pack(codes):
    """Packs E2M1 codes two per byte (element 2i in the low nibble)."""
    return _nvfp4.pack(codes)


def unpack(packed):
    """Inverse of pack."""
    return _nvfp4.unpack(packed)


def scaled_matmul(a, b, alpha=1.0):
    """Reference block-scaled GEMM: alpha * dequant(a) @ dequant(b).T.

    a is (M, K) and b is (N, K), both quantized along K. FP32 accumulation in
    the order of docs/Numerics.md (per 16-block partial sums, then scaled and
    added in block order); the tensor amaxes enter through TE's alpha.
    Returns a float32 (M, N) array.
    """
    _require_quantized(a, "a")
    _require_quantized(b, "b")
    if (a.format == "nvfp4") != (b.format == "nvfp4"):
        raise ValueError("a and b must both be nvfp4 or both MX formats, got "
                         "{} and {}".format(a.format, b.format))
    if a.format != "nvfp4":
        return _nvfp4.scaled_matmul_mx(a.codes, a.scales, a.format, b.codes,
                                       b.scales, b.format, alpha)
    return _nvfp4.scaled_matmul(
        a.codes, a.scales, a.amax, a.block,
        b.codes, b.scales, b.amax, b.block, alpha,
        a.decode_scale, b.decode_scale,
    )


def _format_entries(formats):
    """formats= of compile() as nvfp4-assign-precision's entries."""
    from .layer_kernels import format_entries
    return format_entries(formats)


def compile(mlir_text, chip="sm_103a", emit="ptx", keep_first=None,
            keep_last=None, report=False, formats=None):
    """Compiles nvfp4 IR (or annotated model IR) for one GPU.

    The nvfp4-compile path: precision assignment and the recipe (model IR),
    GPU kernels, LLVM's NVPTX backend, and ptxas when it is installed.

    Args:
      mlir_text: the module, as MLIR text.
      chip: "sm_103a" (GB300, default), "sm_100a", "sm_120a" or "sm_90a".
      emit: "ptx" (default), "cubin" (needs ptxas), "llvm" or "mlir".
      keep_first, keep_last: transformer blocks kept in BF16 (model IR).
         None: the paper's 2 and 8 of 62 blocks, scaled down for shallower
         models (as nvfp4-compile without --keep-first/--keep-last).
      report: also return the kernel manifest (kernels, buffers, precision,
         and "host_computation": what the host function leaves on the host);
         host code the manifest cannot describe is then an error.
      formats: the block-scaled format per layer kind (model IR), as
         nvfp4-assign-precision's formats= / nvfp4-compile --formats: a dict
         such as {"attention": "mxfp8", "ffn": "nvfp4"} (the key None or ""
         sets the default for the kinds not listed), the same as a str
         "attention=mxfp8,ffn=nvfp4" or a list of such entries. Formats:
         "nvfp4", "mxfp8", "mxfp4", "bf16". None: NVFP4 everywhere.

    Returns:
      The PTX (or other) text -- bytes for "cubin" -- or (output, report
      dict) when report=True.

    Raises:
      ValueError: with the compiler's diagnostics, for invalid IR, an
      unsupported chip or op, or a missing ptxas for "cubin".

    Warns (RuntimeWarning) when the host function keeps computation that no
    kernel covers (norms, softmax, BF16 GEMMs: the report's
    "host_computation"), as nvfp4-compile does.
    """
    if not isinstance(mlir_text, str):
        raise ValueError("mlir_text must be a str")

    def count(value, name):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("{} must be a non-negative int or None, got {!r}"
                             .format(name, value))
        return value

    import json
    from . import _compiler
    output, report_json = _compiler.compile(
        mlir_text, str(chip), str(emit), count(keep_first, "keep_first"),
        count(keep_last, "keep_last"), bool(report),
        _format_entries(formats))
    manifest = json.loads(report_json)
    left = manifest.get("host_computation")
    if left:
        import warnings
        ops = sorted({entry["op"] for entry in left})
        warnings.warn(
            "@{} leaves {} operation(s) on the host that no kernel covers "
            "({}, first at {}); the bundle is not runnable on its own".format(
                manifest.get("function", "?"), len(left), ", ".join(ops),
                left[0]["location"]), RuntimeWarning, stacklevel=2)
    return (output, manifest) if report else output
